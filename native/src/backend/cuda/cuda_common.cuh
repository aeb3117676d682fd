// Error checks and small device helpers shared by the CUDA backend's files.
#pragma once
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace leapfrog::cuda {

[[noreturn]] inline void throw_cuda(cudaError_t e, const char* what) {
  throw std::runtime_error(std::string("CUDA error: ") + cudaGetErrorString(e) + " (" + what + ")");
}

#define LF_CUDA(call)                                                   \
  do {                                                                  \
    const cudaError_t lf_e = (call);                                    \
    if (lf_e != cudaSuccess) ::leapfrog::cuda::throw_cuda(lf_e, #call); \
  } while (0)
#define LF_LAUNCHED(what) LF_CUDA(cudaPeekAtLastError())

#ifdef __CUDACC__
__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v = __fadd_rn(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ double warp_sum(double v) {
  for (int o = 16; o > 0; o >>= 1) v = __dadd_rn(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ int warp_sum(int v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
#endif

inline unsigned ceil_div(size_t a, size_t b) { return static_cast<unsigned>((a + b - 1) / b); }

}  // namespace leapfrog::cuda
