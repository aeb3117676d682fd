// arm64 kernels with the int8 matrix multiply (Isa::NeonI8mm, FEAT_I8MM: Graviton 3 and later,
// Neoverse V1/N2, Cortex-A510/A710 and later): the dot-product table with the packed products
// of two or more activation rows on smmla. One smmla multiplies a 2 x 8 block of weights (two
// rows, 8 inputs) by a 2 x 8 block of activations (two rows): 32 multiply-adds where sdot does
// 16. The 8-row layouts of packed_layouts.h give a row's inputs 4s..4s+3 in slice s, so two
// slices zipped by 32-bit lanes are the 2 x 8 blocks of rows (0, 1), (2, 3), (4, 5), (6, 7);
// the activations need no rearranging (8 consecutive bytes of each of two rows). A lane of the
// sums is then one (row, activation) pair of a 2 x 2 block, and its integer sum and float steps
// are the sdot tile's (packed_neon.h), so the results equal the other levels' bit for bit:
// Q8_0, Q4_0, Q5_0, Q4_1, Q5_1 and IQ4_NL per 32-input block, Q4_K and Q6_K per sub-block
// (scaled per row in 32-bit lanes, as their sdot tiles do). One activation row and IQ4_XS keep
// the sdot tiles. This file alone is compiled with +i8mm (CMakeLists.txt) and runs only where
// the CPU reports it (detect_isa()).
#include <arm_neon.h>

#include "backend/cpu/kernels.h"
#include "backend/cpu/neon_sdot.h"
#include "backend/cpu/packed_neon.h"

