// The operations a model graph needs, independent of where they run. The graph (model/)
// calls only this interface; the CPU backend (backend/cpu/) implements it, a CUDA backend
// (backend/cuda/, a library loaded at run time) implements it on the GPU.
//
// Memory: every tensor the graph touches lives in memory the backend owns — host memory on
// the CPU, device memory on a GPU. The graph allocates it through alloc(), copies host data
// in and out only through upload()/download() (token ids, positions and masks in; logits
// out, once per pass), and otherwise holds DevicePtr handles it never dereferences. Weights
// are made backend-resident once at load (load_weight). A pass runs between begin_pass()
// and end_pass(), so a GPU backend can enqueue it without a host round trip between layers
// (or capture it as a graph) and synchronize once.
//
// Conventions: activations are row-major f32 matrices of `n` rows (tokens, 1..64 per call)
// by `dim` columns. A weight is `rows` output features by `cols` input features, each row
// `row_bytes` long in its GGUF type (format/blocks.h).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "gguf/ggml_types.h"

namespace leapfrog {

// An address in a backend's memory. The graph may offset it but never reads through it;
// only the backend that allocated it calls get().
template <class T>
class DevicePtr {
 public:
  DevicePtr() = default;
  explicit DevicePtr(T* p) : p_(p) {}
  // DevicePtr<T> converts to DevicePtr<const T>.
  template <class U, class = std::enable_if_t<std::is_convertible_v<U*, T*>>>
  DevicePtr(const DevicePtr<U>& o) : p_(o.get()) {}
  T* get() const { return p_; }
  DevicePtr operator+(size_t n) const { return DevicePtr(p_ + n); }
  explicit operator bool() const { return p_ != nullptr; }

 private:
  T* p_ = nullptr;
};

// An allocation in a backend's memory, freed when destroyed. 64-byte aligned.
class DeviceBuffer {
 public:
  virtual ~DeviceBuffer() = default;
  virtual size_t bytes() const = 0;
  template <class T>
  DevicePtr<T> as(size_t offset_elements = 0) const {
    return DevicePtr<T>(static_cast<T*>(raw()) + offset_elements);
  }

