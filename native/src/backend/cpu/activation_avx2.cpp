// SwiGLU's gate, eight at a time: gate = silu(gate) * up with exp8 for the exponential (the
// scalar loop's std::exp, as the AVX-512 table found, is several per cent of a batched pass);
// each element's result depends only on its own two inputs, so batched rows stay
// bit-identical. And RMS norm's rows, the scalar table's sums in 256-bit vectors.
#include <immintrin.h>

#include "backend/cpu/avx2_parts.h"
#include "backend/cpu/exp_avx2.h"
#include "backend/cpu/rms_norm_parts.h"

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

// rms_norm as the scalar table's (kernels_scalar.cpp), sum for sum: chains 0-3 of the squares
// in the lanes of one vector of 4 doubles, chains 4-7 in another; then x * scale * w eight at a
// time (the tail as the scalar loop does it).
void rms_norm(const float* x, const float* w, int n, int dim, float eps, float* y) {
  for (int i = 0; i < n; ++i) {
    const float* xr = x + static_cast<size_t>(i) * dim;
    float* yr = y + static_cast<size_t>(i) * dim;
    __m256d lo = _mm256_setzero_pd(), hi = _mm256_setzero_pd();
    int c = 0;
    for (; c + 8 <= dim; c += 8) {
      const __m256 v = _mm256_loadu_ps(xr + c);
      const __m256 sq = _mm256_mul_ps(v, v);
      lo = _mm256_add_pd(lo, _mm256_cvtps_pd(_mm256_castps256_ps128(sq)));
      hi = _mm256_add_pd(hi, _mm256_cvtps_pd(_mm256_extractf128_ps(sq, 1)));
    }
    alignas(32) double s[8];
    _mm256_store_pd(s, lo);
    _mm256_store_pd(s + 4, hi);
    for (int k = 0; c < dim; ++c, ++k) s[k] += static_cast<double>(xr[c] * xr[c]);
    const float scale = rms_scale(s, dim, eps);
    const __m256 vs = _mm256_set1_ps(scale);
    for (c = 0; c + 8 <= dim; c += 8) {
      __m256 v = _mm256_mul_ps(_mm256_loadu_ps(xr + c), vs);
      if (w) v = _mm256_mul_ps(v, _mm256_loadu_ps(w + c));
      _mm256_storeu_ps(yr + c, v);
    }
    for (; c < dim; ++c) yr[c] = w ? (xr[c] * scale) * w[c] : xr[c] * scale;
  }
}

}  // namespace

void install_activation(Kernels& t) {
  t.silu_mul = silu_mul;
  t.rms_norm = rms_norm;
}

}  // namespace leapfrog::cpu::avx2
