// Host-side launchers of the CUDA backend's kernels (all asynchronous on `stream`).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "backend/backend.h"
#include "backend/cuda/wlayout.h"

namespace leapfrog::cuda {

// ---- weights and products (matmul.cu)

// Writes the layout of a file weight (raw bytes in device memory) into `out` (L.total bytes).
void launch_repack(const QLayout& L, const uint8_t* raw, size_t row_bytes, uint8_t* out,
                   cudaStream_t stream);

// Activations prepared for the int8 products: per 8-token tile and 256-input group, the
// int8 values in the mma B-fragment order (2048 bytes) and per token a 32-byte record:
//   32-value weights (Q8_0, Q4_0, Q5_0, Q4_1, Q5_1, IQ4_NL): 8 f32 scales, one per 32 inputs,
//   exactly the CPU's
//     Q8_0 activations (f16-rounded scale, round-to-nearest-even quants);
//   K-quant and IQ4_XS weights: the CPU's Q8_K activations (one f32 scale per 256 inputs, the value
//   of
//     largest magnitude at -127) with the int16 sums of each 32 inputs: word 0 the scale,
//     words 1..4 the eight sums.
// Tokens are padded to a multiple of 8 and inputs to groups * 256 with zeros.
struct ActQ8 {
  uint8_t* q = nullptr;   // tiles x groups x 2048 bytes
  uint32_t* s = nullptr;  // tiles x groups x 64 words
  static size_t q_bytes(int tiles, int64_t groups) { return size_t(tiles) * groups * 2048; }
  static size_t s_bytes(int tiles, int64_t groups) { return size_t(tiles) * groups * 256; }
};
// The kinds whose CPU products take Q8_K activations (256-value super-blocks).
inline bool kquant_acts(QKind k) {
  return k == QKind::Q4_K || k == QKind::Q5_K || k == QKind::Q6_K || k == QKind::Q2_K ||
         k == QKind::Q3_K || k == QKind::IQ4_XS;
}
void launch_quantize_act(const float* x, int n, int64_t cols, int64_t groups, bool kquant,
                         ActQ8 act, cudaStream_t stream);

// y[i * ldy + r] for tokens i < n (n <= 64), rows r < L.rows. `ks`: the slices the inputs
// are split into, each summed on its own and the slices added in order (a function of the
// weight's shape only, so a token's result never depends on n).
void launch_mmq(const QLayout& L, const uint8_t* w, ActQ8 act, int n, float* y, size_t ldy, int ks,
                cudaStream_t stream);
int mmq_k_split(const QLayout& L, int sms);
// Several weights of one kind with the same inputs and ks in one launch (same results).
// `first_token`: only tokens [first_token, n) of the activation tiles are stored, token t at
// row t - first_token of y (the experts' rows of a MoE layer, quantized all at once, start
// anywhere in a tile; a token's result does not depend on the others in its tile).
void launch_mmq_multi(const QLayout* L, const uint8_t* const* w, int count, ActQ8 act, int n,
                      float* const* y, const size_t* ldy, int ks, cudaStream_t stream,
                      int first_token = 0);

// F32 / F16 / BF16 weights in the file's row-major layout.
// `x_scratch`: n x cols floats (F16/BF16 activations rounded to the weight's type).
void launch_matmul_float(GgmlType t, const uint8_t* w, int64_t rows, int64_t cols, const float* x,
                         int n, float* y, size_t ldy, float* x_scratch, cudaStream_t stream);

// ---- elementwise and lookups (ops.cu)
void launch_get_rows(GgmlType t, const uint8_t* table, int64_t rows, int64_t cols, size_t row_bytes,
                     const int32_t* ids, int n, float* out, cudaStream_t stream);
void launch_rms_norm(const float* x, const float* w, int n, int dim, float eps, float* y,
                     cudaStream_t stream);
// x += add, then y = rms_norm(x) * w: the residual add and the next norm in one kernel, with
// the results of the two ops.
void launch_add_rms_norm(float* x, const float* add, const float* w, int n, int dim, float eps,
                         float* y, cudaStream_t stream);
// One or two tensors (queries and keys) rotated at the same positions in one launch; a
// second target of 0 heads is none. Plain structs: they are recorded byte for byte.
struct RopeTargets {
  float* x[2];
  int heads[2];
};
void launch_rope(const RopeTargets& tg, int n, int head_dim, const int32_t* pos,
                 const RopeParams& p, float theta_scale, cudaStream_t stream);
void launch_swiglu(float* gate, const float* up, size_t count, cudaStream_t stream);
// Up to three bias additions over n rows in one launch (Q, K and V).
struct BiasTargets {
  float* x[3];
  const float* b[3];
  int dim[3];
  int count;
  int n;
};
void launch_add_bias(const BiasTargets& bt, cudaStream_t stream);
void launch_add(float* x, const float* y, size_t count, cudaStream_t stream);
// Mixture of experts (Backend::gather_rows, Backend::scatter_add_rows).
void launch_gather_rows(const float* x, const int32_t* rows, int n, int dim, float* out,
                        cudaStream_t stream);
void launch_scatter_add_rows(const float* x, const int32_t* rows, const float* w, int n, int dim,
                             float* y, cudaStream_t stream);
// Rows i < n of k and v (f32, n x kv_dim) into the layer's cache `k_layer`/`v_layer` at
// position first + i, where first is *first_dev when that is given (a recorded pass: the
// same launch every pass), else first_host.
void launch_kv_store(uint16_t* k_layer, uint16_t* v_layer, const float* k, const float* v,
                     int kv_dim, int n, const int* first_dev, int first_host, cudaStream_t stream);
void launch_kv_move(uint16_t* k, uint16_t* v, int n_layers, size_t layer_stride, int kv_dim,
                    int from, int to, cudaStream_t stream);

// ---- the ops of the architectures beyond llama/qwen (arch_ops.cu)
// The GELU table: 65536 f16 results, one per f16 input (as ggml's CPU backend).
void launch_gelu_table(uint16_t* table, cudaStream_t stream);
void launch_layer_norm(const float* x, const float* w, const float* b, int n, int dim, float eps,
                       float* y, cudaStream_t stream);
void launch_gelu(float* x, const uint16_t* table, size_t count, cudaStream_t stream);
void launch_geglu(float* gate, const float* up, const uint16_t* table, size_t count,
                  cudaStream_t stream);
void launch_scale(float* x, float s, size_t count, cudaStream_t stream);
void launch_softcap(float* x, float cap, size_t count, cudaStream_t stream);

// ---- attention (attention.cu)
struct AttnLaunch {
  const float* q;
  const uint16_t* k;  // this layer's cache: [position][kv_dim]
  const uint16_t* v;
  const int32_t* q_pos;
  const uint8_t* mask;  // n x kv_len or null
  float* out;
  int n, n_heads, n_kv_heads, head_dim, kv_len;
  float scale;
  float softcap;    // > 0: scores become softcap * tanh(score / softcap)
  int window;       // > 0: row i sees positions p with q_pos[i] - p < window
  int chunk;        // positions per split (a function of the cache's size only)
  float* part_o;    // n x n_heads x chunks x head_dim
  float2* part_ml;  // n x n_heads x chunks
};
void launch_attention(const AttnLaunch& a, cudaStream_t stream);

}  // namespace leapfrog::cuda
