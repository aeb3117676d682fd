// The AVX2 and AVX-VNNI products over the 8-row interleaved layouts of packed_layouts.h
// (which says how they are laid out and why batched results equal one-row ones). Include only
// from files built with AVX2 or more.
#pragma once
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "backend/cpu/avx2_common.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/packed_layouts.h"
#include "backend/cpu/quant_blocks.h"

namespace leapfrog::cpu::packed {

// Internal linkage: files built for different instruction sets include this, and one
// shared copy of a function could carry the wrong set's instructions.
namespace {

using avx2::load256;

// ---- products ---------------------------------------------------------------------------

// Running integer sums go through keep_in_register (avx2_common.h) to stay in order. Integer
// adds are associative, so GCC, left free, computes all of a block's products for every
// activation row first and adds them as a tree, spilling the products to the stack (seen in
// the disassembly of the Q8_0 and Q4_K tiles). The integers are the same either way.
using avx2::keep_in_register;

// Signed weights of slice s (8 rows x 4 inputs) of a packed block.
inline __m256i slice(const BlockQ8_0x8& x, int s) { return load256(x.qs + 32 * s); }

inline __m256i nibbles(const uint8_t* qs, int s) {
  const __m256i v = load256(qs + 32 * (s % 4));
  return _mm256_and_si256(s < 4 ? v : _mm256_srli_epi16(v, 4), _mm256_set1_epi8(0xF));
}

inline __m256i slice(const BlockQ4_0x8& x, int s) {
  return _mm256_sub_epi8(nibbles(x.qs, s), _mm256_set1_epi8(8));
}

// The 5-bit codes of slice s (0..31): the nibbles and, in byte j, bit j of the slice's word
// (spread the word's bytes 8 times each, keep one bit per byte, and turn set bits into 16).
inline __m256i five_bits(const uint8_t* qs, uint32_t qh, int s) {
  const __m256i word = _mm256_set1_epi32(static_cast<int>(qh));
  const __m256i spread = _mm256_shuffle_epi8(
      word,
      _mm256_setr_epi64x(0, 0x0101010101010101LL, 0x0202020202020202LL, 0x0303030303030303LL));
  const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ULL));
  const __m256i high =
      _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit), _mm256_set1_epi8(16));
  return _mm256_or_si256(nibbles(qs, s), high);
}

inline __m256i slice(const BlockQ5_0x8& x, int s) {
  return _mm256_sub_epi8(five_bits(x.qs, x.qh[s], s), _mm256_set1_epi8(16));
}
// Q4_1 / Q5_1: the codes as they are (unsigned, no offset; their min goes in separately).
inline __m256i slice(const BlockQ4_1x8& x, int s) { return nibbles(x.qs, s); }
inline __m256i slice(const BlockQ5_1x8& x, int s) { return five_bits(x.qs, x.qh[s], s); }
inline __m256i slice(const BlockIQ4_NLx8& x, int s) {
  return _mm256_shuffle_epi8(avx2::iq4_levels(), nibbles(x.qs, s));
}

