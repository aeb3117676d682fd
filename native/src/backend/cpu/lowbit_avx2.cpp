// AVX2 products of the low-bit types: Q4_1, Q5_1, IQ4_NL (32-value blocks, Q8_0 activations)
// and Q2_K, Q3_K, IQ4_XS (256-value super-blocks, Q8_K activations). The AVX-VNNI and
// AVX-512 tables inherit them (they start from a copy of the AVX2 table). Where a matrix of
// Q4_1, Q5_1, IQ4_NL or IQ4_XS is packed (rows a whole number of groups: packed_layouts.h,
// packed_avx512.cpp) the packed products serve it instead.
//
// Integer sums are the scalar kernels' (kernels_scalar_lowbit.cpp), exactly; only the float
// steps differ in order. Each (row, activation) pair runs one chain whatever the tile:
// - 32-value blocks: acc (8 lanes) = fma(float(block's lane sums), d_w * d_a, acc), and for
//   Q4_1/Q5_1 a scalar chain ms = fma(m, s_a, ms); result hsum(acc) + ms;
// - super-blocks: acc (8 lanes) = fma(float(super-block's lane sums), d_w * d_a, acc) (Q2_K
//   also acc = fnma(float(lane sums of bsums x mins), dmin_w * d_a, acc)); result hsum(acc).
// Explicit fused multiply-adds keep every tile instantiation on the same roundings, so a
// batched row equals the one-row product bit for bit.
#include <cmath>
#include <cstring>

#include "backend/cpu/avx2_common.h"
#include "backend/cpu/avx2_parts.h"
#include "backend/cpu/quant_blocks.h"
#include "backend/cpu/tile_driver.h"
#include "format/fp16.h"

namespace leapfrog::cpu::avx2 {

namespace {

// Byte j of the result is 16 where bit j of `bits` is set, else 0.
inline __m256i bit_per_byte_16(uint32_t bits) {
  const __m256i spread = _mm256_shuffle_epi8(
      _mm256_set1_epi32(static_cast<int>(bits)),
      _mm256_setr_epi64x(0, 0x0101010101010101LL, 0x0202020202020202LL, 0x0303030303030303LL));
  const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ULL));
  return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit),
                          _mm256_set1_epi8(16));
}

// Sum of 16-bit pairs into 8 int32 lanes: codes (unsigned, or |code| with the sign moved to
// the activations) times int8 activations.
inline __m256i dot_u8s8(__m256i u, __m256i s) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
}
inline __m256i dot_s8s8(__m256i w, __m256i a) {
  return dot_u8s8(_mm256_sign_epi8(w, w), _mm256_sign_epi8(a, w));
}

// ---- 32-value blocks ----------------------------------------------------------------------

enum class B32 { Q4_1, Q5_1, IQ4_NL };

template <B32 T>
struct B32Traits;
template <>
struct B32Traits<B32::Q4_1> {
  using Block = BlockQ4_1;
};
template <>
struct B32Traits<B32::Q5_1> {
  using Block = BlockQ5_1;
};
template <>
struct B32Traits<B32::IQ4_NL> {
  using Block = BlockIQ4_NL;
};

