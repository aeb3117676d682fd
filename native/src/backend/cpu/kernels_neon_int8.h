// The integer kernels of the arm64 path (Q8_0, Q4_0, Q5_0, Q4_1, Q5_1, IQ4_NL, Q4_K, Q5_K,
// Q6_K, Q2_K, Q3_K and IQ4_XS weights times 8-bit activations), written once over a 16-byte
// int8 dot primitive I8::dot(acc, a, b): lane i of acc gains a[4i..4i+3] . b[4i..4i+3].
// kernels_neon.cpp instantiates them with plain NEON (vmull_s8), kernels_neon_dotprod.cpp,
// compiled for the dot-product extension, with vdotq_s32. Both primitives split the bytes over
// lanes the same way, so the two tables give bit-identical results. Everything here has
// internal linkage: the +dotprod copies must never stand in for the plain ones at link time.
//
// Integer sums equal the scalar kernels' (kernels_scalar.cpp, kernels_scalar_lowbit.cpp). Float
// operations per (weight row, activation row) pair are one fixed chain whatever the tile or batch,
// so gemm rows are bit-identical to dot() and to one-token products.
#pragma once
#include <arm_neon.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "backend/cpu/kernels.h"
#include "backend/cpu/packed_neon.h"
#include "backend/cpu/quant_blocks.h"

namespace leapfrog::cpu {
namespace {  // internal linkage on purpose (see the top of the file)

// f16 block scales: exact widening, the same value as f16_to_f32.
inline float h2f(uint16_t h) {
  __fp16 v;
  std::memcpy(&v, &h, 2);
  return static_cast<float>(v);
}

// ---- Q8_0 / Q4_0 / Q5_0 / Q4_1 / Q5_1 / IQ4_NL: 32-value blocks with one f16 scale --------

enum class QType { Q8_0, Q4_0, Q5_0, Q4_1, Q5_1, IQ4_NL };

// Q4_1 and Q5_1 add an offset m per block: its product is m * s, s the activation block's
// d * sum rounded through f16 (llama.cpp's Q8_1), as kernels_scalar_lowbit.cpp forms it.
template <QType T>
constexpr bool has_min() {
  return T == QType::Q4_1 || T == QType::Q5_1;
}

// A weight block as 32 signed values (elements 0..15 in lo, 16..31 in hi), its scale and
// (Q4_1/Q5_1) its offset.
struct W32 {
  int8x16_t lo, hi;
  float d, m;
};

template <QType T>
constexpr size_t block_bytes() {
  return T == QType::Q8_0   ? sizeof(BlockQ8_0)
         : T == QType::Q4_0 ? sizeof(BlockQ4_0)
         : T == QType::Q5_0 ? sizeof(BlockQ5_0)
         : T == QType::Q4_1 ? sizeof(BlockQ4_1)
         : T == QType::Q5_1 ? sizeof(BlockQ5_1)
                            : sizeof(BlockIQ4_NL);
}

// The fifth bits of a Q5 block (bit j of qh for element j), as 16 in bytes of lo / hi.
inline void fifth_bits(const uint8_t* qh_bytes, uint8x16_t& h_lo, uint8x16_t& h_hi) {
  // Spread qh's bytes so byte j of a vector holds qh byte j / 8, then test bit j % 8.
  uint32_t qh;
  std::memcpy(&qh, qh_bytes, 4);
  const uint8x16_t qh4 = vreinterpretq_u8_u32(vdupq_n_u32(qh));
  const uint8x16_t idx_lo = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1};
  const uint8x16_t idx_hi = {2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3};
  const uint8x16_t bit = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
  const uint8x16_t sixteen = vdupq_n_u8(16);
  h_lo = vandq_u8(vtstq_u8(vqtbl1q_u8(qh4, idx_lo), bit), sixteen);
  h_hi = vandq_u8(vtstq_u8(vqtbl1q_u8(qh4, idx_hi), bit), sixteen);
}

template <QType T>
inline W32 load_w32(const uint8_t* row, int64_t b) {
  const uint8_t* p = row + b * block_bytes<T>();
  W32 w;
  w.m = 0;
  if constexpr (T == QType::Q8_0) {
    const BlockQ8_0* x = reinterpret_cast<const BlockQ8_0*>(p);
    w.lo = vld1q_s8(x->qs);
    w.hi = vld1q_s8(x->qs + 16);
    w.d = h2f(x->d);
  } else if constexpr (T == QType::Q4_0) {
    const BlockQ4_0* x = reinterpret_cast<const BlockQ4_0*>(p);
    const uint8x16_t q = vld1q_u8(x->qs);
    const int8x16_t eight = vdupq_n_s8(8);
    w.lo = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(q, vdupq_n_u8(0xF))), eight);
    w.hi = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(q, 4)), eight);
    w.d = h2f(x->d);
  } else if constexpr (T == QType::Q5_0) {
    const BlockQ5_0* x = reinterpret_cast<const BlockQ5_0*>(p);
    const uint8x16_t q = vld1q_u8(x->qs);
    uint8x16_t h_lo, h_hi;
    fifth_bits(x->qh, h_lo, h_hi);
    const int8x16_t off = vdupq_n_s8(16);
    w.lo = vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(vandq_u8(q, vdupq_n_u8(0xF)), h_lo)), off);
    w.hi = vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(vshrq_n_u8(q, 4), h_hi)), off);
    w.d = h2f(x->d);
  } else if constexpr (T == QType::Q4_1) {  // codes 0..15 as they are
    const BlockQ4_1* x = reinterpret_cast<const BlockQ4_1*>(p);
    const uint8x16_t q = vld1q_u8(x->qs);
    w.lo = vreinterpretq_s8_u8(vandq_u8(q, vdupq_n_u8(0xF)));
    w.hi = vreinterpretq_s8_u8(vshrq_n_u8(q, 4));
    w.d = h2f(x->d);
    w.m = h2f(x->m);
  } else if constexpr (T == QType::Q5_1) {  // codes 0..31
    const BlockQ5_1* x = reinterpret_cast<const BlockQ5_1*>(p);
    const uint8x16_t q = vld1q_u8(x->qs);
    uint8x16_t h_lo, h_hi;
    fifth_bits(x->qh, h_lo, h_hi);
    w.lo = vreinterpretq_s8_u8(vorrq_u8(vandq_u8(q, vdupq_n_u8(0xF)), h_lo));
    w.hi = vreinterpretq_s8_u8(vorrq_u8(vshrq_n_u8(q, 4), h_hi));
    w.d = h2f(x->d);
    w.m = h2f(x->m);
  } else {  // IQ4_NL: the nibbles index the 16 levels
    const BlockIQ4_NL* x = reinterpret_cast<const BlockIQ4_NL*>(p);
    const uint8x16_t q = vld1q_u8(x->qs);
    const int8x16_t levels = vld1q_s8(kIq4NlValues);
    w.lo = vqtbl1q_s8(levels, vandq_u8(q, vdupq_n_u8(0xF)));
    w.hi = vqtbl1q_s8(levels, vshrq_n_u8(q, 4));
    w.d = h2f(x->d);
  }
  return w;
}