inline __m256 f16x8(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// The weights stream from memory once, at the tiles' pace: each block asks for the one
// kPrefetchBlocks ahead (groups lie one after another; a prefetch past the end is harmless).
constexpr int64_t kPrefetchBlocks = 16;
template <class Block>
inline void prefetch_ahead(const Block* x) {
  const char* ahead = reinterpret_cast<const char*>(x + kPrefetchBlocks);
  for (size_t off = 0; off < sizeof(Block); off += 64) _mm_prefetch(ahead + off, _MM_HINT_T0);
}

// A step whose int8 product adds into 32-bit lanes without saturating (vpdpbusd) takes
// signed weights as unsigned codes w + 128 (one xor per slice, shared by every activation
// row) and starts each block's sum at -128 * sum(a) (ActQ8_0::sum): the same exact integer as
// the sign moves give, which cost a vpsignb per slice and activation row — half the integer
// work of the AVX-VNNI tile, whose int8 roof counts vpdpbusd alone. (AVX2's maddubs saturates
// its 16-bit pairs, so it keeps the sign moves.)
template <class Step>
constexpr bool kTakesOffsetCodes = requires {
  requires Step::kOffsetCodes;
};

// 8 packed rows x C activation rows over blocks [b0, b1). Step::dot(acc, |w|, sign(w) * a)
// adds the 4-input dot products of each 32-bit lane to acc (the instruction set's int8
// product); codes that are unsigned already (Q4_1, Q5_1) skip the sign moves, and so do steps
// that take offset codes (above). The float accumulators start at 0 for b0 == 0 and are
// otherwise taken from y (rows c * ldy), where they are left: a walk over the inputs in chunks
// carries them there.
template <class Step, class Block, int C>
void tile(const Block* x, const uint8_t* a, size_t as, float* y, size_t ldy, int64_t b0,
          int64_t b1) {
  constexpr bool kPlus128 = !kHasMin<Block> && kTakesOffsetCodes<Step>;
  __m256 facc[C];
#pragma GCC unroll 8
  for (int c = 0; c < C; ++c)
    facc[c] = b0 == 0 ? _mm256_setzero_ps() : _mm256_loadu_ps(y + c * ldy);
  for (int64_t b = b0; b < b1; ++b) {
    prefetch_ahead(x + b);
    __m256i acc[C];
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c) {
      acc[c] = kPlus128
                   ? _mm256_set1_epi32(-128 * reinterpret_cast<const ActQ8_0*>(a + c * as)[b].sum)
                   : _mm256_setzero_si256();
    }
#pragma GCC unroll 8
    for (int s = 0; s < kSlices; ++s) {
      const __m256i wv = slice(x[b], s);
      // The unsigned side: the codes as they are, w + 128, or |w| (-128 -> 128).
      const __m256i aw = kHasMin<Block> ? wv
                         : kPlus128     ? _mm256_xor_si256(wv, _mm256_set1_epi8(-128))
                                        : _mm256_sign_epi8(wv, wv);
#pragma GCC unroll 8
      for (int c = 0; c < C; ++c) {
        int32_t four;
        std::memcpy(&four, reinterpret_cast<const ActQ8_0*>(a + c * as)[b].qs + 4 * s, 4);
        const __m256i av = kHasMin<Block> || kPlus128
                               ? _mm256_set1_epi32(four)
                               : _mm256_sign_epi8(_mm256_set1_epi32(four), wv);
        acc[c] = Step::dot(acc[c], aw, av);
        keep_in_register(acc[c]);
      }
    }
    const __m256 dw = f16x8(x[b].d);
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c) {
      const ActQ8_0& ya = reinterpret_cast<const ActQ8_0*>(a + c * as)[b];
      const __m256 da = _mm256_broadcast_ss(&ya.d);
      facc[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(acc[c]), _mm256_mul_ps(dw, da), facc[c]);
      if constexpr (kHasMin<Block>) {
        facc[c] =
            _mm256_fmadd_ps(f16x8(x[b].m), _mm256_set1_ps(avx2::q8_block_total_f16c(ya)), facc[c]);
      }
    }
  }
#pragma GCC unroll 8
  for (int c = 0; c < C; ++c) _mm256_storeu_ps(y + c * ldy, facc[c]);
}

// 8 packed IQ4_XS rows x C activation rows over super-blocks [b0, b1), the float sums as
// tile()'s. Per sub-block j the 4-input sums of |w| and sign(w) * a are scaled by sc_j in the
// integer domain: by the madd itself where the step has dot_scaled (AVX2: maddubs, then madd
// against sc_j instead of ones), else by an int32 multiply of the sub-block's sum (|sum| <
// 2^19, |sum * sc_j| < 2^24). Either way the total is the definition's exact integer.
template <class Step, int C>
void tile_iq4_xs(const BlockIQ4_XSx8* x, const uint8_t* a, size_t as, float* y, size_t ldy,
                 int64_t b0, int64_t b1) {
  constexpr bool kScaledDot = requires { &Step::dot_scaled; };
  const auto act = [&](int c) { return reinterpret_cast<const ActQ8_K*>(a + c * as); };
  const __m256i levels = avx2::iq4_levels();
  __m256 facc[C];
#pragma GCC unroll 4
  for (int c = 0; c < C; ++c)
    facc[c] = b0 == 0 ? _mm256_setzero_ps() : _mm256_loadu_ps(y + c * ldy);
  for (int64_t b = b0; b < b1; ++b) {
    const BlockIQ4_XSx8& xb = x[b];
    __m256i tot[C];
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) tot[c] = _mm256_setzero_si256();
#pragma GCC unroll 1
    for (int j = 0; j < 8; ++j) {
      // The next super-block's lines, a few per sub-block (one burst of 18 stalls the tile).
      const char* ahead = reinterpret_cast<const char*>(x + b + 2) + 192 * j;
      for (int l = 0; l < 3; ++l) _mm_prefetch(ahead + 64 * l, _MM_HINT_T0);
      const __m256i sc =
          _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(xb.sc[j])));
      // kScaledDot: sc_j in both 16-bit halves of each lane, madd's pairs.
      const __m256i sc16 = _mm256_or_si256(_mm256_and_si256(sc, _mm256_set1_epi32(0xFFFF)),
                                           _mm256_slli_epi32(sc, 16));
      __m256i p[C];