 protected:
  virtual void* raw() const = 0;
};

// A 2-D weight matrix. As read from the file, `data` points into the GGUF mapping; after
// Backend::load_weight, into the backend's memory (which may be the mapping itself on the
// CPU).
struct WeightView {
  GgmlType type = GgmlType::F32;
  const uint8_t* data = nullptr;
  int64_t rows = 0;  // output features (GGUF ne[1])
  int64_t cols = 0;  // input features (GGUF ne[0], the contiguous dimension)
  size_t row_bytes = 0;
  // The same weight rearranged by the backend for its kernels, or null. When set, matmul
  // reads it instead of `data`; `data` stays valid for row lookups (get_rows).
  const uint8_t* packed = nullptr;
  const uint8_t* row(int64_t r) const { return data + static_cast<size_t>(r) * row_bytes; }
};

// A weight made resident by a backend: the view its kernels read, and the memory behind it
// (none when the backend reads the file's mapping in place).
struct ResidentWeight {
  WeightView view;
  std::unique_ptr<DeviceBuffer> memory;
};

// The first 64-byte aligned address at or after p (buffers over-allocated by 64 bytes).
inline uint8_t* align64(uint8_t* p) { return p + (64 - reinterpret_cast<uintptr_t>(p) % 64) % 64; }

enum class RopeStyle {
  Normal,  // rotates adjacent pairs (x[2i], x[2i+1]): llama
  NeoX,    // rotates (x[i], x[i + n_dims/2]): qwen2, qwen3
};

struct RopeParams {
  RopeStyle style = RopeStyle::Normal;
  int n_dims = 0;           // rotated dimensions per head (<= head_dim; the rest pass through)
  float freq_base = 10000;  // theta
  float freq_scale = 1;     // 1 / scaling factor (linear and YaRN)
  // YaRN (rope.scaling.type yarn): per rotated pair, the angle blends the interpolated
  // (freq_scale * theta) and the original (theta) angle by a ramp over the pairs between the
  // correction dimensions that beta_fast / beta_slow pick for a context of n_ctx_orig, and
  // cos/sin are multiplied by attn_factor * (1 + 0.1 ln(1 / freq_scale)). ext_factor 0 (no
  // YaRN) leaves the plain angle, cos/sin times attn_factor.
  float ext_factor = 0;
  float attn_factor = 1;
  float beta_fast = 32;
  float beta_slow = 1;
  int n_ctx_orig = 0;  // the context length the model was trained for before scaling
};

// The first and last rotated pair index over which YaRN ramps from extrapolation to
// interpolation (llama.cpp's correction dimensions), as floats.
struct YarnCorrDims {
  float low = 0, high = 0;
};
// Inline: the CUDA library (its own .cu sources only) computes them on the host too.
inline YarnCorrDims yarn_corr_dims(const RopeParams& p) {
  // The pair index whose wavelength makes `rotations` turns over the original context.
  const auto dim = [&](float rotations) {
    return p.n_dims * std::log(p.n_ctx_orig / (rotations * 2 * 3.14159265358979323846f)) /
           (2 * std::log(p.freq_base));
  };
  YarnCorrDims d;
  d.low = std::max(0.0f, std::floor(dim(p.beta_fast)));
  d.high = std::min(static_cast<float>(p.n_dims - 1), std::ceil(dim(p.beta_slow)));
  return d;
}

// The factor on cos and sin: YaRN's magnitude correction (llama.cpp's rope_yarn), else
// attn_factor alone.
inline float rope_mscale(const RopeParams& p) {
  return p.ext_factor != 0 ? p.attn_factor * (1.0f + 0.1f * std::log(1.0f / p.freq_scale))
                           : p.attn_factor;
}

// YaRN's blend weight of the original angle for rotated element i0 (even): 1 below `low`,
// 0 above `high`, linear between (times ext_factor by the caller).
inline float yarn_ramp(const YarnCorrDims& d, int i0) {
  const float y = (i0 / 2 - d.low) / std::max(0.001f, d.high - d.low);
  return 1 - std::min(1.0f, std::max(0.0f, y));
}

// Key/value storage for one sequence: per layer, `n_ctx` positions of `kv_dim`
// (= n_kv_heads * head_dim) values. Stored as f16, like llama.cpp's default cache type:
// half the memory traffic of f32 and the same rounding as the reference implementation.
struct KvLayout {
  int n_layers = 0;
  int n_ctx = 0;
  int n_kv_heads = 0;
  int head_dim = 0;
  int kv_dim() const { return n_kv_heads * head_dim; }
};

class KvStorage {
 public:
  virtual ~KvStorage() = default;
  virtual const KvLayout& layout() const = 0;
  // Writes `n` rows of K and V (f32, n x kv_dim, backend memory) for `layer` at positions
  // [pos, pos+n).
  virtual void store(int layer, int pos, int n, DevicePtr<const float> k,
                     DevicePtr<const float> v) = 0;
  // Copies position `from` to `to` in every layer (compacting an accepted tree branch).
  virtual void move(int from, int to) = 0;
};

struct AttentionArgs {
  DevicePtr<const float> q;  // n x (n_heads * head_dim), RoPE already applied
  int n = 0;                 // query rows
  int n_heads = 0;
  int layer = 0;
  int kv_len = 0;                  // cache positions [0, kv_len) are visible (subject to mask)
  DevicePtr<const int32_t> q_pos;  // absolute position of each query row (causal mask)
  // Optional n x kv_len mask (nonzero = may attend). When null the mask is causal:
  // row i attends to positions <= q_pos[i]. A token tree passes its ancestor mask here.
  DevicePtr<const uint8_t> mask;
  float scale = 1;       // usually 1/sqrt(head_dim)
  DevicePtr<float> out;  // n x (n_heads * head_dim)
  // Beyond llama (backends whose supports_arch_ops() is true):
  float softcap = 0;  // > 0: each scaled score s becomes softcap * tanh(s / softcap) (gemma2)
  int window = 0;     // > 0: row i sees only cache slots p with q_pos[i] - p < window
};

// The shape of one forward pass, announced before its ops (a GPU backend may key a
// captured graph on it).
struct PassShape {
  int n = 0;          // tokens in the batch
  int kv_len = 0;     // cache positions visible after the pass
  bool tree = false;  // a mask is given
};

class Backend {
 public:
  virtual ~Backend() = default;
  // For example "cpu:avx512" or "cuda:NVIDIA H200": where the kernels run.
  virtual std::string name() const = 0;
  virtual int threads() const = 0;

