// The operations a model graph needs, independent of where they run. The graph (model/)
// calls only this interface; the CPU backend (backend/cpu/) implements it today, and a CUDA
// or Metal backend can implement it later without touching the graph.
//
// Conventions: activations are row-major f32 matrices of `n` rows (tokens, 1..64 per call)
// by `dim` columns. Weights are GGUF tensors in the file mapping: a weight of `rows` output
// features by `cols` input features, each row `row_bytes` long, which a backend may also
// copy once into its own layout at load (pack_weight).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "gguf/ggml_types.h"

namespace leapfrog {

// A 2-D weight matrix as stored in the GGUF file (not owned).
struct WeightView {
  GgmlType type = GgmlType::F32;
  const uint8_t* data = nullptr;
  int64_t rows = 0;  // output features (GGUF ne[1])
  int64_t cols = 0;  // input features (GGUF ne[0], the contiguous dimension)
  size_t row_bytes = 0;
  // The same weight rearranged by the backend for its kernels (Backend::pack_weight), or
  // null. When set, matmul reads it instead of `data`; `data` stays valid for row lookups.
  const uint8_t* packed = nullptr;
  const uint8_t* row(int64_t r) const { return data + static_cast<size_t>(r) * row_bytes; }
};

// The first 64-byte aligned address at or after p (buffers over-allocated by 64 bytes).
inline uint8_t* align64(uint8_t* p) { return p + (64 - reinterpret_cast<uintptr_t>(p) % 64) % 64; }

// Memory holding a weight in a backend's own layout; whoever holds the WeightView keeps it
// alive (the model, for its weights). 64-byte aligned.
class PackedWeight {
 public:
  explicit PackedWeight(size_t bytes) : mem_(new uint8_t[bytes + 64]), data_(align64(mem_.get())) {}
  uint8_t* data() const { return data_; }

 private:
  std::unique_ptr<uint8_t[]> mem_;
  uint8_t* data_;
};

enum class RopeStyle {
  Normal,  // rotates adjacent pairs (x[2i], x[2i+1]): llama
  NeoX,    // rotates (x[i], x[i + n_dims/2]): qwen2, qwen3
};

struct RopeParams {
  RopeStyle style = RopeStyle::Normal;
  int n_dims = 0;           // rotated dimensions per head (<= head_dim; the rest pass through)
  float freq_base = 10000;  // theta
  float freq_scale = 1;     // 1 / linear scaling factor
};

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
  // Writes `n` rows of K and V (f32, n x kv_dim) for `layer` at positions [pos, pos+n).
  virtual void store(int layer, int pos, int n, const float* k, const float* v) = 0;
  // Copies position `from` to `to` in every layer (compacting an accepted tree branch).
  virtual void move(int from, int to) = 0;
};

struct AttentionArgs {
  const float* q = nullptr;  // n x (n_heads * head_dim), RoPE already applied
  int n = 0;                 // query rows
  int n_heads = 0;
  int layer = 0;
  int kv_len = 0;                  // cache positions [0, kv_len) are visible (subject to mask)
  const int32_t* q_pos = nullptr;  // absolute position of each query row (causal mask)
  // Optional n x kv_len mask (nonzero = may attend). When null the mask is causal:
  // row i attends to positions <= q_pos[i]. A token tree passes its ancestor mask here.
  const uint8_t* mask = nullptr;
  float scale = 1;       // usually 1/sqrt(head_dim)
  float* out = nullptr;  // n x (n_heads * head_dim)
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  virtual int threads() const = 0;

  // y[i, r] = sum_c W[r, c] * x[i, c] for i < n; x is n x w.cols, y is n x w.rows.
  virtual void matmul(const WeightView& w, const float* x, int n, float* y) = 0;
  // Several weights over the same input (Q/K/V, gate/up): y[j] = x * w[j]^T for j < count,
  // exactly what `count` matmul calls give. A backend may prepare the input once and run
  // all products as one parallel job.
  virtual void matmul_multi(const WeightView* const* w, float* const* y, int count, const float* x,
                            int n) {
    for (int j = 0; j < count; ++j) matmul(*w[j], x, n, y[j]);
  }
  // The weight rearranged for this backend's products (llama.cpp calls this repacking: e.g.
  // rows interleaved so one vector load serves several output rows), or null when the
  // file's layout is already what its kernels read. Set the result's data() as w.packed.
  // Results are the same with or without packing, up to float rounding order; batched
  // products stay bit-identical to one-row products either way.
  virtual std::unique_ptr<PackedWeight> pack_weight(const WeightView& w) { return nullptr; }
  // out[i, :] = dequantized row ids[i] of `table` (embedding lookup).
  virtual void get_rows(const WeightView& table, const int32_t* ids, int n, float* out) = 0;
  // y = x / sqrt(mean(x^2) + eps) * w, over rows of `dim` (w may be null: no weight).
  // Works in place (y == x). `n` rows; used per head too (dim = head_dim).
  virtual void rms_norm(const float* x, const float* w, int n, int dim, float eps, float* y) = 0;
  // Rotates in place: x is n rows of n_heads * head_dim; row i at position pos[i].
  virtual void rope(float* x, int n, int n_heads, int head_dim, const int32_t* pos,
                    const RopeParams& p) = 0;
  // gate = silu(gate) * up over n x dim (in place into gate).
  virtual void swiglu(float* gate, const float* up, int n, int dim) = 0;
  // x[i, :] += b (bias broadcast over n rows of dim).
  virtual void add_bias(float* x, const float* b, int n, int dim) = 0;
  // x += y, elementwise over count values.
  virtual void add(float* x, const float* y, size_t count) = 0;
  // Softmax in place over each of n rows of dim.
  virtual void softmax(float* x, int n, int dim) = 0;

  virtual std::unique_ptr<KvStorage> create_kv(const KvLayout& layout) = 0;
  virtual void attention(KvStorage& kv, const AttentionArgs& args) = 0;
};

}  // namespace leapfrog
