// Pieces the AVX-512 packed products share (packed_avx512.cpp: the 32-value types;
// packed_kquant_avx512.cpp: the super-block types). Both lay one slice (inputs 4s..4s+3) of 16
// rows in one 64-byte vector, row r in bytes 4r..4r+3. Include only from *_avx512.cpp files.
#pragma once
#include <immintrin.h>

#include <cstdint>

#include "backend/cpu/quant_blocks.h"

namespace leapfrog::cpu {

// Internal linkage: files built for different instruction sets include quant_blocks.h, and
// one shared copy of a function could carry the wrong set's instructions.
namespace {

constexpr int kRows = 16;
constexpr int kSlices = kQK / 4;  // slices of a 32-input block

// acc += the 4-byte dot products of w's 16 lanes with the 4 bytes at a, broadcast from
// memory ({1to16}): one fused load-and-multiply. Written out because compilers load the
// broadcast into a register of its own first, which costs the tile a third of its speed.
inline __m512i dpbusd_bcast(__m512i acc, __m512i w, const int8_t* a) {
  asm("vpdpbusd %2%{1to16%}, %1, %0"
      : "+v"(acc)
      : "v"(w), "m"(*reinterpret_cast<const int32_t*>(a)));
  return acc;
}

// acc += the int16 pairs of w times the pair at p, broadcast from memory (the same reason).
inline __m512i dpwssd_bcast(__m512i acc, __m512i w, const int16_t* p) {
  asm("vpdpwssd %2%{1to16%}, %1, %0"
      : "+v"(acc)
      : "v"(w), "m"(*reinterpret_cast<const int32_t*>(p)));
  return acc;
}

inline __m512 f16x16(const uint16_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// Slice s of a 32-input block of 16 rows' nibbles, packed by pack_nibbles16.
inline __m512i nibbles(const uint8_t* qs, int s) {
  const __m512i v = _mm512_loadu_si512(qs + 64 * (s % 4));
  return _mm512_and_si512(s < 4 ? v : _mm512_srli_epi16(v, 4), _mm512_set1_epi8(0xF));
}

// The 16 rows' 4-bit codes of a 32-input block (codes[r][j], only the low 4 bits read) as 4
// vectors at qs: vector k holds slice k in its low nibbles and slice k + 4 in its high ones.
inline void pack_nibbles16(const uint8_t (&codes)[kRows][kQK], uint8_t* qs) {
  for (int k = 0; k < 4; ++k) {
    for (int r = 0; r < kRows; ++r) {
      for (int e = 0; e < 4; ++e) {
        const int lo = codes[r][4 * k + e] & 0xF, hi = codes[r][4 * (k + 4) + e] & 0xF;
        qs[64 * k + 4 * r + e] = uint8_t(lo | hi << 4);
      }
    }
  }
}

// The IQ4_NL levels (IQ4_NL and IQ4_XS) of 64 nibbles, plus 128: unsigned (1..241), the
// side vpdpbusd takes unsigned; the offset's share, 128 * sum(a), is taken off by the caller.
alignas(16) constexpr uint8_t kIq4NlUnsigned[16] = {1,   24,  45,  63,  79,  93,  106, 118,
                                                    129, 141, 153, 166, 181, 197, 217, 241};
static_assert(kIq4NlUnsigned[0] == format::kIq4NlValues[0] + 128 &&
              kIq4NlUnsigned[15] == format::kIq4NlValues[15] + 128);
inline __m512i iq4_levels_unsigned(__m512i nib) {
  const __m512i levels =
      _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<const __m128i*>(kIq4NlUnsigned)));
  return _mm512_shuffle_epi8(levels, nib);
}

}  // namespace

}  // namespace leapfrog::cpu
