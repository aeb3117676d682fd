// SwiGLU's gate, eight at a time: gate = silu(gate) * up with exp8 for the exponential (the
// scalar loop's std::exp, as the AVX-512 table found, is several per cent of a batched pass);
// each element's result depends only on its own two inputs, so batched rows stay
// bit-identical.
#include <immintrin.h>

#include "backend/cpu/avx2_parts.h"
#include "backend/cpu/exp_avx2.h"

namespace leapfrog::cpu::avx2 {

namespace {

inline __m256 silu_mul8(__m256 g, __m256 u) {
  // g / (1 + e^-g): e^-g is infinity for g < -88.7, and g / inf is -0 as for expf.
  const __m256 e = exp8(_mm256_sub_ps(_mm256_setzero_ps(), g));
  return _mm256_mul_ps(_mm256_div_ps(g, _mm256_add_ps(_mm256_set1_ps(1.0f), e)), u);
}

void silu_mul(float* gate, const float* up, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(gate + i, silu_mul8(_mm256_loadu_ps(gate + i), _mm256_loadu_ps(up + i)));
  }
  if (i < n) {
    const __m256i k = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n - i)),
                                         _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    _mm256_maskstore_ps(gate + i, k,
                        silu_mul8(_mm256_maskload_ps(gate + i, k), _mm256_maskload_ps(up + i, k)));
  }
}

}  // namespace

void install_activation(Kernels& t) { t.silu_mul = silu_mul; }

}  // namespace leapfrog::cpu::avx2
