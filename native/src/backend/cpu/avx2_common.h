// Small AVX2 helpers shared by the *_avx2.cpp kernel files (include only from files built
// with -mavx2 -mfma -mf16c).
#pragma once
#include <immintrin.h>

#include <cstdint>

namespace leapfrog::cpu::avx2 {

// Internal linkage: files built for different instruction sets include this, and one
// shared copy of a function could carry the wrong set's instructions.
namespace {

// F16C scalar conversion for block scales.
inline float h2f(uint16_t h) { return _cvtsh_ss(h); }

inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

inline __m256i load256(const void* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

}  // namespace

}  // namespace leapfrog::cpu::avx2
