// AVX2 products of K-quant weights (Q4_K, Q5_K, Q6_K) with Q8_K activations, in the file's
// layout: every Q5_K matrix, and the Q4_K and Q6_K ones whose rows are not a whole number of
// packed groups (the others are packed 8 rows at load: packed_layouts.h, packed_blocks.h).
//
// A super-block (256 weights) is eight 32-value vectors of unsigned quants, each with an
// int16 scale vector; the integer sum of a (row, activation) pair over the super-block is
// sum_k madd(maddubs(q_k, a_k), sc_k), then one float step adds the super-block to the
// pair's accumulator. Two loops share these pieces:
// - decoding and short drafts (1..4 activation rows): each 64-weight pair of vectors is
//   unpacked and used at once, so nothing is kept but the running sums (unpacking the whole
//   super-block first spills registers, and decode is then compute-bound instead of
//   memory-bound);
// - larger batches: a row's super-block is unpacked once into registers and memory (KBlock) and
//   multiplied with the same super-block of every activation row.
// Both give every pair the same integer lanes and the same float steps, so a batched result
// equals the one-row result bit for bit.
#include <algorithm>

#include "backend/cpu/avx2_common.h"
#include "backend/cpu/avx2_parts.h"
#include "backend/cpu/quant_blocks.h"

namespace leapfrog::cpu::avx2 {

namespace {

enum class KType { Q4, Q5, Q6 };

// What a super-block contributes besides its quants: sub-block scales, mins (Q4/Q5) or the
// 16 scales for the -32 offset (Q6), and the f16 super-block scales.
struct KHeader {
  __m256i sc16;     // Q4/Q5: the 8 scales as int16, in both 128-bit lanes
  __m256i m16;      // Q4/Q5: the 8 mins, each twice (pairs with bsums); Q6: the 16 scales
  __m128i sc8;      // Q6: the 16 int8 scales
  __m256 dw, dmin;  // dmin unused by Q6
};

template <KType T>
inline KHeader load_header(const uint8_t* row, int64_t b) {
  KHeader h;
  if constexpr (T == KType::Q6) {
    const BlockQ6_K* x = reinterpret_cast<const BlockQ6_K*>(row) + b;
    h.sc8 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x->scales));
    h.m16 = _mm256_cvtepi8_epi16(h.sc8);
    h.dw = _mm256_set1_ps(h2f(x->d));
  } else {
    const K4Fields f = k4_fields<T == KType::Q5>(row, b);
    uint32_t sm4[4];
    k4_scales_mins(f.scales, sm4);
    const __m128i sm = _mm_setr_epi32(sm4[0], sm4[1], sm4[2], sm4[3]);  // 8 scales, 8 mins
    h.sc16 = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(sm));
    h.m16 = _mm256_cvtepu8_epi16(_mm_shuffle_epi8(
        sm, _mm_setr_epi8(8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15)));
    h.dw = _mm256_set1_ps(h2f(f.d));
    h.dmin = _mm256_set1_ps(h2f(f.dmin));
  }
  return h;
}

// The int16 scale vector of quant vector k (0..7).
template <KType T>
inline __m256i scale_vec(const KHeader& h, int k) {
  if constexpr (T == KType::Q6) {
    // Low 128-bit lane: 16 weights with scale 2k; high lane: scale 2k + 1.
    const __m128i pick =
        _mm_set_epi64x(0x0101010101010101LL * (2 * k + 1), 0x0101010101010101LL * (2 * k));
    return _mm256_cvtepi8_epi16(_mm_shuffle_epi8(h.sc8, pick));
  } else {
    return _mm256_shuffle_epi8(h.sc16,
                               _mm256_set1_epi16(static_cast<int16_t>(0x0100 + 0x0202 * k)));
  }
}

