// e^x sixteen floats at a time, for the AVX-512 kernels (include only from *_avx512.cpp files:
// they alone are compiled for AVX-512).
#pragma once
#include <immintrin.h>

namespace leapfrog::cpu {

// e^x for 16 floats: 2^n * e^r with n = round(x / ln 2) and r = x - n ln 2 (in two parts,
// Cody-Waite), e^r by a degree-6 polynomial (error below 2 ulp on the reduced range); x below
// -87.3 gives 0, x above 88.7 infinity (scalef overflows).
inline __m512 exp16(__m512 x) {
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  const __m512 y = _mm512_scalef_ps(p, n);
  return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, _mm512_set1_ps(-87.3f), _CMP_GE_OQ), y);
}

}  // namespace leapfrog::cpu