#pragma GCC unroll 4
      for (int c = 0; c < C; ++c) p[c] = _mm256_setzero_si256();
#pragma GCC unroll 8
      for (int s = 0; s < kSlices; ++s) {
        const __m256i wv = _mm256_shuffle_epi8(levels, nibbles(xb.qs[j], s));
        const __m256i aw = _mm256_sign_epi8(wv, wv);
#pragma GCC unroll 4
        for (int c = 0; c < C; ++c) {
          int32_t four;
          std::memcpy(&four, act(c)[b].qs + 32 * j + 4 * s, 4);
          const __m256i av = _mm256_sign_epi8(_mm256_set1_epi32(four), wv);
          if constexpr (kScaledDot) {
            tot[c] = Step::dot_scaled(tot[c], aw, av, sc16);
            keep_in_register(tot[c]);
          } else {
            p[c] = Step::dot(p[c], aw, av);
            keep_in_register(p[c]);
          }
        }
      }
      if constexpr (!kScaledDot) {
#pragma GCC unroll 4
        for (int c = 0; c < C; ++c) tot[c] = _mm256_add_epi32(tot[c], _mm256_mullo_epi32(p[c], sc));
      }
    }
    const __m256 dw = f16x8(xb.d);
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) {
      const __m256 da = _mm256_broadcast_ss(&act(c)[b].d);
      facc[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(tot[c]), _mm256_mul_ps(dw, da), facc[c]);
    }
  }
#pragma GCC unroll 4
  for (int c = 0; c < C; ++c) _mm256_storeu_ps(y + c * ldy, facc[c]);
}

// A step with a 16-bit dot product that adds into 32-bit lanes (Step::dot_words: vpdpwssd,
// AVX-VNNI) scales an int32 sum s with |s| < 2^15 by an int16 in one instruction: the lane's
// low half times the scale, its high half (s's sign bits) times 0. Other steps (AVX2) do it
// as madd + add; the integers are the same.
template <class Step>
constexpr bool kHasWordDot = requires(__m256i v) {
  Step::dot_words(v, v, v);
};

template <class Step>
inline __m256i word_dot(__m256i acc, __m256i a, __m256i b) {
  if constexpr (kHasWordDot<Step>) {
    return Step::dot_words(acc, a, b);
  } else {
    return _mm256_add_epi32(acc, _mm256_madd_epi16(a, b));
  }
}

// sum over k < 8 of the word dot of lanes(k) with the activation's bsums pair (2k, 2k + 1)
// broadcast: the offset or min terms of a K-quant super-block. Two chains (even and odd k): a
// word dot's latency in one chain of 8 held up decoding, with one activation row.
template <class Step, class Lanes>
inline __m256i bsum_dot(const int16_t* bsums, const Lanes& lanes) {
  __m256i sum[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
#pragma GCC unroll 8
  for (int k = 0; k < 8; ++k) {
    int32_t pair;
    std::memcpy(&pair, bsums + 2 * k, 4);
    sum[k % 2] = word_dot<Step>(sum[k % 2], lanes(k), _mm256_set1_epi32(pair));
  }
  return _mm256_add_epi32(sum[0], sum[1]);
}

// Q4_K, 8 packed rows x C activation rows over super-blocks [b0, b1), the float sums as
// tile()'s (tile_q4_k, below). The codes are unsigned, so a slice needs no sign moves. Two
// ways through a sub-block give tot, a (row, activation)'s exact integer sum over the
// super-block, the same value:
// - add_q4_k_sub_block (AVX2, and AVX-VNNI below 4 activation rows): with maddubs a sub-block's 8
//   slices add up in int16 lanes before its scale is applied: a maddubs lane is at most
//   2 * 15 * 128 = 3840, eight of them 30720 < 2^15; then one madd against sc_j (in both
//   halves of each row's lane) makes the sub-block's int32 share of tot — per 32 multiply-adds
//   one maddubs and one 16-bit add;
// - add_q4_k_quads (a step with a word dot, AVX-VNNI, from 4 activation rows): a quad of 4
//   slices adds up in int32 lanes by vpdpbusd (at most 16 * 15 * 128 = 30720) and one
//   vpdpwssd against sc_j (low halves) adds it to tot: per 32 multiply-adds 1.25 instructions
//   instead of 2. With fewer rows a quad's 4 dependent vpdpbusd wait on each other (one row:
//   0.89x the maddubs tile's speed in cache on a Zen 4, in the EVEX form).
// Both end a super-block with finish_q4_k_block, so the levels' results are equal bit for bit.

// msum = sum_j m_j * (bsums[2j] + bsums[2j + 1]) (lanes (m_j, m_j) against the pair, by the
// step's word dot), then as llama.cpp orders it: d = d_a * d_w, m = d_a * dmin_w,
// y += d * tot - m * msum.
template <class Step, int C>
inline void finish_q4_k_block(const BlockQ4_Kx8& xb, const uint8_t* a, size_t as, int64_t b,
                              const __m256i* tot, float* y, size_t ldy) {
  __m256i mp[8];
#pragma GCC unroll 8
  for (int j = 0; j < 8; ++j) {
    const __m256i m =
        _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(xb.m[j])));
    mp[j] = _mm256_or_si256(m, _mm256_slli_epi32(m, 16));
  }
  const __m256 dw = f16x8(xb.d), dmin = f16x8(xb.dmin);
