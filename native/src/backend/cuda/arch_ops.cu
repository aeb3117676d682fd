// The ops of the architectures beyond llama/qwen (backend.h) on the GPU: LayerNorm, GELU
// (through the same f16 table ggml's CPU backend reads), GELU-gated products, scaling and
// soft-capping. As in ops.cu, every float operation is written out in the CPU backend's
// order (backend/cpu/cpu_arch_ops.cpp); tanhf may differ from the host's in its last bit.
#include <cuda_fp16.h>

#include "backend/cuda/cuda_common.cuh"
#include "backend/cuda/kernels.h"

namespace leapfrog::cuda {

namespace {

__device__ __forceinline__ float gelu_tanh(float x) {
  const float kSqrt2OverPi = 0.79788456080286535587989211986876f, kCoef = 0.044715f;
  const float inner =
      __fmul_rn(__fmul_rn(kSqrt2OverPi, x), __fadd_rn(1.0f, __fmul_rn(__fmul_rn(kCoef, x), x)));
  return __fmul_rn(__fmul_rn(0.5f, x), __fadd_rn(1.0f, tanhf(inner)));
}

__global__ void gelu_table_kernel(uint16_t* table) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= 65536) return;
  const float x = __half2float(__ushort_as_half(static_cast<unsigned short>(i)));
  table[i] = __half_as_ushort(__float2half_rn(gelu_tanh(x)));
}

__device__ __forceinline__ float gelu_lookup(const uint16_t* __restrict__ table, float x) {
  if (x <= -10.0f) return 0.0f;
  if (x >= 10.0f) return x;
  return __half2float(__ushort_as_half(table[__half_as_ushort(__float2half_rn(x))]));
}

// One block per row: the mean, then the squared deviations, each summed in double.
__global__ void layer_norm_kernel(const float* x, const float* __restrict__ w,
                                  const float* __restrict__ b, int dim, float eps, float* y) {
  const float* xr = x + size_t(blockIdx.x) * dim;
  float* yr = y + size_t(blockIdx.x) * dim;
  __shared__ double part[8];
  __shared__ float stat_s;
  const auto block_sum = [&](double v) {
    v = warp_sum(v);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = v;
    __syncthreads();
    double s = 0;
    if (threadIdx.x == 0) {
      for (int i = 0; i < static_cast<int>(blockDim.x >> 5); ++i) s = __dadd_rn(s, part[i]);
    }
    return s;
  };
  double sum = 0;
  for (int c = threadIdx.x; c < dim; c += blockDim.x) sum = __dadd_rn(sum, double(xr[c]));
  const double total = block_sum(sum);
  if (threadIdx.x == 0) stat_s = static_cast<float>(total / dim);
  __syncthreads();
  const float mean = stat_s;
  double var = 0;
  for (int c = threadIdx.x; c < dim; c += blockDim.x) {
    const float d = __fsub_rn(xr[c], mean);
    var = __dadd_rn(var, double(__fmul_rn(d, d)));
  }
  __syncthreads();  // `part` is reused
  const double total_var = block_sum(var);
  if (threadIdx.x == 0) {
    stat_s = __fdiv_rn(1.0f, __fsqrt_rn(__fadd_rn(static_cast<float>(total_var / dim), eps)));
  }
  __syncthreads();
  const float scale = stat_s;
  for (int c = threadIdx.x; c < dim; c += blockDim.x) {
    float v = __fmul_rn(__fsub_rn(xr[c], mean), scale);
    if (w) v = __fmul_rn(v, w[c]);
    if (b) v = __fadd_rn(v, b[c]);
    yr[c] = v;
  }
}

__global__ void gelu_kernel(float* x, const uint16_t* __restrict__ table, size_t count) {
  const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < count) x[i] = gelu_lookup(table, x[i]);
}

__global__ void geglu_kernel(float* gate, const float* __restrict__ up,
                             const uint16_t* __restrict__ table, size_t count) {
  const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < count) gate[i] = __fmul_rn(gelu_lookup(table, gate[i]), up[i]);
}

__global__ void scale_kernel(float* x, float s, size_t count) {
  const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < count) x[i] = __fmul_rn(x[i], s);
}

__global__ void softcap_kernel(float* x, float cap, float inv_cap, size_t count) {
  const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < count) x[i] = __fmul_rn(tanhf(__fmul_rn(x[i], inv_cap)), cap);
}

}  // namespace

void launch_gelu_table(uint16_t* table, cudaStream_t stream) {
  gelu_table_kernel<<<65536 / 256, 256, 0, stream>>>(table);
  LF_LAUNCHED("gelu_table");
}

void launch_layer_norm(const float* x, const float* w, const float* b, int n, int dim, float eps,
                       float* y, cudaStream_t stream) {
  if (n <= 0) return;
  layer_norm_kernel<<<n, dim <= 128 ? 64 : 256, 0, stream>>>(x, w, b, dim, eps, y);
  LF_LAUNCHED("layer_norm");
}

void launch_gelu(float* x, const uint16_t* table, size_t count, cudaStream_t stream) {
  if (count == 0) return;
  gelu_kernel<<<ceil_div(count, 256), 256, 0, stream>>>(x, table, count);
  LF_LAUNCHED("gelu");
}

void launch_geglu(float* gate, const float* up, const uint16_t* table, size_t count,
                  cudaStream_t stream) {
  if (count == 0) return;
  geglu_kernel<<<ceil_div(count, 256), 256, 0, stream>>>(gate, up, table, count);
  LF_LAUNCHED("geglu");
}

void launch_scale(float* x, float s, size_t count, cudaStream_t stream) {
  if (count == 0) return;
  scale_kernel<<<ceil_div(count, 256), 256, 0, stream>>>(x, s, count);
  LF_LAUNCHED("scale");
}

void launch_softcap(float* x, float cap, size_t count, cudaStream_t stream) {
  if (count == 0) return;
  softcap_kernel<<<ceil_div(count, 256), 256, 0, stream>>>(x, cap, 1.0f / cap, count);
  LF_LAUNCHED("softcap");
}

}  // namespace leapfrog::cuda