// A tile of R weight rows x C activation rows: each weight block is unpacked once for the C
// activation rows, each activation block loaded once for the R weight rows. Every pair runs
// the same chain: acc = fma(int lanes, d_w * d_a, acc) block after block from zero, then
// one horizontal sum.
template <class I8, QType T, int R, int C>
void tile_q8_0(const uint8_t* w, size_t ws, const uint8_t* a, size_t as, float* y, size_t ldy,
               int64_t nb) {
  float32x4_t acc[R][C];
  float ms[R][C];  // Q4_1/Q5_1: the offsets' chain
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = vdupq_n_f32(0), ms[r][c] = 0;
  for (int64_t b = 0; b < nb; ++b) {
    W32 wv[R];
    for (int r = 0; r < R; ++r) {
      if constexpr (R > 1) {
        // R rows are read side by side: fetch the next R rows' blocks ahead.
        __builtin_prefetch(w + (R + r) * ws + b * block_bytes<T>());
      }
      wv[r] = load_w32<T>(w + r * ws, b);
    }
    for (int c = 0; c < C; ++c) {
      const ActQ8_0* ya = reinterpret_cast<const ActQ8_0*>(a + c * as) + b;
      const int8x16_t a0 = vld1q_s8(ya->qs), a1 = vld1q_s8(ya->qs + 16);
      float sa = 0;
      if constexpr (has_min<T>()) {
        sa = static_cast<float>(static_cast<__fp16>(ya->d * static_cast<float>(ya->sum)));
      }
      for (int r = 0; r < R; ++r) {
        const int32x4_t p = I8::dot(I8::dot(vdupq_n_s32(0), wv[r].lo, a0), wv[r].hi, a1);
        acc[r][c] = vfmaq_n_f32(acc[r][c], vcvtq_f32_s32(p), wv[r].d * ya->d);
        if constexpr (has_min<T>()) ms[r][c] = std::fma(wv[r].m, sa, ms[r][c]);
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) y[c * ldy + r] = vaddvq_f32(acc[r][c]) + ms[r][c];
}

template <class I8, QType T, int R>
void cols_q8_0(const uint8_t* w, size_t ws, const uint8_t* a, size_t as, int n, float* y,
               size_t ldy, int64_t nb) {
  int i = 0;
  for (; i + 4 <= n; i += 4) tile_q8_0<I8, T, R, 4>(w, ws, a + i * as, as, y + i * ldy, ldy, nb);
  if (n - i >= 2) {
    tile_q8_0<I8, T, R, 2>(w, ws, a + i * as, as, y + i * ldy, ldy, nb);
    i += 2;
  }
  if (i < n) tile_q8_0<I8, T, R, 1>(w, ws, a + i * as, as, y + i * ldy, ldy, nb);
}

template <class I8, QType T>
void gemm_q8_0(const uint8_t* w, size_t ws, int64_t rows, const uint8_t* a, size_t as, int n,
               float* y, size_t ldy, int64_t cols) {
  const int64_t nb = cols / kQK;
  int64_t r = 0;
  for (; r + 2 <= rows; r += 2) cols_q8_0<I8, T, 2>(w + r * ws, ws, a, as, n, y + r, ldy, nb);
  for (; r < rows; ++r) cols_q8_0<I8, T, 1>(w + r * ws, ws, a, as, n, y + r, ldy, nb);
}

template <class I8, QType T>
float dot_q8_0(const void* w, const void* a, int64_t n) {
  float out;
  tile_q8_0<I8, T, 1, 1>(static_cast<const uint8_t*>(w), 0, static_cast<const uint8_t*>(a), 0, &out,
                         0, n / kQK);
  return out;
}

// ---- K-quants and IQ4_XS: 256-value super-blocks -------------------------------------------
//
// One weight row's super-block is unpacked once into sixteen vectors of quants (vector m
// pairs with activations [16m, 16m + 16)) and integer scales, then multiplied with the same
// super-block of every activation row of the batch. Per pair the integer sums are reduced
// exactly and the float term is formed as the scalar kernel forms it (kernels_scalar.cpp,
// kernels_scalar_lowbit.cpp).

enum class KType { Q4, Q5, Q6, Q2, Q3, IQ4XS };

// Types whose sixteen vectors each carry their own scale (sub-blocks of 16, or IQ4_XS's 32
// given to both of their vectors): one multiply of each vector's sum by its scale.
template <KType T>
constexpr bool per_vector_scale() {
  return T == KType::Q6 || T == KType::Q2 || T == KType::Q3 || T == KType::IQ4XS;
}

struct KBlock {
  int8x16_t q[16];
  int32_t sc[16];   // Q4_K/Q5_K: scale of sub-block j (vectors 2j, 2j+1); Q6_K: of vector m
  int16x8_t m16;    // Q4_K/Q5_K: the 8 mins
  int16x8_t s6[2];  // Q6_K: the 16 scales, for the -32 offset; Q2_K: the 16 mins
  float dw, dmin;   // f16 scales as f32 (dmin unused by Q6_K)
};

template <KType T>
inline void unpack_kblock(const uint8_t* row, int64_t b, KBlock& kb) {
  const uint8x16_t m4 = vdupq_n_u8(0xF);
  if constexpr (T == KType::Q6) {
    const BlockQ6_K* x = reinterpret_cast<const BlockQ6_K*>(row) + b;
    const uint8x16_t m2 = vdupq_n_u8(0x30);  // the two high bits, in place at bits 4..5
    for (int half = 0; half < 2; ++half) {
      const uint8_t* ql = x->ql + 64 * half;
      const uint8_t* qh = x->qh + 32 * half;
      int8x16_t* v = kb.q + 8 * half;
      for (int s = 0; s < 2; ++s) {  // s: the first or second 16 of each 32
        const uint8x16_t l0 = vld1q_u8(ql + 16 * s), l1 = vld1q_u8(ql + 32 + 16 * s);
        const uint8x16_t h = vld1q_u8(qh + 16 * s);
        // Element l of the 32-value rows 0..3: low bits from ql[l] / ql[l + 32] (low nibble
        // for rows 0, 1, high for 2, 3), high bits from bits 2k..2k+1 of qh[l].
        v[0 + s] = vreinterpretq_s8_u8(vorrq_u8(vandq_u8(l0, m4), vandq_u8(vshlq_n_u8(h, 4), m2)));
        v[2 + s] = vreinterpretq_s8_u8(vorrq_u8(vandq_u8(l1, m4), vandq_u8(vshlq_n_u8(h, 2), m2)));
        v[4 + s] = vreinterpretq_s8_u8(vorrq_u8(vshrq_n_u8(l0, 4), vandq_u8(h, m2)));
        v[6 + s] = vreinterpretq_s8_u8(vorrq_u8(vshrq_n_u8(l1, 4), vandq_u8(vshrq_n_u8(h, 2), m2)));
      }
    }
    const int8x16_t sc = vld1q_s8(x->scales);
    for (int m = 0; m < 16; ++m) kb.sc[m] = x->scales[m];
    kb.s6[0] = vmovl_s8(vget_low_s8(sc));
    kb.s6[1] = vmovl_high_s8(sc);
    kb.dw = h2f(x->d);
  } else if constexpr (T == KType::Q2 || T == KType::Q3) {
    // Vector m: weights 16m.. of run k = (m % 8) / 2 of half m / 8, its 2-bit codes in bits
    // 2k..2k+1 of 16 bytes of the half's 32; Q3_K subtracts 4 where bit m / 2 of hmask is
    // clear.
    const uint8x16_t three = vdupq_n_u8(3);
    const uint8_t* qs;
    if constexpr (T == KType::Q2) {
      qs = (reinterpret_cast<const BlockQ2_K*>(row) + b)->qs;
    } else {
      qs = (reinterpret_cast<const BlockQ3_K*>(row) + b)->qs;
    }
    for (int m = 0; m < 16; ++m) {
      const int half = m / 8, k = (m % 8) / 2, s = m % 2;
      const uint8x16_t raw = vld1q_u8(qs + 32 * half + 16 * s);
      const uint8x16_t low =
          vandq_u8(vshlq_u8(raw, vdupq_n_s8(static_cast<int8_t>(-2 * k))), three);
      if constexpr (T == KType::Q2) {
        kb.q[m] = vreinterpretq_s8_u8(low);
      } else {
        const BlockQ3_K* x = reinterpret_cast<const BlockQ3_K*>(row) + b;
        const uint8x16_t hm = vld1q_u8(x->hmask + 16 * s);
        const uint8x16_t clear =
            vceqq_u8(vandq_u8(hm, vdupq_n_u8(static_cast<uint8_t>(1u << (m / 2)))), vdupq_n_u8(0));
        kb.q[m] =
            vsubq_s8(vreinterpretq_s8_u8(low), vreinterpretq_s8_u8(vandq_u8(clear, vdupq_n_u8(4))));
      }
    }
    if constexpr (T == KType::Q2) {
      const BlockQ2_K* x = reinterpret_cast<const BlockQ2_K*>(row) + b;
      int16_t mins[16];
      for (int m = 0; m < 16; ++m) kb.sc[m] = x->scales[m] & 0xF, mins[m] = x->scales[m] >> 4;
      kb.s6[0] = vld1q_s16(mins);
      kb.s6[1] = vld1q_s16(mins + 8);
      kb.dw = h2f(x->d);
      kb.dmin = h2f(x->dmin);
    } else {
      const BlockQ3_K* x = reinterpret_cast<const BlockQ3_K*>(row) + b;
      int8_t sc[16];
      q3k_scales(x->scales, sc);
      for (int m = 0; m < 16; ++m) kb.sc[m] = sc[m];
      kb.dw = h2f(x->d);
    }
  } else if constexpr (T == KType::IQ4XS) {
    // Sub-block j: vector 2j the levels of the low nibbles of qs[16j..], 2j + 1 of the high.
    const BlockIQ4_XS* x = reinterpret_cast<const BlockIQ4_XS*>(row) + b;
    const int8x16_t levels = vld1q_s8(kIq4NlValues);
    for (int j = 0; j < 8; ++j) {
      const uint8x16_t raw = vld1q_u8(x->qs + 16 * j);
      kb.q[2 * j] = vqtbl1q_s8(levels, vandq_u8(raw, m4));
      kb.q[2 * j + 1] = vqtbl1q_s8(levels, vshrq_n_u8(raw, 4));
      kb.sc[2 * j] = kb.sc[2 * j + 1] = iq4xs_scale(*x, j);
    }
    kb.dw = h2f(x->d);
  } else {
    const K4Fields f = k4_fields<T == KType::Q5>(row, b);
    const uint8_t *scales = f.scales, *q = f.qs;
    const uint16_t d = f.d, dmin = f.dmin;
    uint8x16_t h[2];
    if constexpr (T == KType::Q5) {
      const uint8_t* qh = (reinterpret_cast<const BlockQ5_K*>(row) + b)->qh;
      h[0] = vld1q_u8(qh);
      h[1] = vld1q_u8(qh + 16);
    }
    for (int c = 0; c < 4; ++c) {  // 64 values: sub-block 2c in low nibbles, 2c + 1 in high
      for (int s = 0; s < 2; ++s) {
        const uint8x16_t raw = vld1q_u8(q + 32 * c + 16 * s);
        uint8x16_t lo = vandq_u8(raw, m4), hi = vshrq_n_u8(raw, 4);
        if constexpr (T == KType::Q5) {
          // The fifth bit: bit 2c of qh[l] for sub-block 2c, bit 2c + 1 for 2c + 1.
          const uint8x16_t sixteen = vdupq_n_u8(16);
          lo = vorrq_u8(lo, vandq_u8(vtstq_u8(h[s], vdupq_n_u8(uint8_t(1u << (2 * c)))), sixteen));
          hi = vorrq_u8(hi, vandq_u8(vtstq_u8(h[s], vdupq_n_u8(uint8_t(2u << (2 * c)))), sixteen));
        }
        kb.q[4 * c + s] = vreinterpretq_s8_u8(lo);
        kb.q[4 * c + 2 + s] = vreinterpretq_s8_u8(hi);
      }
    }
    int16_t mins[8];
    for (int j = 0; j < 8; ++j) {
      uint8_t sc, m;
      scale_min_k4(j, scales, sc, m);
      kb.sc[j] = sc;
      mins[j] = m;
    }
    kb.m16 = vld1q_s16(mins);
    kb.dw = h2f(d);
    kb.dmin = h2f(dmin);
  }
}

// One super-block of one (row, activation) pair, added to that pair's accumulator.
template <class I8, KType T>
inline float kblock_pair(const KBlock& kb, const ActQ8_K* ya, float facc) {
  const int32x4_t zero = vdupq_n_s32(0);
  int32x4_t acc = zero;
  const int16x8_t bs0 = vld1q_s16(ya->bsums), bs1 = vld1q_s16(ya->bsums + 8);
  if constexpr (per_vector_scale<T>()) {
    for (int m = 0; m < 16; ++m) {
      acc = vmlaq_n_s32(acc, I8::dot(zero, kb.q[m], vld1q_s8(ya->qs + 16 * m)), kb.sc[m]);
    }
    if constexpr (T == KType::Q3 || T == KType::IQ4XS) {
      return facc + kb.dw * ya->d * static_cast<float>(vaddvq_s32(acc));
    }
    // Q6_K: the -32 of every weight; Q2_K: the mins; both through the activation sums.
    int32x4_t sb = vmull_s16(vget_low_s16(kb.s6[0]), vget_low_s16(bs0));
    sb = vmlal_high_s16(sb, kb.s6[0], bs0);
    sb = vmlal_s16(sb, vget_low_s16(kb.s6[1]), vget_low_s16(bs1));
    sb = vmlal_high_s16(sb, kb.s6[1], bs1);
    if constexpr (T == KType::Q2) {
      const float d = ya->d * kb.dw;
      const float dmin = ya->d * kb.dmin;
      return facc +
             (d * static_cast<float>(vaddvq_s32(acc)) - dmin * static_cast<float>(vaddvq_s32(sb)));
    }
    const int isum = vaddvq_s32(acc) - 32 * vaddvq_s32(sb);
    return facc + kb.dw * ya->d * static_cast<float>(isum);
  } else {
    for (int j = 0; j < 8; ++j) {
      const int32x4_t p = I8::dot(I8::dot(zero, kb.q[2 * j], vld1q_s8(ya->qs + 32 * j)),
                                  kb.q[2 * j + 1], vld1q_s8(ya->qs + 32 * j + 16));
      acc = vmlaq_n_s32(acc, p, kb.sc[j]);
    }
    const int sum_q = vaddvq_s32(acc);
    // Sub-block j's activation sum is bsums[2j] + bsums[2j + 1].
    const int16x8_t bsj = vpaddq_s16(bs0, bs1);
    const int sum_m =
        vaddvq_s32(vmlal_high_s16(vmull_s16(vget_low_s16(bsj), vget_low_s16(kb.m16)), bsj, kb.m16));
    const float d = kb.dw * ya->d;
    const float dmin = kb.dmin * ya->d;
    return facc + (d * static_cast<float>(sum_q) - dmin * static_cast<float>(sum_m));
  }
}

// Rows [0, rows) x activation rows [0, nc) (nc <= 32; kNc > 0 fixes it at compile time).
template <class I8, KType T, int kNc>
void kquant_rows(const uint8_t* w, size_t ws, int64_t rows, const uint8_t* a, size_t as, int nc,
                 float* y, size_t ldy, int64_t nb) {
  if constexpr (kNc > 0) nc = kNc;
  float facc[kNc > 0 ? kNc : 32];
  KBlock kb;
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* row = w + r * ws;
    for (int c = 0; c < nc; ++c) facc[c] = 0;
    for (int64_t b = 0; b < nb; ++b) {
      unpack_kblock<T>(row, b, kb);
      for (int c = 0; c < nc; ++c) {
        facc[c] = kblock_pair<I8, T>(kb, reinterpret_cast<const ActQ8_K*>(a + c * as) + b, facc[c]);
      }
    }
    for (int c = 0; c < nc; ++c) y[c * ldy + r] = facc[c];
  }
}

template <class I8, KType T>
void gemm_kquant(const uint8_t* w, size_t ws, int64_t rows, const uint8_t* a, size_t as, int n,
                 float* y, size_t ldy, int64_t cols) {
  const int64_t nb = cols / kQK_K;
  if (n == 1) return kquant_rows<I8, T, 1>(w, ws, rows, a, as, 1, y, ldy, nb);
  // Activation rows in groups of up to 32 (their blocks stay in cache while a weight row is
  // swept over them).
  for (int i0 = 0; i0 < n; i0 += 32) {
    const int nc = std::min(32, n - i0);
    kquant_rows<I8, T, 0>(w, ws, rows, a + i0 * as, as, nc, y + i0 * ldy, ldy, nb);
  }
}

template <class I8, KType T>
float dot_kquant(const void* w, const void* a, int64_t n) {
  float out;
  kquant_rows<I8, T, 1>(static_cast<const uint8_t*>(w), 0, 1, static_cast<const uint8_t*>(a), 0, 1,
                        &out, 0, n / kQK_K);
  return out;
}

// Puts the integer kernels built on I8 into a table (slots as kernel_slot numbers them).
template <class I8>
void set_int8_kernels(Kernels& t) {
  t.dot[3] = dot_q8_0<I8, QType::Q8_0>;
  t.dot[4] = dot_q8_0<I8, QType::Q4_0>;
  t.dot[8] = dot_q8_0<I8, QType::Q5_0>;
  t.dot[9] = dot_q8_0<I8, QType::Q4_1>;
  t.dot[10] = dot_q8_0<I8, QType::Q5_1>;
  t.dot[11] = dot_q8_0<I8, QType::IQ4_NL>;
  t.dot[5] = dot_kquant<I8, KType::Q4>;
  t.dot[6] = dot_kquant<I8, KType::Q5>;
  t.dot[7] = dot_kquant<I8, KType::Q6>;
  t.gemm[3] = gemm_q8_0<I8, QType::Q8_0>;
  t.gemm[4] = gemm_q8_0<I8, QType::Q4_0>;
  t.gemm[8] = gemm_q8_0<I8, QType::Q5_0>;
  t.gemm[9] = gemm_q8_0<I8, QType::Q4_1>;
  t.gemm[10] = gemm_q8_0<I8, QType::Q5_1>;
  t.gemm[11] = gemm_q8_0<I8, QType::IQ4_NL>;
  t.gemm[5] = gemm_kquant<I8, KType::Q4>;
  t.gemm[6] = gemm_kquant<I8, KType::Q5>;
  t.gemm[7] = gemm_kquant<I8, KType::Q6>;
  t.dot[12] = dot_kquant<I8, KType::Q2>;
  t.dot[13] = dot_kquant<I8, KType::Q3>;
  t.dot[14] = dot_kquant<I8, KType::IQ4XS>;
  t.gemm[12] = gemm_kquant<I8, KType::Q2>;
  t.gemm[13] = gemm_kquant<I8, KType::Q3>;
  t.gemm[14] = gemm_kquant<I8, KType::IQ4XS>;
  packed::set_packed_neon<I8>(t);
}

}  // namespace
}  // namespace leapfrog::cpu