#pragma GCC unroll 8
  for (int c = 0; c < C; ++c) {
    const ActQ8_K& ya = reinterpret_cast<const ActQ8_K*>(a + c * as)[b];
    const __m256i msum = bsum_dot<Step>(ya.bsums, [&](int j) { return mp[j]; });
    const __m256 da = _mm256_set1_ps(ya.d);
    const __m256 t =
        _mm256_fnmadd_ps(_mm256_mul_ps(da, dmin), _mm256_cvtepi32_ps(msum),
                         _mm256_mul_ps(_mm256_mul_ps(da, dw), _mm256_cvtepi32_ps(tot[c])));
    _mm256_storeu_ps(y + c * ldy, _mm256_add_ps(_mm256_loadu_ps(y + c * ldy), t));
  }
}

// Sub-block j of super-block b for C activation rows into tot, slice by slice: each row's 8
// maddubs add up in int16 lanes, then one word dot against sc_j in both halves of each lane.
template <class Step, int C>
inline void add_q4_k_sub_block(const BlockQ4_Kx8& xb, const uint8_t* a, size_t as, int64_t b, int j,
                               __m256i* tot) {
  const __m256i m4 = _mm256_set1_epi8(0xF);
  const __m128i shift = _mm_cvtsi32_si128(4 * (j % 2));  // high nibbles for odd j
  const __m256i sc =
      _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(xb.sc[j])));
  const __m256i sc16 = _mm256_or_si256(sc, _mm256_slli_epi32(sc, 16));
  __m256i p[C];
#pragma GCC unroll 4
  for (int c = 0; c < C; ++c) p[c] = _mm256_setzero_si256();
#pragma GCC unroll 8
  for (int s = 0; s < kSlices; ++s) {
    const __m256i wq = _mm256_and_si256(_mm256_srl_epi16(load256(xb.qs[j / 2][s]), shift), m4);
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) {
      int32_t four;
      std::memcpy(&four, reinterpret_cast<const ActQ8_K*>(a + c * as)[b].qs + 32 * j + 4 * s, 4);
      p[c] = _mm256_add_epi16(p[c], _mm256_maddubs_epi16(wq, _mm256_set1_epi32(four)));
      if constexpr (C > 1) keep_in_register(p[c]);
    }
  }
#pragma GCC unroll 4
  for (int c = 0; c < C; ++c) tot[c] = word_dot<Step>(tot[c], p[c], sc16);
}

// The same sub-block quad by quad (a step with a word dot): a row's four vpdpbusd go into one
// short-lived quad sum that vpdpwssd scales into tot at once, so a row keeps only tot in a
// register. Eight rows then fit AVX's 16 registers (8 sums, a quad's 4 weight vectors, sc_j,
// the quad sum, the broadcast), and each weight vector's unpacking serves 8 rows instead of 4
// (slice by slice, a running sum per row as well, 16 registers at 8 rows). Both quads in
// flight: GCC keeps 8 weight vectors without spilling the sums.
template <class Step, int C>
inline void add_q4_k_quads(const BlockQ4_Kx8& xb, const uint8_t* a, size_t as, int64_t b, int j,
                           __m256i* tot) {
  const __m256i m4 = _mm256_set1_epi8(0xF);
  const __m128i shift = _mm_cvtsi32_si128(4 * (j % 2));
  const __m256i sc =
      _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(xb.sc[j])));
