// The arm64 products over the 8-row interleaved Q8_0, Q4_0, Q5_0, Q4_1, Q5_1, IQ4_NL, IQ4_XS,
// Q4_K and Q6_K layouts of packed_layouts.h — the layouts the x86 tables read — written once over
// the NEON int8 dot primitive I8::dot(acc, a, b) (lane i gains a[4i..4i+3] . b[4i..4i+3]; plain
// NEON or sdot, kernels_neon_int8.h). A 16-byte vector holds slice s of 4 rows, so two of them
// serve the group's 8 rows against one activation word loaded once and replicated (ld1r):
// each 32-bit lane of the sums belongs to one output row, and there is no horizontal sum. The
// integer sums are exact and the float work per (row, activation) is the layouts' rule, so
// these products equal the x86 tables' bit for bit, and batched rows equal one-row products.
// Internal linkage: the +dotprod copies must never stand in for the plain ones at link time.
#pragma once
#include <arm_neon.h>

#include <algorithm>
#include <cstring>

#include "backend/cpu/kernels.h"
#include "backend/cpu/packed_layouts.h"
#include "backend/cpu/quant_blocks.h"

namespace leapfrog::cpu::packed {
namespace {

// The two halves (rows 0-3, rows 4-7) of slice s of a packed block, as signed weights.
struct Half2 {
  int8x16_t lo, hi;
};

inline Half2 neon_slice(const BlockQ8_0x8& x, int s) {
  return {vld1q_s8(x.qs + 32 * s), vld1q_s8(x.qs + 32 * s + 16)};
}

// Vector k (k < 4) holds slice k in its low nibbles and slice k + 4 in its high ones.
inline void neon_nibbles(const uint8_t* qs, int s, uint8x16_t& lo, uint8x16_t& hi) {
  const uint8x16_t v0 = vld1q_u8(qs + 32 * (s % 4)), v1 = vld1q_u8(qs + 32 * (s % 4) + 16);
  const uint8x16_t m = vdupq_n_u8(0xF);
  lo = s < 4 ? vandq_u8(v0, m) : vshrq_n_u8(v0, 4);
  hi = s < 4 ? vandq_u8(v1, m) : vshrq_n_u8(v1, 4);
}

inline Half2 neon_slice(const BlockQ4_0x8& x, int s) {
  uint8x16_t lo, hi;
  neon_nibbles(x.qs, s, lo, hi);
  const int8x16_t eight = vdupq_n_s8(8);
  return {vsubq_s8(vreinterpretq_s8_u8(lo), eight), vsubq_s8(vreinterpretq_s8_u8(hi), eight)};
}

// The 5-bit codes (0..31) of slice s.
inline Half2 neon_five_bits(const uint8_t* qs, uint32_t qh, int s) {
  uint8x16_t lo, hi;
  neon_nibbles(qs, s, lo, hi);
  // Bit j of the slice's word is the fifth bit of byte j: bytes 0-15 from the word's first
  // two bytes, 16-31 from the last two.
  const uint8x16_t word = vreinterpretq_u8_u32(vdupq_n_u32(qh));
  const uint8x16_t idx_lo = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1};
  const uint8x16_t idx_hi = {2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3};
  const uint8x16_t bit = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
  const uint8x16_t sixteen = vdupq_n_u8(16);
  const uint8x16_t h_lo = vandq_u8(vtstq_u8(vqtbl1q_u8(word, idx_lo), bit), sixteen);
  const uint8x16_t h_hi = vandq_u8(vtstq_u8(vqtbl1q_u8(word, idx_hi), bit), sixteen);
  return {vreinterpretq_s8_u8(vorrq_u8(lo, h_lo)), vreinterpretq_s8_u8(vorrq_u8(hi, h_hi))};
}

inline Half2 neon_slice(const BlockQ5_0x8& x, int s) {
  const Half2 q = neon_five_bits(x.qs, x.qh[s], s);
  const int8x16_t off = vdupq_n_s8(16);
  return {vsubq_s8(q.lo, off), vsubq_s8(q.hi, off)};
}
inline Half2 neon_slice(const BlockQ5_1x8& x, int s) { return neon_five_bits(x.qs, x.qh[s], s); }
inline Half2 neon_slice(const BlockQ4_1x8& x, int s) {
  uint8x16_t lo, hi;
  neon_nibbles(x.qs, s, lo, hi);
  return {vreinterpretq_s8_u8(lo), vreinterpretq_s8_u8(hi)};
}
// IQ4_NL (and IQ4_XS's sub-blocks): the nibbles index the 16 levels.
inline Half2 neon_levels(const uint8_t* qs, int s) {
  uint8x16_t lo, hi;
  neon_nibbles(qs, s, lo, hi);
  const int8x16_t levels = vld1q_s8(format::kIq4NlValues);
  return {vqtbl1q_s8(levels, lo), vqtbl1q_s8(levels, hi)};
}
inline Half2 neon_slice(const BlockIQ4_NLx8& x, int s) { return neon_levels(x.qs, s); }

// 8 f16 values widened exactly, as the x86 tables' vcvtph2ps.
inline void neon_f16x8(const uint16_t* p, float32x4_t& lo, float32x4_t& hi) {
  const float16x8_t h = vreinterpretq_f16_u16(vld1q_u16(p));
  lo = vcvt_f32_f16(vget_low_f16(h)), hi = vcvt_f32_f16(vget_high_f16(h));
}

// A tile's float sums (8 per activation row c, at y + c * ldy): 0 when the walk starts at
// block 0, else where the previous chunk left them.
template <int C>
inline void load_sums(float32x4_t (&facc)[C][2], const float* y, size_t ldy, int64_t b0) {
  for (int c = 0; c < C; ++c) {
    facc[c][0] = b0 == 0 ? vdupq_n_f32(0) : vld1q_f32(y + c * ldy);
    facc[c][1] = b0 == 0 ? vdupq_n_f32(0) : vld1q_f32(y + c * ldy + 4);
  }
}
template <int C>
inline void store_sums(const float32x4_t (&facc)[C][2], float* y, size_t ldy) {
  for (int c = 0; c < C; ++c) {
    vst1q_f32(y + c * ldy, facc[c][0]);
    vst1q_f32(y + c * ldy + 4, facc[c][1]);
  }
}

// 8 packed rows x C activation rows over blocks [b0, b1); the float accumulators start at 0
// for b0 == 0 and are otherwise taken from y (8 floats per activation row c at y + c * ldy),
// where they are left — a walk over the inputs in chunks carries them there.
template <class I8, class Block, int C>
void neon_tile(const Block* x, const uint8_t* a, size_t as, float* y, size_t ldy, int64_t b0,
               int64_t b1) {
  float32x4_t facc[C][2];
  load_sums<C>(facc, y, ldy, b0);
  const auto act = [&](int c) { return reinterpret_cast<const ActQ8_0*>(a + c * as); };
  for (int64_t b = b0; b < b1; ++b) {
    __builtin_prefetch(x + b + 16);  // the weights stream from memory once, at the tile's pace
    int32x4_t acc[C][2];
    for (int c = 0; c < C; ++c) acc[c][0] = acc[c][1] = vdupq_n_s32(0);
    for (int s = 0; s < kSlices; ++s) {
      const Half2 w = neon_slice(x[b], s);
      for (int c = 0; c < C; ++c) {
        int32_t four;
        std::memcpy(&four, act(c)[b].qs + 4 * s, 4);
        const int8x16_t av = vreinterpretq_s8_s32(vdupq_n_s32(four));
        acc[c][0] = I8::dot(acc[c][0], w.lo, av);
        acc[c][1] = I8::dot(acc[c][1], w.hi, av);
      }
    }
    float32x4_t dw0, dw1, mw0, mw1;
    neon_f16x8(x[b].d, dw0, dw1);
    if constexpr (kHasMin<Block>) neon_f16x8(x[b].m, mw0, mw1);
    for (int c = 0; c < C; ++c) {
      const float da = act(c)[b].d;
      facc[c][0] = vfmaq_f32(facc[c][0], vcvtq_f32_s32(acc[c][0]), vmulq_n_f32(dw0, da));
      facc[c][1] = vfmaq_f32(facc[c][1], vcvtq_f32_s32(acc[c][1]), vmulq_n_f32(dw1, da));
      if constexpr (kHasMin<Block>) {
        // q8_block_total (quant_blocks.h) through the hardware's f16 rounding (to nearest even).
        const float sa =
            static_cast<float>(static_cast<__fp16>(da * static_cast<float>(act(c)[b].sum)));
        facc[c][0] = vfmaq_f32(facc[c][0], mw0, vdupq_n_f32(sa));
        facc[c][1] = vfmaq_f32(facc[c][1], mw1, vdupq_n_f32(sa));
      }
    }
  }
  store_sums<C>(facc, y, ldy);
}

// 8 packed IQ4_XS rows x C activation rows over super-blocks [b0, b1), as x86's tile_iq4_xs
// (packed_blocks.h): sub-block j's exact integer sum times its scale into the total, then one
// fma per super-block.
template <class I8, int C>
void neon_tile_iq4_xs(const BlockIQ4_XSx8* x, const uint8_t* a, size_t as, float* y, size_t ldy,
                      int64_t b0, int64_t b1) {
  float32x4_t facc[C][2];
  load_sums<C>(facc, y, ldy, b0);
  const auto act = [&](int c) { return reinterpret_cast<const ActQ8_K*>(a + c * as); };
  for (int64_t b = b0; b < b1; ++b) {
    __builtin_prefetch(x + b + 2);
    int32x4_t tot[C][2];
    for (int c = 0; c < C; ++c) tot[c][0] = tot[c][1] = vdupq_n_s32(0);
    for (int j = 0; j < 8; ++j) {
      const int16x8_t sc16 = vmovl_s8(vld1_s8(x[b].sc[j]));
      const int32x4_t sc0 = vmovl_s16(vget_low_s16(sc16)), sc1 = vmovl_s16(vget_high_s16(sc16));
      int32x4_t p[C][2];
      for (int c = 0; c < C; ++c) p[c][0] = p[c][1] = vdupq_n_s32(0);
      for (int s = 0; s < kSlices; ++s) {
        const Half2 w = neon_levels(x[b].qs[j], s);
        for (int c = 0; c < C; ++c) {
          int32_t four;
          std::memcpy(&four, act(c)[b].qs + 32 * j + 4 * s, 4);
          const int8x16_t av = vreinterpretq_s8_s32(vdupq_n_s32(four));
          p[c][0] = I8::dot(p[c][0], w.lo, av);
          p[c][1] = I8::dot(p[c][1], w.hi, av);
        }
      }
      for (int c = 0; c < C; ++c) {
        tot[c][0] = vmlaq_s32(tot[c][0], p[c][0], sc0);
        tot[c][1] = vmlaq_s32(tot[c][1], p[c][1], sc1);
      }
    }
    float32x4_t dw0, dw1;
    neon_f16x8(x[b].d, dw0, dw1);
    for (int c = 0; c < C; ++c) {
      const float da = act(c)[b].d;
      facc[c][0] = vfmaq_f32(facc[c][0], vcvtq_f32_s32(tot[c][0]), vmulq_n_f32(dw0, da));
      facc[c][1] = vfmaq_f32(facc[c][1], vcvtq_f32_s32(tot[c][1]), vmulq_n_f32(dw1, da));
    }
  }
  store_sums<C>(facc, y, ldy);
}

// 8 packed Q4_K rows x C activation rows over super-blocks [b0, b1), as x86's tile_q4_k
// (packed_blocks.h): the same exact integers tot and msum (the codes 0..15 are valid signed
// bytes for the dot), then acc += (d_a d) tot - (d_a dmin) msum, fused as x86's fnmadd.
template <class I8, int C>
void neon_tile_q4_k(const BlockQ4_Kx8* x, const uint8_t* a, size_t as, float* y, size_t ldy,
                    int64_t b0, int64_t b1) {
  float32x4_t facc[C][2];
  load_sums<C>(facc, y, ldy, b0);
  const auto act = [&](int c) { return reinterpret_cast<const ActQ8_K*>(a + c * as); };
  const uint8x16_t m4 = vdupq_n_u8(0xF);
  for (int64_t b = b0; b < b1; ++b) {
    __builtin_prefetch(x + b + 2);
    const BlockQ4_Kx8& xb = x[b];
    int32x4_t tot[C][2], msum[C][2];
    for (int c = 0; c < C; ++c) tot[c][0] = tot[c][1] = msum[c][0] = msum[c][1] = vdupq_n_s32(0);
    for (int j = 0; j < 8; ++j) {
      const int16x8_t sc16 = vreinterpretq_s16_u16(vmovl_u8(vld1_u8(xb.sc[j])));
      const int16x8_t m16 = vreinterpretq_s16_u16(vmovl_u8(vld1_u8(xb.m[j])));
      int32x4_t p[C][2];
      for (int c = 0; c < C; ++c) p[c][0] = p[c][1] = vdupq_n_s32(0);
      for (int s = 0; s < kSlices; ++s) {
        uint8x16_t lo = vld1q_u8(xb.qs[j / 2][s]), hi = vld1q_u8(xb.qs[j / 2][s] + 16);
        lo = j % 2 ? vshrq_n_u8(lo, 4) : vandq_u8(lo, m4);
        hi = j % 2 ? vshrq_n_u8(hi, 4) : vandq_u8(hi, m4);
        for (int c = 0; c < C; ++c) {
          int32_t four;
          std::memcpy(&four, act(c)[b].qs + 32 * j + 4 * s, 4);
          const int8x16_t av = vreinterpretq_s8_s32(vdupq_n_s32(four));
          p[c][0] = I8::dot(p[c][0], vreinterpretq_s8_u8(lo), av);
          p[c][1] = I8::dot(p[c][1], vreinterpretq_s8_u8(hi), av);
        }
      }
      // A lane of p holds 32 products (at most 61440): scaled in 32 bits.
      const int32x4_t sc0 = vmovl_s16(vget_low_s16(sc16)), sc1 = vmovl_s16(vget_high_s16(sc16));
      for (int c = 0; c < C; ++c) {
        const int16_t* bs = act(c)[b].bsums;
        const int32_t pair = int32_t(bs[2 * j]) + bs[2 * j + 1];
        tot[c][0] = vmlaq_s32(tot[c][0], p[c][0], sc0);
        tot[c][1] = vmlaq_s32(tot[c][1], p[c][1], sc1);
        msum[c][0] = vmlaq_n_s32(msum[c][0], vmovl_s16(vget_low_s16(m16)), pair);
        msum[c][1] = vmlaq_n_s32(msum[c][1], vmovl_s16(vget_high_s16(m16)), pair);
      }
    }
    float32x4_t dw[2], dmin[2];
    neon_f16x8(xb.d, dw[0], dw[1]);
    neon_f16x8(xb.dmin, dmin[0], dmin[1]);
    for (int c = 0; c < C; ++c) {
      const float da = act(c)[b].d;
      for (int h = 0; h < 2; ++h) {
        const float32x4_t t = vfmsq_f32(vmulq_f32(vmulq_n_f32(dw[h], da), vcvtq_f32_s32(tot[c][h])),
                                        vmulq_n_f32(dmin[h], da), vcvtq_f32_s32(msum[c][h]));
        facc[c][h] = vaddq_f32(facc[c][h], t);
      }
    }
  }
  store_sums<C>(facc, y, ldy);
}

// 8 packed Q6_K rows x C activation rows over super-blocks [b0, b1), as x86's tile_q6_k: the
// exact integer total sum_j sc_j * sum(q * a) - 32 sum_j sc_j * bsum_j, then one fma.
template <class I8, int C>
void neon_tile_q6_k(const BlockQ6_Kx8* x, const uint8_t* a, size_t as, float* y, size_t ldy,
                    int64_t b0, int64_t b1) {
  float32x4_t facc[C][2];
  load_sums<C>(facc, y, ldy, b0);
  const auto act = [&](int c) { return reinterpret_cast<const ActQ8_K*>(a + c * as); };
  const uint8x16_t m6 = vdupq_n_u8(0x3F);
  for (int64_t b = b0; b < b1; ++b) {
    __builtin_prefetch(x + b + 2);
    const BlockQ6_Kx8& xb = x[b];
    int32x4_t tot[C][2];
    for (int c = 0; c < C; ++c) tot[c][0] = tot[c][1] = vdupq_n_s32(0);
    for (int j = 0; j < 16; ++j) {
      // Row r's scale j: byte 2 r + j % 2 of the pairs xb.sc[j / 2].
      const int16x8_t pairs = vreinterpretq_s16_s8(vld1q_s8(&xb.sc[j / 2][0][0]));
      const int16x8_t sc16 = j % 2 ? vshrq_n_s16(pairs, 8) : vshrq_n_s16(vshlq_n_s16(pairs, 8), 8);
      // The four slices' codes, each half (rows 0-3, 4-7) alone: three as stored, the fourth
      // from the top two bits of the other three.
      uint8x16_t w[4][2];
      for (int h = 0; h < 2; ++h) {
        const uint8x16_t v0 = vld1q_u8(xb.qs[j][0] + 16 * h), v1 = vld1q_u8(xb.qs[j][1] + 16 * h),
                         v2 = vld1q_u8(xb.qs[j][2] + 16 * h);
        w[0][h] = vandq_u8(v0, m6);
        w[1][h] = vandq_u8(v1, m6);
        w[2][h] = vandq_u8(v2, m6);
        w[3][h] =
            vorrq_u8(vorrq_u8(vshrq_n_u8(v0, 6), vandq_u8(vshrq_n_u8(v1, 4), vdupq_n_u8(0x0C))),
                     vandq_u8(vshrq_n_u8(v2, 2), vdupq_n_u8(0x30)));
      }
      for (int c = 0; c < C; ++c) {
        int32x4_t p0 = vdupq_n_s32(0), p1 = vdupq_n_s32(0);
        for (int s = 0; s < 4; ++s) {
          int32_t four;
          std::memcpy(&four, act(c)[b].qs + 16 * j + 4 * s, 4);
          const int8x16_t av = vreinterpretq_s8_s32(vdupq_n_s32(four));
          p0 = I8::dot(p0, vreinterpretq_s8_u8(w[s][0]), av);
          p1 = I8::dot(p1, vreinterpretq_s8_u8(w[s][1]), av);
        }
        const int32_t off = -32 * int32_t(act(c)[b].bsums[j]);
        tot[c][0] =
            vmlaq_s32(tot[c][0], vaddq_s32(p0, vdupq_n_s32(off)), vmovl_s16(vget_low_s16(sc16)));
        tot[c][1] =
            vmlaq_s32(tot[c][1], vaddq_s32(p1, vdupq_n_s32(off)), vmovl_s16(vget_high_s16(sc16)));
      }
    }
    float32x4_t dw0, dw1;
    neon_f16x8(xb.d, dw0, dw1);
    for (int c = 0; c < C; ++c) {
      const float da = act(c)[b].d;
      facc[c][0] = vfmaq_f32(facc[c][0], vcvtq_f32_s32(tot[c][0]), vmulq_n_f32(dw0, da));
      facc[c][1] = vfmaq_f32(facc[c][1], vcvtq_f32_s32(tot[c][1]), vmulq_n_f32(dw1, da));
    }
  }
  store_sums<C>(facc, y, ldy);
}

// The tile walk_packed (packed_layouts.h) runs, on NEON's int8 dot primitive.
template <class I8>
struct NeonTile {
  template <int C, class Block>
  static void run(const Block* x, const uint8_t* a, size_t as, float* y, size_t ldy, int64_t b0,
                  int64_t b1) {
    if constexpr (std::is_same_v<Block, BlockIQ4_XSx8>) {
      neon_tile_iq4_xs<I8, C>(x, a, as, y, ldy, b0, b1);
    } else if constexpr (std::is_same_v<Block, BlockQ4_Kx8>) {
      neon_tile_q4_k<I8, C>(x, a, as, y, ldy, b0, b1);
    } else if constexpr (std::is_same_v<Block, BlockQ6_Kx8>) {
      neon_tile_q6_k<I8, C>(x, a, as, y, ldy, b0, b1);
    } else {
      neon_tile<I8, Block, C>(x, a, as, y, ldy, b0, b1);
    }
  }
};

// Sets the packed layouts and products of the 8-row types in t: the x86 tables' layouts and
// walk (packed_layouts.h) over NEON tiles.
template <class I8>
void set_packed_neon(Kernels& t) {
  set_packed_8row<NeonTile<I8>>(t);
  set_packed_kquant_8row<NeonTile<I8>>(t);
}

}  // namespace
}  // namespace leapfrog::cpu::packed
