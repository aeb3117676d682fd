// The CPU implementation of Backend: kernels picked at run time by instruction set, work
// split across a thread pool by output rows (matmul) or by (row, head) (attention).
#pragma once
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/thread_pool.h"

namespace leapfrog {

struct CpuBackendOptions {
  int threads = 0;  // 0: number of physical cores
  // Forces an instruction set (still capped at what the CPU supports); by default the best
  // one, lowered by LEAPFROG_CPU_ISA.
  std::optional<cpu::Isa> isa;
  // Matmul through dequantized f32 weights (slow; the reference the kernels are tested
  // against).
  bool reference_matmul = false;
};

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(const CpuBackendOptions& opts = {});
  ~CpuBackend() override;

  std::string name() const override;
  int threads() const override { return pool_.size(); }
  cpu::Isa isa() const { return k_->isa; }

  std::unique_ptr<DeviceBuffer> alloc(size_t bytes) override;
  void upload(DevicePtr<void> dst, const void* src, size_t bytes) override;
  void download(void* dst, DevicePtr<const void> src, size_t bytes) override;
  using Backend::download;
  using Backend::upload;
  const void* host_address(DevicePtr<const void> src) override { return src.get(); }
  ResidentWeight load_weight(const WeightView& file, WeightUse use) override;
  // The packed weights of a whole model, mapped from the shared packed-weight cache where
  // it has them, else packed and written there (cpu_load_weights.cpp, packed_cache.h).
  std::vector<ResidentWeight> load_weights(const WeightSource& source,
                                           const std::vector<WeightRequest>& weights) override;

  void matmul(const WeightView& w, DevicePtr<const float> x, int n, DevicePtr<float> y) override;
  void matmul_multi(const WeightView* const* w, const DevicePtr<float>* y, int count,
                    DevicePtr<const float> x, int n) override;
  void get_rows(const WeightView& table, DevicePtr<const int32_t> ids, int n,
                DevicePtr<float> out) override;
  void rms_norm(DevicePtr<const float> x, DevicePtr<const float> w, int n, int dim, float eps,
                DevicePtr<float> y) override;
  void rope(DevicePtr<float> x, int n, int n_heads, int head_dim, DevicePtr<const int32_t> pos,
            const RopeParams& p) override;
  void swiglu(DevicePtr<float> gate, DevicePtr<const float> up, int n, int dim) override;
  void add_bias(DevicePtr<float> x, DevicePtr<const float> b, int n, int dim) override;
  void add(DevicePtr<float> x, DevicePtr<const float> y, size_t count) override;
  std::unique_ptr<KvStorage> create_kv(const KvLayout& layout) override;
  void attention(KvStorage& kv, const AttentionArgs& args) override;
  bool supports_moe() const override { return true; }
  void gather_rows(DevicePtr<const float> x, DevicePtr<const int32_t> rows, int n, int dim,
                   DevicePtr<float> out) override;
  void scatter_add_rows(DevicePtr<const float> x, DevicePtr<const int32_t> rows,
                        DevicePtr<const float> weights, int n, int dim,
                        DevicePtr<float> y) override;
  void matmul_grouped(const WeightView* const* w, const DevicePtr<const float>* x, const int* n,
                      const DevicePtr<float>* y, int count) override;
  // The ops beyond llama's (cpu_arch_ops.cpp).
  bool supports_arch_ops() const override { return true; }
  void layer_norm(DevicePtr<const float> x, DevicePtr<const float> w, DevicePtr<const float> b,
                  int n, int dim, float eps, DevicePtr<float> y) override;
  void gelu(DevicePtr<float> x, size_t count) override;
  void geglu(DevicePtr<float> gate, DevicePtr<const float> up, int n, int dim) override;
  void scale(DevicePtr<float> x, size_t count, float s) override;
  void softcap(DevicePtr<float> x, size_t count, float cap) override;

  // Host-memory conveniences of the CPU alone (host memory is this backend's memory).
  void matmul(const WeightView& w, const float* x, int n, float* y) {
    matmul(w, DevicePtr<const float>(x), n, DevicePtr<float>(y));
  }
  // Softmax in place over each of n rows of dim (tests' reference).
  static void softmax(float* x, int n, int dim);
  // The weight in this backend's packed layout, or null when its kernels read the file's
  // rows (load_weight uses it).
  std::unique_ptr<DeviceBuffer> pack_weight(const WeightView& w);
  // What load_weights did, model by model, since this backend was made.
  struct PackedCacheStats {
    int mapped = 0;        // packed weights mapped from an existing cache file
    int written = 0;       // packed here, written to a new cache file, then mapped
    int private_only = 0;  // packed into private memory (cache off, or it failed)
    std::string file;      // the cache file of the last model that had one
  };
  PackedCacheStats packed_cache_stats() const;

 private:
  void matmul_reference(const WeightView& w, const float* x, int n, float* y);
  void matmul_host(const WeightView* const* w, float* const* y, int count, const float* x, int n);
  // Rows [r0, r1) of w times n prepared activation rows (act, arb bytes each) into y.
  // The packed layout's entry of w when its products of several rows read the activations
  // rearranged (Kernels::Packed::tiles), else null.
  const cpu::Kernels::Packed* tiles_of(const WeightView& w) const;
  void gemm_rows(const WeightView& w, int64_t r0, int64_t r1, const uint8_t* act, size_t arb, int n,
                 float* y) const;

  // Bytes of w packed (0 when its kernels read the file's rows), and the packing itself.
  size_t packed_bytes(const WeightView& w) const;
  static size_t group_bytes(const cpu::Kernels::Packed& p, const WeightView& w);
  void pack_into(const WeightView& w, uint8_t* dst);
  // The cache key of these weights, packed_size[i] their packed bytes (0: kept as in the
  // file); cpu_load_weights.cpp says what goes in and why.
  std::string packed_cache_key(const WeightSource& source,
                               const std::vector<WeightRequest>& weights,
                               const std::vector<size_t>& packed_size) const;

  const cpu::Kernels* k_;
  bool reference_;
  cpu::ThreadPool pool_;
  mutable std::mutex stats_mu_;
  PackedCacheStats stats_;
};

}  // namespace leapfrog