  // ---- memory
  virtual std::unique_ptr<DeviceBuffer> alloc(size_t bytes) = 0;
  virtual void upload(DevicePtr<void> dst, const void* src, size_t bytes) = 0;
  // Waits for the work that produces `src`, then copies it to host memory.
  virtual void download(void* dst, DevicePtr<const void> src, size_t bytes) = 0;
  template <class T>
  void upload(DevicePtr<T> dst, const T* src, size_t count) {
    upload(DevicePtr<void>(const_cast<std::remove_const_t<T>*>(dst.get())), src, count * sizeof(T));
  }
  template <class T>
  void download(T* dst, DevicePtr<const T> src, size_t count) {
    download(static_cast<void*>(dst), DevicePtr<const void>(src.get()), count * sizeof(T));
  }
  // `src` as a host address, once the work producing it is done, when this backend's
  // memory is host memory (then results need no copy); null otherwise.
  virtual const void* host_address(DevicePtr<const void> src) { return nullptr; }
  // The weight in this backend's memory and layout (llama.cpp calls the layout change
  // repacking: e.g. rows interleaved so one vector load serves several output rows).
  // `file` points into the GGUF mapping, which outlives the result. Products are the same
  // whatever the layout, up to float rounding order; batched products stay bit-identical
  // to one-row products. A lookup table (the embedding) is only read by get_rows.
  enum class WeightUse { Products, Lookups };
  virtual ResidentWeight load_weight(const WeightView& file, WeightUse use) = 0;
  // All of one model's weights at once, so a backend can keep what it derives from them in
  // one cache per model (the CPU backend shares its packed weights between processes:
  // backend/cpu/packed_cache.h). `identity` names the exact file the views point into,
  // `path` where it lives (a newer file there replaces the older one's caches), `base` is
  // where it is mapped (GgufFile::identity, absolute_path, base); an empty identity:
  // nothing may be cached. The results are load_weight's, in order.
  struct WeightSource {
    std::string identity;
    std::string path;
    const uint8_t* base = nullptr;
  };
  struct WeightRequest {
    WeightView file;
    WeightUse use;
  };
  virtual std::vector<ResidentWeight> load_weights(const WeightSource& source,
                                                   const std::vector<WeightRequest>& weights) {
    std::vector<ResidentWeight> out;
    out.reserve(weights.size());
    for (const WeightRequest& w : weights) out.push_back(load_weight(w.file, w.use));
    return out;
  }
  // Bytes of memory free for weights and caches (SIZE_MAX when the host decides).
  virtual size_t free_memory() const { return SIZE_MAX; }

  // ---- passes
  virtual void begin_pass(const PassShape& shape) {}
  // Every op since begin_pass has been issued; results may still be in flight until a
  // download.
  virtual void end_pass() {}

  // ---- ops (all pointers in this backend's memory)
  // y[i, r] = sum_c W[r, c] * x[i, c] for i < n; x is n x w.cols, y is n x w.rows.
  virtual void matmul(const WeightView& w, DevicePtr<const float> x, int n, DevicePtr<float> y) = 0;
  // Several weights over the same input (Q/K/V, gate/up): y[j] = x * w[j]^T for j < count,
  // exactly what `count` matmul calls give. A backend may prepare the input once and run
  // all products as one parallel job.
  virtual void matmul_multi(const WeightView* const* w, const DevicePtr<float>* y, int count,
                            DevicePtr<const float> x, int n) {
    for (int j = 0; j < count; ++j) matmul(*w[j], x, n, y[j]);
  }
  // out[i, :] = dequantized row ids[i] of `table` (embedding lookup). Ids are checked by
  // the caller.
  virtual void get_rows(const WeightView& table, DevicePtr<const int32_t> ids, int n,
                        DevicePtr<float> out) = 0;
  // y = x / sqrt(mean(x^2) + eps) * w, over rows of `dim` (w may be null: no weight).
  // Works in place (y == x). `n` rows; used per head too (dim = head_dim).
  virtual void rms_norm(DevicePtr<const float> x, DevicePtr<const float> w, int n, int dim,
                        float eps, DevicePtr<float> y) = 0;
  // Rotates in place: x is n rows of n_heads * head_dim; row i at position pos[i].
  virtual void rope(DevicePtr<float> x, int n, int n_heads, int head_dim,
                    DevicePtr<const int32_t> pos, const RopeParams& p) = 0;
  // gate = silu(gate) * up over n x dim (in place into gate).
  virtual void swiglu(DevicePtr<float> gate, DevicePtr<const float> up, int n, int dim) = 0;
  // x[i, :] += b (bias broadcast over n rows of dim).
  virtual void add_bias(DevicePtr<float> x, DevicePtr<const float> b, int n, int dim) = 0;
  // x += y, elementwise over count values.
  virtual void add(DevicePtr<float> x, DevicePtr<const float> y, size_t count) = 0;