// Quant vectors 2p and 2p + 1 (p = 0..3) of super-block b, as unsigned bytes.
template <KType T>
inline void load_quant_pair(const uint8_t* row, int64_t b, int p, __m256i& q0, __m256i& q1) {
  const __m256i m4 = _mm256_set1_epi8(0xF);
  if constexpr (T == KType::Q6) {
    // Vectors 4h..4h+3 of half h come from ql[64h..64h+64) (low nibbles, then high) and
    // two bits each of qh[32h..32h+32).
    const BlockQ6_K* x = reinterpret_cast<const BlockQ6_K*>(row) + b;
    const int half = p / 2, shift = 4 * (p % 2);
    const __m256i m2 = _mm256_set1_epi8(3);
    const __m256i l0 = load256(x->ql + 64 * half), l1 = load256(x->ql + 64 * half + 32);
    const __m256i h = load256(x->qh + 32 * half);
    const __m128i s0 = _mm_cvtsi32_si128(shift), s1 = _mm_cvtsi32_si128(shift + 2);
    q0 = _mm256_or_si256(_mm256_and_si256(_mm256_srl_epi16(l0, s0), m4),
                         _mm256_slli_epi16(_mm256_and_si256(_mm256_srl_epi16(h, s0), m2), 4));
    q1 = _mm256_or_si256(_mm256_and_si256(_mm256_srl_epi16(l1, s0), m4),
                         _mm256_slli_epi16(_mm256_and_si256(_mm256_srl_epi16(h, s1), m2), 4));
  } else {
    const uint8_t* q = k4_fields<T == KType::Q5>(row, b).qs;
    const __m256i raw = load256(q + 32 * p);
    q0 = _mm256_and_si256(raw, m4);
    q1 = _mm256_and_si256(_mm256_srli_epi16(raw, 4), m4);
    if constexpr (T == KType::Q5) {
      // Fifth bits: bit 2p of qh[l] for vector 2p, bit 2p + 1 for vector 2p + 1.
      const __m256i hbits = load256((reinterpret_cast<const BlockQ5_K*>(row) + b)->qh);
      const __m256i b0 = _mm256_set1_epi8(static_cast<char>(1u << (2 * p)));
      const __m256i b1 = _mm256_set1_epi8(static_cast<char>(2u << (2 * p)));
      const __m256i sixteen = _mm256_set1_epi8(16);
      q0 = _mm256_or_si256(
          q0, _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(hbits, b0), b0), sixteen));
      q1 = _mm256_or_si256(
          q1, _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(hbits, b1), b1), sixteen));
    }
  }
}

inline __m256i scaled_dot(__m256i q, const int8_t* a, __m256i sc) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(q, load256(a)), sc);
}

// Adds one super-block's integer sum `acc` (lanes as produced above) of a pair to the
// pair's float accumulator.
template <KType T>
inline __m256 finish_block(__m256i acc, const KHeader& h, const ActQ8_K* ya, __m256 facc) {
  const __m256i bs = load256(ya->bsums);
  const __m256 da = _mm256_broadcast_ss(&ya->d);
  if constexpr (T == KType::Q6) {
    // The -32 of every weight, through the activation sums.
    acc = _mm256_sub_epi32(acc, _mm256_slli_epi32(_mm256_madd_epi16(h.m16, bs), 5));
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(acc), _mm256_mul_ps(h.dw, da), facc);
  } else {
    const __m256 mins = _mm256_cvtepi32_ps(_mm256_madd_epi16(h.m16, bs));
    const __m256 t = _mm256_fnmadd_ps(mins, h.dmin, _mm256_mul_ps(_mm256_cvtepi32_ps(acc), h.dw));
    return _mm256_fmadd_ps(t, da, facc);
  }
}

// One super-block of one row with C activation rows (C <= 4), added to facc[0..C).
template <KType T, int C>
inline void few_block(const uint8_t* row, int64_t b, const ActQ8_K* const* ya, __m256* facc) {
  const KHeader h = load_header<T>(row, b);
  __m256i acc[C];
#pragma GCC unroll 4
  for (int c = 0; c < C; ++c) acc[c] = _mm256_setzero_si256();
#pragma GCC unroll 4
  for (int p = 0; p < 4; ++p) {
    __m256i q0, q1;
    load_quant_pair<T>(row, b, p, q0, q1);
    const __m256i s0 = scale_vec<T>(h, 2 * p), s1 = scale_vec<T>(h, 2 * p + 1);
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) {
      acc[c] = _mm256_add_epi32(acc[c], scaled_dot(q0, ya[c]->qs + 64 * p, s0));
      acc[c] = _mm256_add_epi32(acc[c], scaled_dot(q1, ya[c]->qs + 64 * p + 32, s1));
    }
  }
#pragma GCC unroll 4
  for (int c = 0; c < C; ++c) facc[c] = finish_block<T>(acc[c], h, ya[c], facc[c]);
}

// Decoding and short drafts (1..4 activation rows): rows [0, rows) of w, each 64-weight pair
// unpacked and used at once for every activation row (unpacking a whole super-block first
// spills registers; with so few rows to share it, that costs more than it saves). Two weight
// rows side by side measured slower: the second row's unpacked vectors spill.
template <KType T, int C>
void kquant_few(const uint8_t* w, size_t ws, int64_t rows, const uint8_t* a, size_t as, float* y,
                size_t ldy, int64_t nb) {
  for (int64_t r = 0; r < rows; ++r) {
    __m256 f[C];
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) f[c] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
      const ActQ8_K* ya[C];
#pragma GCC unroll 4
      for (int c = 0; c < C; ++c) ya[c] = reinterpret_cast<const ActQ8_K*>(a + c * as) + b;
      few_block<T, C>(w + r * ws, b, ya, f);
    }
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) y[c * ldy + r] = hsum(f[c]);
  }
}

// A super-block unpacked for reuse across activation rows.
struct KBlock {
  __m256i q[8];
  __m256i sc[8];
  KHeader h;
};