namespace leapfrog::cpu {

namespace {

using namespace packed;

// The two halves of slice pair (2k, 2k + 1) as the four 2 x 8 weight blocks: rows (0, 1),
// (2, 3), (4, 5), (6, 7), each row's 8 inputs in order.
struct RowPairs {
  int8x16_t m[4];
};
inline RowPairs row_pairs(const Half2& s0, const Half2& s1) {
  const auto zip1 = [](int8x16_t a, int8x16_t b) {
    return vreinterpretq_s8_s32(vzip1q_s32(vreinterpretq_s32_s8(a), vreinterpretq_s32_s8(b)));
  };
  const auto zip2 = [](int8x16_t a, int8x16_t b) {
    return vreinterpretq_s8_s32(vzip2q_s32(vreinterpretq_s32_s8(a), vreinterpretq_s32_s8(b)));
  };
  return {{zip1(s0.lo, s1.lo), zip2(s0.lo, s1.lo), zip1(s0.hi, s1.hi), zip2(s0.hi, s1.hi)}};
}

// [v0, v0, v1, v1] of a vector's lanes 2k, 2k + 1 (k = 0: lanes 0, 1; k = 1: lanes 2, 3).
inline float32x4_t pair_lanes(float32x4_t v, int k) {
  return k == 0 ? vzip1q_f32(v, v) : vzip2q_f32(v, v);
}

// One pair of activation rows' float sums as the tiles below keep them (four 2 x 2 blocks,
// rows (2k, 2k + 1)), from and to the rows' 8 sums at y and y + ldy.
inline void load_pair_sums(float32x4_t (&f)[4], const float* y, size_t ldy, int64_t b0) {
  for (int h = 0; h < 2; ++h) {
    const float32x4_t y0 = b0 == 0 ? vdupq_n_f32(0) : vld1q_f32(y + 4 * h);
    const float32x4_t y1 = b0 == 0 ? vdupq_n_f32(0) : vld1q_f32(y + ldy + 4 * h);
    f[2 * h] = vzip1q_f32(y0, y1);
    f[2 * h + 1] = vzip2q_f32(y0, y1);
  }
}
inline void store_pair_sums(const float32x4_t (&f)[4], float* y, size_t ldy) {
  for (int h = 0; h < 2; ++h) {
    vst1q_f32(y + 4 * h, vuzp1q_f32(f[2 * h], f[2 * h + 1]));
    vst1q_f32(y + ldy + 4 * h, vuzp2q_f32(f[2 * h], f[2 * h + 1]));
  }
}

// 8 packed rows x C activation rows (C even) over blocks [b0, b1), the float sums as
// neon_tile's: 8 per activation row at y + c * ldy, started at 0 for b0 == 0 and otherwise
// taken from there, where they are left. facc[p][k] holds the 2 x 2 block of rows (2k, 2k + 1)
// and activations (2p, 2p + 1): lanes (2k, 2p), (2k, 2p + 1), (2k + 1, 2p), (2k + 1, 2p + 1).
template <class Block, int C>
void mmla_tile(const Block* x, const uint8_t* a, size_t as, float* y, size_t ldy, int64_t b0,
               int64_t b1) {
  static_assert(C % 2 == 0);
  constexpr int P = C / 2;
  const auto act = [&](int c) { return reinterpret_cast<const ActQ8_0*>(a + c * as); };
  float32x4_t facc[P][4];
  for (int p = 0; p < P; ++p) load_pair_sums(facc[p], y + 2 * p * ldy, ldy, b0);
  for (int64_t b = b0; b < b1; ++b) {
    __builtin_prefetch(x + b + 16);  // the weights stream from memory once, at the tile's pace
    int32x4_t acc[P][4];
    for (int p = 0; p < P; ++p) {
      for (int k = 0; k < 4; ++k) acc[p][k] = vdupq_n_s32(0);
    }
    for (int s = 0; s < kSlices; s += 2) {
      const RowPairs w = row_pairs(neon_slice(x[b], s), neon_slice(x[b], s + 1));
      for (int p = 0; p < P; ++p) {
        const int8x16_t av =
            vcombine_s8(vld1_s8(act(2 * p)[b].qs + 4 * s), vld1_s8(act(2 * p + 1)[b].qs + 4 * s));
        for (int k = 0; k < 4; ++k) acc[p][k] = vmmlaq_s32(acc[p][k], w.m[k], av);
      }
    }
    float32x4_t dw[2], mw[2];
    neon_f16x8(x[b].d, dw[0], dw[1]);
    if constexpr (kHasMin<Block>) neon_f16x8(x[b].m, mw[0], mw[1]);
    for (int p = 0; p < P; ++p) {
      const float da0 = act(2 * p)[b].d, da1 = act(2 * p + 1)[b].d;
      const float32x4_t da = {da0, da1, da0, da1};
      float32x4_t sa;
      if constexpr (kHasMin<Block>) {
        // q8_block_total (quant_blocks.h) through the hardware's f16 rounding, as neon_tile.
        const auto total = [](float d, int32_t sum) {
          return static_cast<float>(static_cast<__fp16>(d * static_cast<float>(sum)));
        };
        const float s0 = total(da0, act(2 * p)[b].sum), s1 = total(da1, act(2 * p + 1)[b].sum);
        sa = float32x4_t{s0, s1, s0, s1};
      }
      for (int k = 0; k < 4; ++k) {
        const float32x4_t dwk = pair_lanes(dw[k / 2], k % 2);
        facc[p][k] = vfmaq_f32(facc[p][k], vcvtq_f32_s32(acc[p][k]), vmulq_f32(dwk, da));
        if constexpr (kHasMin<Block>) {
          facc[p][k] = vfmaq_f32(facc[p][k], pair_lanes(mw[k / 2], k % 2), sa);
        }
      }
    }
  }
  for (int p = 0; p < P; ++p) store_pair_sums(facc[p], y + 2 * p * ldy, ldy);
}

inline int32x4_t pair_lanes(int32x4_t v, int k) {
  return k == 0 ? vzip1q_s32(v, v) : vzip2q_s32(v, v);
}

// Two activation rows' [v0, v1, v0, v1].
inline int32x4_t act_pair(int32_t v0, int32_t v1) { return int32x4_t{v0, v1, v0, v1}; }

// 8 packed Q4_K rows x 2 activation rows over super-blocks [b0, b1), as neon_tile_q4_k: per
// (row, activation) the same exact integers tot (sub-block sums times sc_j) and msum, then
// acc += (d_a d) tot - (d_a dmin) msum with the same float steps.
void mmla_pair_q4_k(const BlockQ4_Kx8* x, const uint8_t* a, size_t as, float* y, size_t ldy,
                    int64_t b0, int64_t b1) {
  const ActQ8_K* a0 = reinterpret_cast<const ActQ8_K*>(a);
  const ActQ8_K* a1 = reinterpret_cast<const ActQ8_K*>(a + as);
  const uint8x16_t m4 = vdupq_n_u8(0xF);
  float32x4_t facc[4];
  load_pair_sums(facc, y, ldy, b0);
  for (int64_t b = b0; b < b1; ++b) {
    __builtin_prefetch(x + b + 2);
    const BlockQ4_Kx8& xb = x[b];
    int32x4_t tot[4], msum[4];
    for (int k = 0; k < 4; ++k) tot[k] = msum[k] = vdupq_n_s32(0);
    for (int j = 0; j < 8; ++j) {
      int32x4_t p[4];
      for (int k = 0; k < 4; ++k) p[k] = vdupq_n_s32(0);
      for (int s = 0; s < kSlices; s += 2) {
        Half2 h[2];
        for (int t = 0; t < 2; ++t) {
          uint8x16_t lo = vld1q_u8(xb.qs[j / 2][s + t]), hi = vld1q_u8(xb.qs[j / 2][s + t] + 16);
          lo = j % 2 ? vshrq_n_u8(lo, 4) : vandq_u8(lo, m4);
          hi = j % 2 ? vshrq_n_u8(hi, 4) : vandq_u8(hi, m4);
          h[t] = {vreinterpretq_s8_u8(lo), vreinterpretq_s8_u8(hi)};
        }
        const RowPairs w = row_pairs(h[0], h[1]);
        const int8x16_t av =
            vcombine_s8(vld1_s8(a0[b].qs + 32 * j + 4 * s), vld1_s8(a1[b].qs + 32 * j + 4 * s));
        for (int k = 0; k < 4; ++k) p[k] = vmmlaq_s32(p[k], w.m[k], av);
      }
      const uint16x8_t sc16 = vmovl_u8(vld1_u8(xb.sc[j])), m16 = vmovl_u8(vld1_u8(xb.m[j]));
      const int32x4_t sc[2] = {vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(sc16))),
                               vreinterpretq_s32_u32(vmovl_u16(vget_high_u16(sc16)))};
      const int32x4_t mv[2] = {vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(m16))),
                               vreinterpretq_s32_u32(vmovl_u16(vget_high_u16(m16)))};
      const int32x4_t pairs = act_pair(int32_t(a0[b].bsums[2 * j]) + a0[b].bsums[2 * j + 1],
                                       int32_t(a1[b].bsums[2 * j]) + a1[b].bsums[2 * j + 1]);
      for (int k = 0; k < 4; ++k) {
        tot[k] = vmlaq_s32(tot[k], p[k], pair_lanes(sc[k / 2], k % 2));
        msum[k] = vmlaq_s32(msum[k], pair_lanes(mv[k / 2], k % 2), pairs);
      }
    }
    float32x4_t dw[2], dmin[2];
    neon_f16x8(xb.d, dw[0], dw[1]);
    neon_f16x8(xb.dmin, dmin[0], dmin[1]);
    const float32x4_t da = {a0[b].d, a1[b].d, a0[b].d, a1[b].d};
    for (int k = 0; k < 4; ++k) {
      const float32x4_t t =
          vfmsq_f32(vmulq_f32(vmulq_f32(pair_lanes(dw[k / 2], k % 2), da), vcvtq_f32_s32(tot[k])),
                    vmulq_f32(pair_lanes(dmin[k / 2], k % 2), da), vcvtq_f32_s32(msum[k]));
      facc[k] = vaddq_f32(facc[k], t);
    }
  }
  store_pair_sums(facc, y, ldy);
}