  virtual std::unique_ptr<KvStorage> create_kv(const KvLayout& layout) = 0;
  virtual void attention(KvStorage& kv, const AttentionArgs& args) = 0;

  // ---- mixture of experts (model/moe_ffn.cpp). A pass groups its rows by expert: each
  // used expert's weights (an ordinary 2-D WeightView slice of the 3-D expert tensor) are
  // multiplied once over the gathered rows routed to it, and the results are added back
  // into the rows, weighted. A backend without these refuses MoE models at load.
  virtual bool supports_moe() const { return false; }
  // out[i, :] = x[rows[i], :] for i < n; x and out have `dim` columns.
  virtual void gather_rows(DevicePtr<const float> x, DevicePtr<const int32_t> rows, int n, int dim,
                           DevicePtr<float> out) {
    throw std::runtime_error(name() + ": gather_rows is not supported");
  }
  // y[rows[i], :] += weights[i] * x[i, :] for i = 0, 1, ..., n - 1 in that order (a row
  // may repeat: its additions happen in order).
  virtual void scatter_add_rows(DevicePtr<const float> x, DevicePtr<const int32_t> rows,
                                DevicePtr<const float> weights, int n, int dim,
                                DevicePtr<float> y) {
    throw std::runtime_error(name() + ": scatter_add_rows is not supported");
  }
  // Several weights of the same `cols`, each over its own rows: y[j] = x[j] * w[j]^T with
  // n[j] rows (0 allowed), exactly what `count` matmul calls give — one parallel job for all
  // the experts of a layer on the CPU.
  virtual void matmul_grouped(const WeightView* const* w, const DevicePtr<const float>* x,
                              const int* n, const DevicePtr<float>* y, int count) {
    for (int j = 0; j < count; ++j) {
      if (n[j] > 0) matmul(*w[j], x[j], n[j], y[j]);
    }
  }

  // ---- ops of the architectures beyond llama and qwen (model/arch.h: starcoder2, granite,
  // phi3, gemma). A backend that lacks them keeps supports_arch_ops() false: the model
  // loader then refuses those architectures with one line, and these defaults never run.
  virtual bool supports_arch_ops() const { return false; }
  // y = (x - mean(x)) / sqrt(var(x) + eps) * w + b over rows of `dim` (w, b may be null).
  // Works in place (y == x).
  virtual void layer_norm(DevicePtr<const float> x, DevicePtr<const float> w,
                          DevicePtr<const float> b, int n, int dim, float eps, DevicePtr<float> y) {
    missing_op("layer_norm");
  }
  // x = gelu(x) in place over count values: the tanh approximation, looked up through f16
  // as ggml's CPU backend does.
  virtual void gelu(DevicePtr<float> x, size_t count) { missing_op("gelu"); }
  // gate = gelu(gate) * up over n x dim (in place into gate).
  virtual void geglu(DevicePtr<float> gate, DevicePtr<const float> up, int n, int dim) {
    missing_op("geglu");
  }
  // x *= s over count values.
  virtual void scale(DevicePtr<float> x, size_t count, float s) { missing_op("scale"); }
  // x = cap * tanh(x / cap) over count values (soft-capping logits).
  virtual void softcap(DevicePtr<float> x, size_t count, float cap) { missing_op("softcap"); }

  // ---- diagnostics
  // Named event counts of this backend on the calling thread (CUDA: passes run as plain
  // launches, graphs captured and replayed), for benchmarks and tests.
  virtual std::vector<std::pair<std::string, uint64_t>> counters() { return {}; }

 private:
  [[noreturn]] void missing_op(const char* op) const {
    throw std::logic_error(name() + ": op " + op + " is not implemented");
  }
};

}  // namespace leapfrog