template <KType T>
inline void unpack_block(const uint8_t* row, int64_t b, KBlock& kb) {
  kb.h = load_header<T>(row, b);
#pragma GCC unroll 4
  for (int p = 0; p < 4; ++p) {
    load_quant_pair<T>(row, b, p, kb.q[2 * p], kb.q[2 * p + 1]);
    kb.sc[2 * p] = scale_vec<T>(kb.h, 2 * p);
    kb.sc[2 * p + 1] = scale_vec<T>(kb.h, 2 * p + 1);
  }
}

// Rows [0, rows) x activation rows [0, nc), nc <= 32.
template <KType T>
void kquant_rows(const uint8_t* w, size_t ws, int64_t rows, const uint8_t* a, size_t as, int nc,
                 float* y, size_t ldy, int64_t nb) {
  __m256 facc[32];
  KBlock kb;
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* row = w + r * ws;
    for (int c = 0; c < nc; ++c) facc[c] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
      unpack_block<T>(row, b, kb);
      int c = 0;
      // Two activation rows at a time: each unpacked vector and scale is loaded once for both.
      for (; c + 2 <= nc; c += 2) {
        const ActQ8_K* y0 = reinterpret_cast<const ActQ8_K*>(a + c * as) + b;
        const ActQ8_K* y1 = reinterpret_cast<const ActQ8_K*>(a + (c + 1) * as) + b;
        __m256i acc0 = _mm256_setzero_si256(), acc1 = _mm256_setzero_si256();
#pragma GCC unroll 8
        for (int k = 0; k < 8; ++k) {
          acc0 = _mm256_add_epi32(acc0, scaled_dot(kb.q[k], y0->qs + 32 * k, kb.sc[k]));
          acc1 = _mm256_add_epi32(acc1, scaled_dot(kb.q[k], y1->qs + 32 * k, kb.sc[k]));
        }
        facc[c] = finish_block<T>(acc0, kb.h, y0, facc[c]);
        facc[c + 1] = finish_block<T>(acc1, kb.h, y1, facc[c + 1]);
      }
      for (; c < nc; ++c) {
        const ActQ8_K* ya = reinterpret_cast<const ActQ8_K*>(a + c * as) + b;
        __m256i acc = _mm256_setzero_si256();
#pragma GCC unroll 8
        for (int k = 0; k < 8; ++k) {
          acc = _mm256_add_epi32(acc, scaled_dot(kb.q[k], ya->qs + 32 * k, kb.sc[k]));
        }
        facc[c] = finish_block<T>(acc, kb.h, ya, facc[c]);
      }
    }
    for (int c = 0; c < nc; ++c) y[c * ldy + r] = hsum(facc[c]);
  }
}

template <KType T>
void gemm_kquant(const uint8_t* w, size_t ws, int64_t rows, const uint8_t* a, size_t as, int n,
                 float* y, size_t ldy, int64_t cols) {
  const int64_t nb = cols / kQK_K;
  switch (n) {
    case 1:
      return kquant_few<T, 1>(w, ws, rows, a, as, y, ldy, nb);
    case 2:
      return kquant_few<T, 2>(w, ws, rows, a, as, y, ldy, nb);
    case 3:
      return kquant_few<T, 3>(w, ws, rows, a, as, y, ldy, nb);
    case 4:
      return kquant_few<T, 4>(w, ws, rows, a, as, y, ldy, nb);
    default:
      break;
  }
  // Activation rows in groups of up to 16: their blocks stay in L1/L2 while a weight row is
  // swept over them (groups of 32 measured ~7 % slower on 512-token prompts here).
  for (int i0 = 0; i0 < n; i0 += 16) {
    const int nc = std::min(16, n - i0);
    kquant_rows<T>(w, ws, rows, a + i0 * as, as, nc, y + i0 * ldy, ldy, nb);
  }
}

template <KType T>
float dot_kquant(const void* w, const void* a, int64_t n) {
  float out;
  kquant_few<T, 1>(static_cast<const uint8_t*>(w), 0, 1, static_cast<const uint8_t*>(a), 0, &out, 0,
                   n / kQK_K);
  return out;
}

}  // namespace

void install_kquant(Kernels& t) {
  t.dot[kernel_slot(GgmlType::Q4_K)] = dot_kquant<KType::Q4>;
  t.dot[kernel_slot(GgmlType::Q5_K)] = dot_kquant<KType::Q5>;
  t.dot[kernel_slot(GgmlType::Q6_K)] = dot_kquant<KType::Q6>;
  t.gemm[kernel_slot(GgmlType::Q4_K)] = gemm_kquant<KType::Q4>;
  t.gemm[kernel_slot(GgmlType::Q5_K)] = gemm_kquant<KType::Q5>;
  t.gemm[kernel_slot(GgmlType::Q6_K)] = gemm_kquant<KType::Q6>;
}

}  // namespace leapfrog::cpu::avx2
