// Lookups, norms, RoPE, elementwise ops and the KV cache's writes on the GPU. Every float
// operation is written out (intrinsics with explicit rounding, no contraction: the library
// builds with --fmad=false) in the order the CPU backend uses, so these ops match the CPU
// bit for bit except where a library function (expf, sinf, cosf) differs in its last bit.
#include <cuda_fp16.h>

#include <cmath>
#include <stdexcept>

#include "backend/cuda/cuda_common.cuh"
#include "backend/cuda/kernels.h"

namespace leapfrog::cuda {

namespace {

// Value of input k of a file row, as format/dequant.cpp computes it.
__device__ float dequant_at(GgmlType t, const uint8_t* row, int64_t k) {
  const int j = static_cast<int>(k % 32);
  switch (t) {
    case GgmlType::F32:
      return reinterpret_cast<const float*>(row)[k];
    case GgmlType::F16:
      return f16f(load_le16(row + 2 * k));
    case GgmlType::BF16:
      return __uint_as_float(load_le16(row + 2 * k) << 16);
    case GgmlType::Q8_0: {
      const uint8_t* b = row + (k / 32) * 34;
      return __fmul_rn(static_cast<float>(static_cast<int8_t>(b[2 + j])), f16f(load_le16(b)));
    }
    case GgmlType::Q4_0: {
      const uint8_t* b = row + (k / 32) * 18;
      return __fmul_rn(static_cast<float>(code_at(QKind::Q4_0, row, k) - 8), f16f(load_le16(b)));
    }
    case GgmlType::Q5_0: {
      const uint8_t* b = row + (k / 32) * 22;
      return __fmul_rn(static_cast<float>(code_at(QKind::Q5_0, row, k) - 16), f16f(load_le16(b)));
    }
    case GgmlType::Q4_K:
    case GgmlType::Q5_K: {
      const bool q5 = t == GgmlType::Q5_K;
      const uint8_t* b = row + (k / 256) * (q5 ? 176 : 144);
      const int s = static_cast<int>(k % 256) / 32;
      uint8_t sc, m;
      format::scale_min_k4(s, b + 4, sc, m);
      const float d0 = __fmul_rn(f16f(load_le16(b)), static_cast<float>(sc));
      const float min0 = __fmul_rn(f16f(load_le16(b + 2)), static_cast<float>(m));
      const int q = code_at(q5 ? QKind::Q5_K : QKind::Q4_K, row, k);
      return __fsub_rn(__fmul_rn(d0, static_cast<float>(q)), min0);
    }
    case GgmlType::Q6_K: {
      const uint8_t* b = row + (k / 256) * 210;
      const float d = f16f(load_le16(b + 208));
      const int sc = static_cast<int8_t>(b[192 + (k % 256) / 16]);
      const int q = code_at(QKind::Q6_K, row, k) - 32;
      return __fmul_rn(__fmul_rn(d, static_cast<float>(sc)), static_cast<float>(q));
    }
    case GgmlType::Q4_1:
    case GgmlType::Q5_1: {
      const uint8_t* b = row + (k / 32) * (t == GgmlType::Q4_1 ? 20 : 24);
      const int q = code_at(t == GgmlType::Q4_1 ? QKind::Q4_1 : QKind::Q5_1, row, k);
      return __fadd_rn(__fmul_rn(static_cast<float>(q), f16f(load_le16(b))), f16f(load_le16(b + 2)));
    }
    case GgmlType::IQ4_NL: {
      const uint8_t* b = row + (k / 32) * 18;
      const int v = static_cast<int8_t>(iq4_levels(code_at(QKind::IQ4_NL, row, k)) & 0xFF);
      return __fmul_rn(f16f(load_le16(b)), static_cast<float>(v));
    }
    case GgmlType::IQ4_XS: {
      const uint8_t* b = row + (k / 256) * 136;
      uint8_t sc[16], unused[16];
      scale_bytes(QKind::IQ4_XS, row, (k / 256 + 1) * 256, k / 256, sc, unused);
      const float dl =
          __fmul_rn(f16f(load_le16(b)), static_cast<float>(static_cast<int8_t>(sc[2 + (k % 256) / 32])));
      const int v = static_cast<int8_t>(iq4_levels(code_at(QKind::IQ4_XS, row, k)) & 0xFF);
      return __fmul_rn(dl, static_cast<float>(v));
    }
    case GgmlType::Q2_K: {
      const uint8_t* b = row + (k / 256) * 84;
      const int sc = b[(k % 256) / 16];
      const float dl = __fmul_rn(f16f(load_le16(b + 80)), static_cast<float>(sc & 0xF));
      const float ml = __fmul_rn(f16f(load_le16(b + 82)), static_cast<float>(sc >> 4));
      const int q = code_at(QKind::Q2_K, row, k);
      return __fsub_rn(__fmul_rn(dl, static_cast<float>(q)), ml);
    }
    case GgmlType::Q3_K: {
      const uint8_t* b = row + (k / 256) * 110;
      uint8_t sc[16], d[16];
      scale_bytes(QKind::Q3_K, row, (k / 256 + 1) * 256, k / 256, sc, d);
      const float dl = __fmul_rn(f16f(load_le16(b + 108)),
                                 static_cast<float>(static_cast<int8_t>(sc[(k % 256) / 16])));
      const int v = code_at(QKind::Q3_K, row, k) - 4;
      return __fmul_rn(dl, static_cast<float>(v));
    }
    default:
      return 0.0f;
  }
}

__global__ void get_rows_kernel(GgmlType t, const uint8_t* __restrict__ table, int64_t rows,
                                int64_t cols, size_t row_bytes, const int32_t* __restrict__ ids,
                                float* __restrict__ out) {
  const int i = blockIdx.x;
  const int32_t id = ids[i];
  float* o = out + size_t(i) * cols;
  if (id < 0 || id >= rows) {  // checked by the caller; never read outside the table
    for (int64_t k = threadIdx.x; k < cols; k += blockDim.x) o[k] = 0.0f;
    return;
  }
  const uint8_t* row = table + size_t(id) * row_bytes;
  for (int64_t k = threadIdx.x; k < cols; k += blockDim.x) o[k] = dequant_at(t, row, k);
}

// One block of 256 threads per row; the sum of squares in double, as on the CPU. ADD: the
// residual `add` is first added into x (the add op before the norm, in the same kernel: each
// thread adds the values it then squares, so the results are those of the two ops).
template <bool ADD>
__global__ void rms_norm_kernel(float* x, const float* add, const float* __restrict__ w, int dim,
                                float eps, float* y) {
  float* xr = x + size_t(blockIdx.x) * dim;
  float* yr = y + size_t(blockIdx.x) * dim;
  double sum = 0;
  for (int c = threadIdx.x; c < dim; c += blockDim.x) {
    if constexpr (ADD) xr[c] = __fadd_rn(xr[c], add[size_t(blockIdx.x) * dim + c]);
    sum = __dadd_rn(sum, static_cast<double>(__fmul_rn(xr[c], xr[c])));
  }
  sum = warp_sum(sum);
  __shared__ double part[8];
  __shared__ float scale_s;
  if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    double s = 0;
    for (int i = 0; i < static_cast<int>(blockDim.x >> 5); ++i) s = __dadd_rn(s, part[i]);
    const float mean = static_cast<float>(s / dim);
    scale_s = __fdiv_rn(1.0f, __fsqrt_rn(__fadd_rn(mean, eps)));
  }
  __syncthreads();
  const float scale = scale_s;
  for (int c = threadIdx.x; c < dim; c += blockDim.x) {
    const float v = __fmul_rn(xr[c], scale);
    yr[c] = w ? __fmul_rn(v, w[c]) : v;
  }
}

// One thread per (row, head, rotated pair) of one or two tensors at the same positions
// with the same parameters (queries and keys in one launch).
__global__ void rope_kernel(RopeTargets tg, int n, int head_dim, const int32_t* pos,
                            RopeStyle style, int n_dims, float freq_scale, float theta_scale,
                            float ext_factor, float mscale, YarnCorrDims corr) {
  const int pairs = n_dims / 2;
  size_t idx = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  const size_t first = size_t(n) * tg.heads[0] * pairs;
  const int which = idx < first ? 0 : 1;
  if (which == 1) idx -= first;
  float* x = tg.x[which];
  const int n_heads = tg.heads[which];
  if (idx >= size_t(n) * n_heads * pairs) return;
  const int p = static_cast<int>(idx % pairs);
  const int h = static_cast<int>(idx / pairs % n_heads);
  const int i = static_cast<int>(idx / pairs / n_heads);
  // The angle by repeated multiplication in float, exactly as the CPU computes it.
  float theta = static_cast<float>(pos[i]);
  for (int q = 0; q < p; ++q) theta = __fmul_rn(theta, theta_scale);
  float t = __fmul_rn(freq_scale, theta);
  if (ext_factor != 0) {  // YaRN: blend toward the original angle (backend.h, RopeParams)
    const float y = __fdiv_rn(__fsub_rn(float(p), corr.low), fmaxf(0.001f, corr.high - corr.low));
    const float mix = __fmul_rn(1 - fminf(1.0f, fmaxf(0.0f, y)), ext_factor);
    t = __fadd_rn(__fmul_rn(t, 1 - mix), __fmul_rn(theta, mix));
  }
  const float c = __fmul_rn(cosf(t), mscale), s = __fmul_rn(sinf(t), mscale);
  float* v = x + (size_t(i) * n_heads + h) * head_dim;
  const int a = style == RopeStyle::Normal ? 2 * p : p;
  const int b = style == RopeStyle::Normal ? 2 * p + 1 : p + n_dims / 2;
  const float x0 = v[a], x1 = v[b];
  v[a] = __fsub_rn(__fmul_rn(x0, c), __fmul_rn(x1, s));
  v[b] = __fadd_rn(__fmul_rn(x0, s), __fmul_rn(x1, c));
}

__global__ void swiglu_kernel(float* gate, const float* __restrict__ up, size_t count) {
  const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  const float g = gate[i];
  gate[i] = __fmul_rn(__fdiv_rn(g, __fadd_rn(1.0f, expf(-g))), up[i]);
}

// Up to three bias additions in one launch (Q, K and V), one thread per element.
__global__ void add_bias_kernel(BiasTargets bt) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  int s = 0;
  while (s < bt.count && i >= size_t(bt.n) * bt.dim[s]) i -= size_t(bt.n) * bt.dim[s++];
  if (s >= bt.count) return;
  bt.x[s][i] = __fadd_rn(bt.x[s][i], bt.b[s][i % bt.dim[s]]);
}

