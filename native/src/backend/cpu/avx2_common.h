// Small AVX2 helpers shared by the *_avx2.cpp kernel files (include only from files built
// with -mavx2 -mfma -mf16c).
#pragma once
#include <immintrin.h>

#include <cstdint>

#include "backend/cpu/quant_blocks.h"

namespace leapfrog::cpu::avx2 {

// Internal linkage: files built for different instruction sets include this, and one
// shared copy of a function could carry the wrong set's instructions.
namespace {

// An empty asm GCC cannot look through: v is taken to change here, so GCC keeps it in a
// register as it stands, rather than folding its load into each of its uses as a memory
// operand (attention_walk.h's shared keys and values) or regrouping a running integer sum
// into a tree that spills (packed_blocks.h). The value itself is unchanged.
template <class Reg>
inline void keep_in_register(Reg& v) {
  asm("" : "+x"(v));
}

// F16C scalar conversion for block scales.
inline float h2f(uint16_t h) { return _cvtsh_ss(h); }

// q8_block_total (quant_blocks.h) on F16C, whose rounding is the same (to nearest even).
inline float q8_block_total_f16c(const ActQ8_0& a) {
  return h2f(_cvtss_sh(a.d * static_cast<float>(a.sum), _MM_FROUND_TO_NEAREST_INT));
}

inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

inline __m256i load256(const void* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

inline int hsum_i32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
  return _mm_cvtsi128_si32(s);
}

// The IQ4_NL levels (IQ4_NL, IQ4_XS) in both 128-bit lanes, for pshufb lookups.
inline __m256i iq4_levels() {
  return _mm256_broadcastsi128_si256(
      _mm_loadu_si128(reinterpret_cast<const __m128i*>(format::kIq4NlValues)));
}

// 16 bytes of a 32-value block -> its 32 nibbles: the low ones (elements 0..15), then the
// high ones (16..31), the layout of Q4_0, Q4_1, Q5_x and IQ4_NL.
inline __m256i unpack_nibbles(const uint8_t* p) {
  const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i m = _mm_set1_epi8(0xF);
  return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(t, 4), m), _mm_and_si128(t, m));
}

}  // namespace

}  // namespace leapfrog::cpu::avx2