#pragma GCC unroll 2
  for (int h = 0; h < 2; ++h) {  // the sub-block's two quads: slices 4h..4h+3
    __m256i wq[4];
#pragma GCC unroll 4
    for (int s = 0; s < 4; ++s) {
      wq[s] = _mm256_and_si256(_mm256_srl_epi16(load256(xb.qs[j / 2][4 * h + s]), shift), m4);
    }
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c) {
      const int8_t* q = reinterpret_cast<const ActQ8_K*>(a + c * as)[b].qs + 32 * j + 16 * h;
      __m256i quad = _mm256_setzero_si256();
#pragma GCC unroll 4
      for (int s = 0; s < 4; ++s) {
        int32_t four;
        std::memcpy(&four, q + 4 * s, 4);
        quad = Step::dot(quad, wq[s], _mm256_set1_epi32(four));
      }
      tot[c] = Step::dot_words(tot[c], quad, sc);
      keep_in_register(tot[c]);
    }
  }
}

template <class Step, int C>
void tile_q4_k(const BlockQ4_Kx8* x, const uint8_t* a, size_t as, float* y, size_t ldy, int64_t b0,
               int64_t b1) {
  constexpr bool kQuads = kHasWordDot<Step> && C >= 4;
  if (b0 == 0) {
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c) _mm256_storeu_ps(y + c * ldy, _mm256_setzero_ps());
  }
  for (int64_t b = b0; b < b1; ++b) {
    const BlockQ4_Kx8& xb = x[b];
    __m256i tot[C];
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c) tot[c] = _mm256_setzero_si256();
#pragma GCC unroll 1
    for (int j = 0; j < 8; ++j) {  // not unrolled: two sub-blocks in flight spill the sums
      // The super-block after next, three lines per sub-block rather than all 19 in one
      // burst (tile_iq4_xs measured a burst stalling the tile).
      const char* ahead = reinterpret_cast<const char*>(x + b + 2) + 192 * j;
      for (int l = 0; l < 3; ++l) _mm_prefetch(ahead + 64 * l, _MM_HINT_T0);
      if constexpr (kQuads) {
        add_q4_k_quads<Step, C>(xb, a, as, b, j, tot);
      } else {
        add_q4_k_sub_block<Step, C>(xb, a, as, b, j, tot);
      }
    }
    finish_q4_k_block<Step, C>(xb, a, as, b, tot, y, ldy);
  }
}

// 8 packed Q6_K rows x C activation rows over super-blocks [b0, b1), the float sums as
// tile()'s. A maddubs lane of 6-bit codes is at most 2 * 63 * 128 = 16128, so two slices add
// up in int16 lanes (32256 < 2^15); each pair is scaled by sc_j with one madd.
template <class Step, int C>
void tile_q6_k(const BlockQ6_Kx8* x, const uint8_t* a, size_t as, float* y, size_t ldy, int64_t b0,
               int64_t b1) {
  const auto act = [&](int c) { return reinterpret_cast<const ActQ8_K*>(a + c * as); };
  const __m256i m6 = _mm256_set1_epi8(0x3F);
  if (b0 == 0) {
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) _mm256_storeu_ps(y + c * ldy, _mm256_setzero_ps());
  }
  for (int64_t b = b0; b < b1; ++b) {
    const BlockQ6_Kx8& xb = x[b];
    const auto pairs = [&](int k) {  // lanes (sc_2k, sc_2k+1) of each row, as int16
      return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(xb.sc[k])));
    };
    // -32 * sum_j sc_j * bsums[j]: the codes' offset, through the activation sums.
    __m256i tot[C];
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c) {
      const __m256i msum = bsum_dot<Step>(act(c)[b].bsums, pairs);
      tot[c] = _mm256_slli_epi32(_mm256_sub_epi32(_mm256_setzero_si256(), msum), 5);
    }