__global__ void add_kernel(float* x, const float* y, size_t count) {
  const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  x[i] = __fadd_rn(x[i], y[i]);
}

// Mixture of experts: out[i, :] = x[rows[i], :].
__global__ void gather_rows_kernel(const float* __restrict__ x, const int32_t* __restrict__ rows,
                                   int dim, float* __restrict__ out) {
  const float* src = x + size_t(rows[blockIdx.x]) * dim;
  float* dst = out + size_t(blockIdx.x) * dim;
  for (int c = threadIdx.x; c < dim; c += blockDim.x) dst[c] = src[c];
}

// y[rows[i], c] += w[i] * x[i, c], i in order: one thread per column walks the rows, so a
// row that repeats takes its additions in the CPU's order.
__global__ void scatter_add_rows_kernel(const float* __restrict__ x,
                                        const int32_t* __restrict__ rows,
                                        const float* __restrict__ w, int n, int dim, float* y) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= dim) return;
  for (int i = 0; i < n; ++i) {
    float* yc = y + size_t(rows[i]) * dim + c;
    *yc = __fadd_rn(*yc, __fmul_rn(w[i], x[size_t(i) * dim + c]));
  }
}

__global__ void kv_store_kernel(uint16_t* __restrict__ kd, uint16_t* __restrict__ vd,
                                const float* __restrict__ k, const float* __restrict__ v,
                                int kv_dim, size_t count, const int* first_dev, int first_host) {
  const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  const size_t at = size_t(first_dev ? *first_dev : first_host) * kv_dim + i;
  kd[at] = __half_as_ushort(__float2half_rn(k[i]));
  vd[at] = __half_as_ushort(__float2half_rn(v[i]));
}