template <B32 T, int R, int C>
void tile_b32(const uint8_t* w, size_t ws, const uint8_t* a, size_t as, float* y, size_t ldy,
              int64_t nb) {
  using Block = typename B32Traits<T>::Block;
  constexpr bool kMin = T != B32::IQ4_NL;
  __m256 acc[R][C];
  float ms[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = _mm256_setzero_ps(), ms[r][c] = 0;
  const __m256i levels = iq4_levels();
  for (int64_t b = 0; b < nb; ++b) {
    __m256i qw[R];
    __m256 dw[R];
    float mw[R];
    for (int r = 0; r < R; ++r) {
      const Block* x = reinterpret_cast<const Block*>(w + r * ws) + b;
      if constexpr (R > 1) {
        _mm_prefetch(reinterpret_cast<const char*>(x + ws / sizeof(Block) * R), _MM_HINT_T0);
      }
      __m256i q = unpack_nibbles(x->qs);
      if constexpr (T == B32::Q5_1) {
        uint32_t qh;
        std::memcpy(&qh, x->qh, 4);
        q = _mm256_or_si256(q, bit_per_byte_16(qh));
      }
      if constexpr (T == B32::IQ4_NL) q = _mm256_shuffle_epi8(levels, q);
      qw[r] = q;
      dw[r] = _mm256_set1_ps(h2f(x->d));
      if constexpr (kMin) mw[r] = h2f(x->m);
    }
    for (int c = 0; c < C; ++c) {
      const ActQ8_0* ya = reinterpret_cast<const ActQ8_0*>(a + c * as) + b;
      const __m256i qa = load256(ya->qs);
      const __m256 da = _mm256_broadcast_ss(&ya->d);
      const float sa = kMin ? q8_block_total_f16c(*ya) : 0;
      for (int r = 0; r < R; ++r) {
        const __m256i p = T == B32::IQ4_NL ? dot_s8s8(qw[r], qa) : dot_u8s8(qw[r], qa);
        acc[r][c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_mul_ps(dw[r], da), acc[r][c]);
        if constexpr (kMin) ms[r][c] = std::fma(mw[r], sa, ms[r][c]);
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) y[c * ldy + r] = hsum(acc[r][c]) + ms[r][c];
}

template <B32 T>
struct TileB32 {
  template <int R, int C>
  static void run(const uint8_t* w, size_t ws, const uint8_t* a, size_t as, float* y, size_t ldy,
                  int64_t nb) {
    tile_b32<T, R, C>(w, ws, a, as, y, ldy, nb);
  }
};

// ---- 256-value super-blocks ---------------------------------------------------------------

enum class B256 { Q2_K, Q3_K, IQ4_XS };

// A super-block decoded once for every activation row: 8 vectors of 32 codes (vector k =
// weights 32k..32k+31, as the activation's), the int16 scale vector of each (one scale per
// 128-bit half: sub-blocks of 16 weights, or twice the same for IQ4_XS's sub-blocks of 32),
// the float scales.
struct Decoded {
  __m256i q[8];
  __m256i sc[8];
  __m256i mins;  // Q2_K: the 16 4-bit mins as int16 (they pair with the activation's bsums)
  __m256 d, dmin;
};

// The scale vectors from 16 int8 scales, scale j for weights 16j..16j+15.
inline void scales_by_16(__m128i sc8, __m256i* out) {
  for (int k = 0; k < 8; ++k) {
    const __m128i pick =
        _mm_set_epi64x(0x0101010101010101LL * (2 * k + 1), 0x0101010101010101LL * (2 * k));
    out[k] = _mm256_cvtepi8_epi16(_mm_shuffle_epi8(sc8, pick));
  }
}

// Q3_K's 16 six-bit scales minus 32, as bytes: q3k_scales in word operations.
inline __m128i q3k_scales8(const uint8_t* q) {
  uint32_t u[3];
  std::memcpy(u, q, 12);
  const uint32_t lo4 = 0x0f0f0f0f, hi2 = 0x03030303;
  const __m128i s =
      _mm_setr_epi32(static_cast<int>((u[0] & lo4) | ((u[2] & hi2) << 4)),
                     static_cast<int>((u[1] & lo4) | (((u[2] >> 2) & hi2) << 4)),
                     static_cast<int>(((u[0] >> 4) & lo4) | (((u[2] >> 4) & hi2) << 4)),
                     static_cast<int>(((u[1] >> 4) & lo4) | (((u[2] >> 6) & hi2) << 4)));
  return _mm_sub_epi8(s, _mm_set1_epi8(32));
}

template <B256 T>
inline void decode(const uint8_t* row, int64_t b, Decoded& o) {
  const __m256i three = _mm256_set1_epi8(3);
  if constexpr (T == B256::Q2_K) {
    const BlockQ2_K& x = reinterpret_cast<const BlockQ2_K*>(row)[b];
    for (int h = 0; h < 2; ++h) {
      const __m256i v = load256(x.qs + 32 * h);
      for (int k = 0; k < 4; ++k) {
        o.q[4 * h + k] = _mm256_and_si256(_mm256_srli_epi16(v, 2 * k), three);
      }
    }
    const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x.scales));
    const __m128i m4 = _mm_set1_epi8(0xF);
    scales_by_16(_mm_and_si128(raw, m4), o.sc);
    o.mins = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(raw, 4), m4));
    o.d = _mm256_set1_ps(h2f(x.d));
    o.dmin = _mm256_set1_ps(h2f(x.dmin));
  } else if constexpr (T == B256::Q3_K) {
    const BlockQ3_K& x = reinterpret_cast<const BlockQ3_K*>(row)[b];
    const __m256i hm = load256(x.hmask);
    for (int h = 0; h < 2; ++h) {
      const __m256i v = load256(x.qs + 32 * h);
      for (int k = 0; k < 4; ++k) {
        const int run = 4 * h + k;
        const __m256i low = _mm256_and_si256(_mm256_srli_epi16(v, 2 * k), three);
        // 4 where the run's high bit is clear: code = low - 4.
        const __m256i bit = _mm256_set1_epi8(static_cast<char>(1 << run));
        const __m256i clear = _mm256_cmpeq_epi8(_mm256_and_si256(hm, bit), _mm256_setzero_si256());
        o.q[run] = _mm256_sub_epi8(low, _mm256_and_si256(clear, _mm256_set1_epi8(4)));
      }
    }
    scales_by_16(q3k_scales8(x.scales), o.sc);
    o.d = _mm256_set1_ps(h2f(x.d));
  } else {
    const BlockIQ4_XS& x = reinterpret_cast<const BlockIQ4_XS*>(row)[b];
    const __m256i levels = iq4_levels();
    alignas(16) int8_t s[16];
    for (int j = 0; j < 8; ++j) {
      o.q[j] = _mm256_shuffle_epi8(levels, unpack_nibbles(x.qs + 16 * j));
      s[2 * j] = s[2 * j + 1] = static_cast<int8_t>(iq4xs_scale(x, j));
    }
    scales_by_16(_mm_load_si128(reinterpret_cast<const __m128i*>(s)), o.sc);
    o.d = _mm256_set1_ps(h2f(x.d));
  }
}