#pragma GCC unroll 1
    for (int j = 0; j < 16; ++j) {
      // The super-block after next, two of its 27 lines per sub-block.
      const char* ahead = reinterpret_cast<const char*>(x + b + 2) + 128 * j;
      for (int l = 0; l < 2; ++l) _mm_prefetch(ahead + 64 * l, _MM_HINT_T0);
      // sc_j in both int16 halves of each row's lane: words 0, 0, 2, 2 or 1, 1, 3, 3.
      const __m256i sp = pairs(j / 2);
      const __m256i sc16 = j % 2 ? _mm256_shufflehi_epi16(_mm256_shufflelo_epi16(sp, 0xF5), 0xF5)
                                 : _mm256_shufflehi_epi16(_mm256_shufflelo_epi16(sp, 0xA0), 0xA0);
      const __m256i v0 = load256(xb.qs[j][0]), v1 = load256(xb.qs[j][1]), v2 = load256(xb.qs[j][2]);
      __m256i w[4];
      w[0] = _mm256_and_si256(v0, m6);
      w[1] = _mm256_and_si256(v1, m6);
      w[2] = _mm256_and_si256(v2, m6);
      // Slice 3: the top bits of v0, v1, v2 moved to bits 0-1, 2-3, 4-5 (word shifts; what
      // comes in from the neighbouring byte is masked off).
      w[3] = _mm256_or_si256(
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(v0, 6), _mm256_set1_epi8(0x03)),
                          _mm256_and_si256(_mm256_srli_epi16(v1, 4), _mm256_set1_epi8(0x0C))),
          _mm256_and_si256(_mm256_srli_epi16(v2, 2), _mm256_set1_epi8(0x30)));
#pragma GCC unroll 8
      for (int c = 0; c < C; ++c) {
        const int8_t* aq = act(c)[b].qs + 16 * j;
#pragma GCC unroll 2
        for (int t = 0; t < 2; ++t) {
          int32_t f0, f1;
          std::memcpy(&f0, aq + 8 * t, 4);
          std::memcpy(&f1, aq + 8 * t + 4, 4);
          const __m256i h =
              _mm256_add_epi16(_mm256_maddubs_epi16(w[2 * t], _mm256_set1_epi32(f0)),
                               _mm256_maddubs_epi16(w[2 * t + 1], _mm256_set1_epi32(f1)));
          tot[c] = word_dot<Step>(tot[c], h, sc16);
        }
      }
    }
    const __m256 dw = f16x8(xb.d);
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) {
      const __m256 dwa = _mm256_mul_ps(dw, _mm256_set1_ps(act(c)[b].d));
      _mm256_storeu_ps(y + c * ldy, _mm256_fmadd_ps(_mm256_cvtepi32_ps(tot[c]), dwa,
                                                    _mm256_loadu_ps(y + c * ldy)));
    }
  }
}

// The tile walk_packed (packed_layouts.h) runs, on this instruction set's int8 step.
template <class Step>
struct PackedTile {
  // Q4_K takes 8 activation rows at a time where quads go by a word dot (add_q4_k_quads), Q6_K
  // always (a row keeps only its sum between sub-blocks: 8 sums, 4 slices, the scales and 3
  // temporaries fit AVX's 16 registers). Measured in cache, one thread, Zen 5, against 4 rows:
  // Q4_K on AVX-VNNI +11 % at n = 8-16, Q6_K +12-13 % (AVX-VNNI) and +5-6 % (AVX2) at n = 8-32.
  template <class Block>
  static constexpr bool kEightRows = (std::is_same_v<Block, BlockQ4_Kx8> && kHasWordDot<Step>) ||
                                     std::is_same_v<Block, BlockQ6_Kx8>;
  template <int C, class Block>
  static void run(const Block* x, const uint8_t* a, size_t as, float* y, size_t ldy, int64_t b0,
                  int64_t b1) {
    if constexpr (std::is_same_v<Block, BlockIQ4_XSx8>) {
      tile_iq4_xs<Step, C>(x, a, as, y, ldy, b0, b1);
    } else if constexpr (std::is_same_v<Block, BlockQ4_Kx8>) {
      tile_q4_k<Step, C>(x, a, as, y, ldy, b0, b1);
    } else if constexpr (std::is_same_v<Block, BlockQ6_Kx8>) {
      tile_q6_k<Step, C>(x, a, as, y, ldy, b0, b1);
    } else {
      tile<Step, Block, C>(x, a, as, y, ldy, b0, b1);
    }
  }
};

}  // namespace

}  // namespace leapfrog::cpu::packed