__global__ void kv_move_kernel(uint16_t* k, uint16_t* v, int kv_dim, size_t layer_stride, int from,
                               int to, size_t count) {
  const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  const size_t l = i / kv_dim, e = i % kv_dim;
  const size_t src = l * layer_stride + size_t(from) * kv_dim + e;
  const size_t dst = l * layer_stride + size_t(to) * kv_dim + e;
  k[dst] = k[src];
  v[dst] = v[src];
}

}  // namespace

void launch_get_rows(GgmlType t, const uint8_t* table, int64_t rows, int64_t cols, size_t row_bytes,
                     const int32_t* ids, int n, float* out, cudaStream_t stream) {
  if (n <= 0) return;
  get_rows_kernel<<<n, 256, 0, stream>>>(t, table, rows, cols, row_bytes, ids, out);
  LF_LAUNCHED("get_rows");
}

void launch_rms_norm(const float* x, const float* w, int n, int dim, float eps, float* y,
                     cudaStream_t stream) {
  if (n <= 0) return;
  rms_norm_kernel<false>
      <<<n, dim <= 128 ? 64 : 256, 0, stream>>>(const_cast<float*>(x), nullptr, w, dim, eps, y);
  LF_LAUNCHED("rms_norm");
}

void launch_add_rms_norm(float* x, const float* add, const float* w, int n, int dim, float eps,
                         float* y, cudaStream_t stream) {
  if (n <= 0) return;
  rms_norm_kernel<true><<<n, dim <= 128 ? 64 : 256, 0, stream>>>(x, add, w, dim, eps, y);
  LF_LAUNCHED("add + rms_norm");
}