// One (row, activation) super-block: its integer lane sums into the pair's 8 float lanes.
template <B256 T>
inline __m256 step(const Decoded& x, const ActQ8_K& a, __m256 facc) {
  __m256i acc = _mm256_setzero_si256();
  for (int k = 0; k < 8; ++k) {
    const __m256i qa = load256(a.qs + 32 * k);
    // 16-bit pair sums of one 16-weight sub-block per 128-bit half, then scaled.
    const __m256i pairs = T == B256::Q2_K ? _mm256_maddubs_epi16(x.q[k], qa)
                                          : _mm256_maddubs_epi16(_mm256_sign_epi8(x.q[k], x.q[k]),
                                                                 _mm256_sign_epi8(qa, x.q[k]));
    acc = _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, x.sc[k]));
  }
  const __m256 da = _mm256_broadcast_ss(&a.d);
  facc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(acc), _mm256_mul_ps(x.d, da), facc);
  if constexpr (T == B256::Q2_K) {
    const __m256i m = _mm256_madd_epi16(load256(a.bsums), x.mins);
    facc = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(m), _mm256_mul_ps(x.dmin, da), facc);
  }
  return facc;
}

template <B256 T, int R, int C>
void tile_b256(const uint8_t* w, size_t ws, const uint8_t* a, size_t as, float* y, size_t ldy,
               int64_t nb) {
  __m256 acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = _mm256_setzero_ps();
  Decoded x;
  for (int64_t b = 0; b < nb; ++b) {
    for (int r = 0; r < R; ++r) {
      decode<T>(w + r * ws, b, x);
#pragma GCC unroll 4
      for (int c = 0; c < C; ++c) {
        acc[r][c] = step<T>(x, reinterpret_cast<const ActQ8_K*>(a + c * as)[b], acc[r][c]);
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) y[c * ldy + r] = hsum(acc[r][c]);
}

template <B256 T>
struct TileB256 {
  template <int R, int C>
  static void run(const uint8_t* w, size_t ws, const uint8_t* a, size_t as, float* y, size_t ldy,
                  int64_t nb) {
    tile_b256<T, R, C>(w, ws, a, as, y, ldy, nb);
  }
};

template <class Tile, int kValues>
void set(Kernels& t, GgmlType type) {
  t.dot[kernel_slot(type)] = dot_tiled<Tile, kValues>;
  t.gemm[kernel_slot(type)] = gemm_tiled<Tile, kValues>;
}

}  // namespace

void install_lowbit(Kernels& t) {
  set<TileB32<B32::Q4_1>, kQK>(t, GgmlType::Q4_1);
  set<TileB32<B32::Q5_1>, kQK>(t, GgmlType::Q5_1);
  set<TileB32<B32::IQ4_NL>, kQK>(t, GgmlType::IQ4_NL);
  set<TileB256<B256::Q2_K>, kQK_K>(t, GgmlType::Q2_K);
  set<TileB256<B256::Q3_K>, kQK_K>(t, GgmlType::Q3_K);
  set<TileB256<B256::IQ4_XS>, kQK_K>(t, GgmlType::IQ4_XS);
}

}  // namespace leapfrog::cpu::avx2