// 8 packed Q6_K rows x 2 activation rows over super-blocks [b0, b1), as neon_tile_q6_k: per
// (row, activation) the exact total sum_j sc_j * (sum(q * a) - 32 bsum_j), then one fma.
void mmla_pair_q6_k(const BlockQ6_Kx8* x, const uint8_t* a, size_t as, float* y, size_t ldy,
                    int64_t b0, int64_t b1) {
  const ActQ8_K* a0 = reinterpret_cast<const ActQ8_K*>(a);
  const ActQ8_K* a1 = reinterpret_cast<const ActQ8_K*>(a + as);
  const uint8x16_t m6 = vdupq_n_u8(0x3F);
  float32x4_t facc[4];
  load_pair_sums(facc, y, ldy, b0);
  for (int64_t b = b0; b < b1; ++b) {
    __builtin_prefetch(x + b + 2);
    const BlockQ6_Kx8& xb = x[b];
    int32x4_t tot[4];
    for (int k = 0; k < 4; ++k) tot[k] = vdupq_n_s32(0);
    for (int j = 0; j < 16; ++j) {
      // Row r's scale j: byte 2 r + j % 2 of the pairs xb.sc[j / 2] (as neon_tile_q6_k).
      const int16x8_t pairs = vreinterpretq_s16_s8(vld1q_s8(&xb.sc[j / 2][0][0]));
      const int16x8_t sc16 = j % 2 ? vshrq_n_s16(pairs, 8) : vshrq_n_s16(vshlq_n_s16(pairs, 8), 8);
      const int32x4_t sc[2] = {vmovl_s16(vget_low_s16(sc16)), vmovl_s16(vget_high_s16(sc16))};
      Half2 w[4];
      for (int hh = 0; hh < 2; ++hh) {
        const uint8x16_t v0 = vld1q_u8(xb.qs[j][0] + 16 * hh), v1 = vld1q_u8(xb.qs[j][1] + 16 * hh),
                         v2 = vld1q_u8(xb.qs[j][2] + 16 * hh);
        const uint8x16_t q[4] = {
            vandq_u8(v0, m6), vandq_u8(v1, m6), vandq_u8(v2, m6),
            vorrq_u8(vorrq_u8(vshrq_n_u8(v0, 6), vandq_u8(vshrq_n_u8(v1, 4), vdupq_n_u8(0x0C))),
                     vandq_u8(vshrq_n_u8(v2, 2), vdupq_n_u8(0x30)))};
        for (int t = 0; t < 4; ++t) (hh ? w[t].hi : w[t].lo) = vreinterpretq_s8_u8(q[t]);
      }
      int32x4_t p[4];
      for (int k = 0; k < 4; ++k) p[k] = vdupq_n_s32(0);
      for (int s = 0; s < 4; s += 2) {
        const RowPairs wp = row_pairs(w[s], w[s + 1]);
        const int8x16_t av =
            vcombine_s8(vld1_s8(a0[b].qs + 16 * j + 4 * s), vld1_s8(a1[b].qs + 16 * j + 4 * s));
        for (int k = 0; k < 4; ++k) p[k] = vmmlaq_s32(p[k], wp.m[k], av);
      }
      const int32x4_t off = act_pair(-32 * int32_t(a0[b].bsums[j]), -32 * int32_t(a1[b].bsums[j]));
      for (int k = 0; k < 4; ++k) {
        tot[k] = vmlaq_s32(tot[k], vaddq_s32(p[k], off), pair_lanes(sc[k / 2], k % 2));
      }
    }
    float32x4_t dw[2];
    neon_f16x8(xb.d, dw[0], dw[1]);
    const float32x4_t da = {a0[b].d, a1[b].d, a0[b].d, a1[b].d};
    for (int k = 0; k < 4; ++k) {
      facc[k] =
          vfmaq_f32(facc[k], vcvtq_f32_s32(tot[k]), vmulq_f32(pair_lanes(dw[k / 2], k % 2), da));
    }
  }
  store_pair_sums(facc, y, ldy);
}