void launch_rope(const RopeTargets& tg, int n, int head_dim, const int32_t* pos,
                 const RopeParams& p, float theta_scale, cudaStream_t stream) {
  const size_t threads = size_t(n) * (tg.heads[0] + tg.heads[1]) * (p.n_dims / 2);
  if (threads == 0) return;
  const YarnCorrDims corr = p.ext_factor != 0 ? yarn_corr_dims(p) : YarnCorrDims{};
  const float mscale = rope_mscale(p);
  rope_kernel<<<ceil_div(threads, 256), 256, 0, stream>>>(tg, n, head_dim, pos, p.style, p.n_dims,
                                                          p.freq_scale, theta_scale, p.ext_factor,
                                                          mscale, corr);
  LF_LAUNCHED("rope");
}

void launch_swiglu(float* gate, const float* up, size_t count, cudaStream_t stream) {
  if (count == 0) return;
  swiglu_kernel<<<ceil_div(count, 256), 256, 0, stream>>>(gate, up, count);
  LF_LAUNCHED("swiglu");
}

void launch_add_bias(const BiasTargets& bt, cudaStream_t stream) {
  size_t count = 0;
  for (int s = 0; s < bt.count; ++s) count += size_t(bt.n) * bt.dim[s];
  if (count == 0) return;
  add_bias_kernel<<<ceil_div(count, 256), 256, 0, stream>>>(bt);
  LF_LAUNCHED("add_bias");
}

void launch_add(float* x, const float* y, size_t count, cudaStream_t stream) {
  if (count == 0) return;
  add_kernel<<<ceil_div(count, 256), 256, 0, stream>>>(x, y, count);
  LF_LAUNCHED("add");
}

void launch_gather_rows(const float* x, const int32_t* rows, int n, int dim, float* out,
                        cudaStream_t stream) {
  if (n <= 0) return;
  gather_rows_kernel<<<n, 256, 0, stream>>>(x, rows, dim, out);
  LF_LAUNCHED("gather_rows");
}

void launch_scatter_add_rows(const float* x, const int32_t* rows, const float* w, int n, int dim,
                             float* y, cudaStream_t stream) {
  if (n <= 0) return;
  scatter_add_rows_kernel<<<ceil_div(dim, 128), 128, 0, stream>>>(x, rows, w, n, dim, y);
  LF_LAUNCHED("scatter_add_rows");
}

void launch_kv_store(uint16_t* k_layer, uint16_t* v_layer, const float* k, const float* v,
                     int kv_dim, int n, const int* first_dev, int first_host, cudaStream_t stream) {
  const size_t count = size_t(n) * kv_dim;
  if (count == 0) return;
  kv_store_kernel<<<ceil_div(count, 256), 256, 0, stream>>>(k_layer, v_layer, k, v, kv_dim, count,
                                                            first_dev, first_host);
  LF_LAUNCHED("kv_store");
}

void launch_kv_move(uint16_t* k, uint16_t* v, int n_layers, size_t layer_stride, int kv_dim,
                    int from, int to, cudaStream_t stream) {
  const size_t count = size_t(n_layers) * kv_dim;
  if (count == 0 || from == to) return;
  kv_move_kernel<<<ceil_div(count, 256), 256, 0, stream>>>(k, v, kv_dim, layer_stride, from, to,
                                                           count);
  LF_LAUNCHED("kv_move");
}

}  // namespace leapfrog::cuda
