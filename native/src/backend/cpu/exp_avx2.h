// e^x eight floats at a time, for the AVX2 kernels (include only from files built with AVX2
// and FMA): exp16's method (exp_avx512.h) with the 2^n built in the exponent bits.
#pragma once
#include <immintrin.h>

namespace leapfrog::cpu {

// e^x for 8 floats: 2^n * e^r with n = round(x / ln 2) and r = x - n ln 2 (in two parts,
// Cody-Waite), e^r by a degree-6 polynomial (error below 2 ulp on the reduced range). 2^n is
// built in the exponent bits as 2^h * 2^(n - h), h = n / 2, so both factors are normal floats
// over the whole range: x = -inf gives 0, x above 88.72 infinity, as expf.
inline __m256 exp8(__m256 x) {
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-104.0f)), _mm256_set1_ps(88.8f));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  const __m256i ni = _mm256_cvtps_epi32(n);  // -150..129
  const __m256i h = _mm256_srai_epi32(ni, 1);
  const auto pow2 = [](__m256i k) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k, _mm256_set1_epi32(127)), 23));
  };
  return _mm256_mul_ps(_mm256_mul_ps(p, pow2(h)), pow2(_mm256_sub_epi32(ni, h)));
}

}  // namespace leapfrog::cpu
