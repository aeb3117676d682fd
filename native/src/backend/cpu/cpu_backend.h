// The CPU implementation of Backend: kernels picked at run time by instruction set, work
// split across a thread pool by output rows (matmul) or by (row, head) (attention).
#pragma once
#include <memory>
#include <optional>
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

  void matmul(const WeightView& w, const float* x, int n, float* y) override;
  void matmul_multi(const WeightView* const* w, float* const* y, int count, const float* x,
                    int n) override;
  std::unique_ptr<PackedWeight> pack_weight(const WeightView& w) override;
  void get_rows(const WeightView& table, const int32_t* ids, int n, float* out) override;
  void rms_norm(const float* x, const float* w, int n, int dim, float eps, float* y) override;
  void rope(float* x, int n, int n_heads, int head_dim, const int32_t* pos,
            const RopeParams& p) override;
  void swiglu(float* gate, const float* up, int n, int dim) override;
  void add_bias(float* x, const float* b, int n, int dim) override;
  void add(float* x, const float* y, size_t count) override;
  void softmax(float* x, int n, int dim) override;
  std::unique_ptr<KvStorage> create_kv(const KvLayout& layout) override;
  void attention(KvStorage& kv, const AttentionArgs& args) override;

 private:
  void matmul_reference(const WeightView& w, const float* x, int n, float* y);

  const cpu::Kernels* k_;
  bool reference_;
  cpu::ThreadPool pool_;
};

}  // namespace leapfrog