// The 32-value types: blocks of kQK inputs with one f16 scale per row.
template <class Block>
constexpr bool kMmlaBlock =
    !std::is_same_v<Block, BlockIQ4_XSx8> && !std::is_same_v<Block, BlockQ4_Kx8> &&
    !std::is_same_v<Block, BlockQ6_Kx8>;

// The tile walk_packed (packed_layouts.h) runs: smmla for pairs of activation rows of the
// 32-value types, the sdot tiles for the rest.
struct MmlaTile {
  template <int C, class Block>
  static void run(const Block* x, const uint8_t* a, size_t as, float* y, size_t ldy, int64_t b0,
                  int64_t b1) {
    if constexpr (C % 2 == 0 && kMmlaBlock<Block>) {
      mmla_tile<Block, C>(x, a, as, y, ldy, b0, b1);
    } else if constexpr (C % 2 == 0 && std::is_same_v<Block, BlockQ4_Kx8>) {
      // One pair of activation rows at a time: two pairs' sums would not fit the registers.
      for (int c = 0; c < C; c += 2) mmla_pair_q4_k(x, a + c * as, as, y + c * ldy, ldy, b0, b1);
    } else if constexpr (C % 2 == 0 && std::is_same_v<Block, BlockQ6_Kx8>) {
      for (int c = 0; c < C; c += 2) mmla_pair_q6_k(x, a + c * as, as, y + c * ldy, ldy, b0, b1);
    } else {
      NeonTile<I8Sdot>::template run<C>(x, a, as, y, ldy, b0, b1);
    }
  }
};

}  // namespace

const Kernels* kernels_neon_i8mm() {
  static const Kernels k = [] {
    Kernels t = *kernels_neon_dot();
    t.isa = Isa::NeonI8mm;
    set_packed_8row<MmlaTile>(t);
    set_packed_kquant_8row<MmlaTile>(t);
    return t;
  }();
  return &k;
}

}  // namespace leapfrog::cpu
