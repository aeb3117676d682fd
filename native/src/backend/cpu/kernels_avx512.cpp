// AVX-512 (F, BW, VL, DQ) + VNNI kernels for the 8-bit integer paths: Q8_0, Q4_0 and Q5_0
// weights with Q8_0 activations, Q4_K, Q5_K and Q6_K with Q8_K activations, as dot products
// and tiled gemms. Everything else (f32/f16/bf16 products, activation quantizers, axpy) keeps
// the AVX2 version: the table starts as a copy of the AVX2 one.
//
// vpdpbusd multiplies unsigned bytes by signed bytes and adds each four products into an
// int32 lane without saturation. Weights are made unsigned by an offset: Q8_0 as w + 128,
// Q4_0 / Q5_0 as their stored quants (w + 8, w + 16); K-quant quants are stored unsigned.
// The offset times the activation sum (one more vpdpbusd per activation block, shared by
// all weight rows) is taken off again, so every integer sum equals the scalar kernels'.
// K-quant sub-block scales are applied in the integer domain with vpdpwssd: a vpdpbusd lane
// (four products, |sum| < 2^15) times the scale in the low 16 bits of a lane whose high 16
// bits are zero is exactly lane * scale.
//
// As in kernels_avx2.cpp, each (weight row, activation row) pair runs one fixed chain of
// float operations whatever the batch size, tile or row count (lane-wise accumulators
// from zero, block after block, then one horizontal sum in a fixed order), so batched
// rows are bit-identical to dot() and to one-token passes.
//
// Tested by backend_kernels_test (against the scalar kernels, integer sums exactly, and a
// naive reference), matmul_batch_test (batched = one-token bit for bit, dot = gemm) and
// model_random_test, which iterate over every level the CPU runs: they passed on an Intel
// Xeon with AVX-512 VNNI (the lent device machine). A CPU without AVX-512 VNNI reports
// the AVX-512 checks as skipped.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "backend/cpu/avx512_parts.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/quant_blocks.h"
#include "backend/cpu/tile_driver.h"

// GCC before 13 warns about its own _mm512_undefined_* placeholders ("__Y is used
// uninitialized") wherever a 512-bit intrinsic is inlined; fixed in GCC 13.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace leapfrog::cpu {

namespace {

inline float h2f(uint16_t h) { return _cvtsh_ss(h); }

// High half onto low, then as the AVX2 hsum: one fixed order for every caller.
inline float hsum(__m512 v) {
  const __m256 s8 = _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

inline __m256i load256(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
inline __m128i load128(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }

inline __m512i join(__m256i lo, __m256i hi) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}
inline __m512i zext(__m256i lo) { return _mm512_inserti64x4(_mm512_setzero_si512(), lo, 0); }

// lo in lanes 0..7, hi in lanes 8..15.
inline __m512 two_scales(float lo, float hi) {
  return _mm512_insertf32x8(_mm512_set1_ps(lo), _mm256_set1_ps(hi), 1);
}

// ---- Q8_0 / Q4_0 / Q5_0 ------------------------------------------------------------------
//
// A 512-bit register holds two 32-value blocks: lanes 0..7 block b, lanes 8..15 block b + 1,
// with a scale vector to match. An odd last block fills the low half and leaves the high
// half zero (quants, activations and scales), which adds exact zeros.

enum class BType { Q8, Q4, Q5 };

template <BType T>
constexpr size_t kBlockBytes = T == BType::Q8   ? sizeof(BlockQ8_0)
                               : T == BType::Q4 ? sizeof(BlockQ4_0)
                                                : sizeof(BlockQ5_0);
// What the unsigned weight quants exceed the signed weights by.
template <BType T>
constexpr int kOffset = T == BType::Q8   ? 128
                        : T == BType::Q4 ? 8
                                         : 16;

// The 32 nibbles of each of two blocks (16 bytes each) in element order: low nibbles are
// elements 0..15, high nibbles 16..31.
inline __m512i nibbles2(const uint8_t* q0, const uint8_t* q1) {
  const __m256i t = _mm256_inserti128_si256(_mm256_castsi128_si256(load128(q0)), load128(q1), 1);
  // 128-bit lanes [q0, q0, q1, q1]; the second copy of each shifted down 4 bits.
  __m512i z = _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 1, 0, 1, 2, 3, 2, 3),
                                       _mm512_castsi256_si512(t));
  z = _mm512_mask_srli_epi16(z, 0xFF00FF00u, z, 4);
  return _mm512_and_si512(z, _mm512_set1_epi8(0xF));
}
inline __m512i nibbles1(const uint8_t* q0) {
  const __m128i t = load128(q0), m = _mm_set1_epi8(0xF);
  return zext(_mm256_inserti128_si256(_mm256_castsi128_si256(_mm_and_si128(t, m)),
                                      _mm_and_si128(_mm_srli_epi16(t, 4), m), 1));
}

inline uint32_t q5_high_bits(const BlockQ5_0* x) {
  uint32_t qh;
  std::memcpy(&qh, x->qh, sizeof(qh));
  return qh;
}

// Unsigned quants of block b (kPair: and b + 1) of a weight row, and their scales in d.
template <BType T, bool kPair>
inline __m512i load_w(const uint8_t* row, int64_t b, __m512& d) {
  if constexpr (T == BType::Q8) {
    const BlockQ8_0* x = reinterpret_cast<const BlockQ8_0*>(row) + b;
    const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));  // w + 128 = w ^ 0x80
    if constexpr (kPair) {
      d = two_scales(h2f(x[0].d), h2f(x[1].d));
      return _mm512_xor_si512(join(load256(x[0].qs), load256(x[1].qs)), flip);
    } else {
      d = two_scales(h2f(x[0].d), 0.0f);
      return zext(_mm256_xor_si256(load256(x[0].qs), _mm512_castsi512_si256(flip)));
    }
  } else if constexpr (T == BType::Q4) {
    const BlockQ4_0* x = reinterpret_cast<const BlockQ4_0*>(row) + b;
    if constexpr (kPair) {
      d = two_scales(h2f(x[0].d), h2f(x[1].d));
      return nibbles2(x[0].qs, x[1].qs);
    } else {
      d = two_scales(h2f(x[0].d), 0.0f);
      return nibbles1(x[0].qs);
    }
  } else {
    // Q5_0: bit j of qh is the fifth bit of element j, which sits in byte j of the block.
    const BlockQ5_0* x = reinterpret_cast<const BlockQ5_0*>(row) + b;
    const __m512i sixteen = _mm512_set1_epi8(16);
    if constexpr (kPair) {
      d = two_scales(h2f(x[0].d), h2f(x[1].d));
      const __m512i z = nibbles2(x[0].qs, x[1].qs);
      const uint64_t k = q5_high_bits(&x[0]) | (uint64_t(q5_high_bits(&x[1])) << 32);
      return _mm512_mask_add_epi8(z, _cvtu64_mask64(k), z, sixteen);
    } else {
      d = two_scales(h2f(x[0].d), 0.0f);
      const __m512i z = nibbles1(x[0].qs);
      return _mm512_mask_add_epi8(z, _cvtu64_mask64(q5_high_bits(&x[0])), z, sixteen);
    }
  }
}

// Activation quants of block b (kPair: and b + 1), and their scales in d.
template <bool kPair>
inline __m512i load_a(const ActQ8_0* y, __m512& d) {
  if constexpr (kPair) {
    d = two_scales(y[0].d, y[1].d);
    return join(load256(y[0].qs), load256(y[1].qs));
  } else {
    d = two_scales(y[0].d, 0.0f);
    return zext(load256(y[0].qs));
  }
}

// One step (two blocks, or the odd last one) of an R x C tile.
template <BType T, int R, int C, bool kPair>
inline void step_q8_0(const uint8_t* w, size_t ws, const uint8_t* a, size_t as, int64_t b,
                      __m512 (&acc)[R][C]) {
  __m512i qw[R];
  __m512 dw[R];
  for (int r = 0; r < R; ++r) {
    if constexpr (R > 1) {
      // Rows are read side by side: fetch the next R rows' blocks ahead (see kernels_avx2).
      const char* next = reinterpret_cast<const char*>(w + (R + r) * ws + b * kBlockBytes<T>);
      _mm_prefetch(next, _MM_HINT_T0);
      _mm_prefetch(next + kBlockBytes<T>, _MM_HINT_T0);
    }
    qw[r] = load_w<T, kPair>(w + r * ws, b, dw[r]);
  }
  const __m512i offset = _mm512_set1_epi8(static_cast<char>(kOffset<T>));
  for (int c = 0; c < C; ++c) {
    __m512 da;
    const __m512i qa = load_a<kPair>(reinterpret_cast<const ActQ8_0*>(a + c * as) + b, da);
    // -offset * (sum of each 4 activations): the start of every row's integer sum.
    const __m512i base = _mm512_sub_epi32(_mm512_setzero_si512(),
                                          _mm512_dpbusd_epi32(_mm512_setzero_si512(), offset, qa));
    for (int r = 0; r < R; ++r) {
      const __m512i p = _mm512_dpbusd_epi32(base, qw[r], qa);
      acc[r][c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), _mm512_mul_ps(dw[r], da), acc[r][c]);
    }
  }
}

template <BType T, int R, int C>
void tile_q8_0(const uint8_t* w, size_t ws, const uint8_t* a, size_t as, float* y, size_t ldy,
               int64_t nb) {
  __m512 acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = _mm512_setzero_ps();
  int64_t b = 0;
  for (; b + 2 <= nb; b += 2) step_q8_0<T, R, C, true>(w, ws, a, as, b, acc);
  if (b < nb) step_q8_0<T, R, C, false>(w, ws, a, as, b, acc);
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) y[c * ldy + r] = hsum(acc[r][c]);
}

template <BType T>
struct TileQ8_0 {
  template <int R, int C>
  static void run(const uint8_t* w, size_t ws, const uint8_t* a, size_t as, float* y, size_t ldy,
                  int64_t nb) {
    tile_q8_0<T, R, C>(w, ws, a, as, y, ldy, nb);
  }
};

// ---- K-quants ----------------------------------------------------------------------------
//
// One weight row's super-block is unpacked once into four registers of unsigned quants
// (register k <-> activations [64k, 64k + 64)) and per-lane scales, then multiplied with the
// same super-block of every activation row of the batch.

struct KBlock {
  __m512i q[4];     // unsigned quants
  __m512i sc[4];    // int32 lanes: the scale of the lane's four quants, high 16 bits zero
  __m256i m16;      // Q4_K/Q5_K: int16 pairs (m_j, m_j) against bsums; Q6_K: -32 * scale_k
  __m512 dw, dmin;  // f16 scales as f32 (dmin unused by Q6_K)
};

enum class KType { Q4, Q5, Q6 };

template <KType T>
inline void unpack_kblock(const uint8_t* row, int64_t b, KBlock& kb) {
  const __m512i m4 = _mm512_set1_epi8(0xF);
  if constexpr (T == KType::Q6) {
    const BlockQ6_K* x = reinterpret_cast<const BlockQ6_K*>(row) + b;
    const __m512i m30 = _mm512_set1_epi8(0x30);
    for (int half = 0; half < 2; ++half) {
      // ql[0..64): low 4 bits of activations [0, 64) (low nibbles) and [64, 128) (high);
      // qh[l]: top 2 bits of activations l, l + 32, l + 64, l + 96 in bits 0-1, 2-3, 4-5, 6-7.
      const __m512i l = _mm512_loadu_si512(x->ql + 64 * half);
      const __m512i h = _mm512_broadcast_i64x4(load256(x->qh + 32 * half));
      const __m512i h01 = _mm512_mask_srli_epi16(h, 0xFFFF0000u, h, 2);  // bits 0-1 | 2-3
      const __m512i h23 = _mm512_srli_epi16(h01, 4);                     // bits 4-5 | 6-7
      // (x << 4) & 0x30 moves each byte's bits 0-1 to 4-5 (word shifts stay in the byte).
      kb.q[2 * half] = _mm512_or_si512(_mm512_and_si512(l, m4),
                                       _mm512_and_si512(_mm512_slli_epi16(h01, 4), m30));
      kb.q[2 * half + 1] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(l, 4), m4),
                                           _mm512_and_si512(_mm512_slli_epi16(h23, 4), m30));
    }
    // Lane i of register k covers activations 64k + 4i.. : scale 4k + i / 4.
    const __m128i s8 = load128(x->scales);
    const __m512i s32 = _mm512_and_si512(_mm512_cvtepi8_epi32(s8), _mm512_set1_epi32(0xFFFF));
    const __m512i quarter = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
    for (int k = 0; k < 4; ++k) {
      kb.sc[k] = _mm512_permutexvar_epi32(_mm512_add_epi32(quarter, _mm512_set1_epi32(4 * k)), s32);
    }
    // |32 * scale| <= 4096: the -32 of every weight, against the 16 activation sums.
    kb.m16 =
        _mm256_sub_epi16(_mm256_setzero_si256(), _mm256_slli_epi16(_mm256_cvtepi8_epi16(s8), 5));
    kb.dw = _mm512_set1_ps(h2f(x->d));
  } else {
    const K4Fields f = k4_fields<T == KType::Q5>(row, b);
    const uint8_t* q = f.qs;
    __m512i hbits;
    if constexpr (T == KType::Q5) {
      hbits = _mm512_broadcast_i64x4(load256(reinterpret_cast<const BlockQ5_K*>(row)[b].qh));
    }
    for (int c = 0; c < 4; ++c) {
      // Chunk c: low nibbles are sub-block 2c (low half), high nibbles 2c + 1 (high half).
      __m512i z = _mm512_broadcast_i64x4(load256(q + 32 * c));
      z = _mm512_and_si512(_mm512_mask_srli_epi16(z, 0xFFFF0000u, z, 4), m4);
      if constexpr (T == KType::Q5) {
        // Fifth bits: bit 2c of qh[l] for sub-block 2c, bit 2c + 1 for 2c + 1.
        const __m512i sel = join(_mm256_set1_epi8(static_cast<char>(1u << (2 * c))),
                                 _mm256_set1_epi8(static_cast<char>(2u << (2 * c))));
        z = _mm512_mask_add_epi8(z, _mm512_test_epi8_mask(hbits, sel), z, _mm512_set1_epi8(16));
      }
      kb.q[c] = z;
    }
    uint32_t sm4[4];
    k4_scales_mins(f.scales, sm4);
    // Lanes 0..7: scales, 8..15: mins.
    const __m512i s32 = _mm512_cvtepu8_epi32(_mm_setr_epi32(sm4[0], sm4[1], sm4[2], sm4[3]));
    for (int c = 0; c < 4; ++c) {
      const __m512i idx = join(_mm256_set1_epi32(2 * c), _mm256_set1_epi32(2 * c + 1));
      kb.sc[c] = _mm512_permutexvar_epi32(idx, s32);
    }
    const __m256i mins = _mm512_extracti64x4_epi64(s32, 1);
    kb.m16 = _mm256_or_si256(mins, _mm256_slli_epi32(mins, 16));
    kb.dw = _mm512_set1_ps(h2f(f.d));
    kb.dmin = _mm512_set1_ps(h2f(f.dmin));
  }
}

// One super-block of one (row, activation) pair, added to that pair's accumulator.
template <KType T>
inline __m512 kblock_pair(const KBlock& kb, const ActQ8_K* ya, __m512 facc) {
  const __m256i bs = load256(ya->bsums);
  const __m256i m = _mm256_madd_epi16(kb.m16, bs);
  __m512i acc = T == KType::Q6 ? zext(m) : _mm512_setzero_si512();
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    const __m512i p =
        _mm512_dpbusd_epi32(_mm512_setzero_si512(), kb.q[k], _mm512_loadu_si512(ya->qs + 64 * k));
    acc = _mm512_dpwssd_epi32(acc, p, kb.sc[k]);
  }
  const __m512 da = _mm512_set1_ps(ya->d);
  if constexpr (T == KType::Q6) {
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc), _mm512_mul_ps(kb.dw, da), facc);
  } else {
    const __m512 mins = _mm512_insertf32x8(_mm512_setzero_ps(), _mm256_cvtepi32_ps(m), 0);
    const __m512 t = _mm512_fnmadd_ps(mins, kb.dmin, _mm512_mul_ps(_mm512_cvtepi32_ps(acc), kb.dw));
    return _mm512_fmadd_ps(t, da, facc);
  }
}

// Rows [0, rows) x activation rows [0, nc) (nc <= 32; kNc > 0 fixes it at compile time).
template <KType T, int kNc>
void kquant_rows(const uint8_t* w, size_t ws, int64_t rows, const uint8_t* a, size_t as, int nc,
                 float* y, size_t ldy, int64_t nb) {
  if constexpr (kNc > 0) nc = kNc;
  __m512 facc[kNc > 0 ? kNc : 32];
  KBlock kb;
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* row = w + r * ws;
    for (int c = 0; c < nc; ++c) facc[c] = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
      unpack_kblock<T>(row, b, kb);
      for (int c = 0; c < nc; ++c) {
        facc[c] = kblock_pair<T>(kb, reinterpret_cast<const ActQ8_K*>(a + c * as) + b, facc[c]);
      }
    }
    for (int c = 0; c < nc; ++c) y[c * ldy + r] = hsum(facc[c]);
  }
}

template <KType T>
void gemm_kquant(const uint8_t* w, size_t ws, int64_t rows, const uint8_t* a, size_t as, int n,
                 float* y, size_t ldy, int64_t cols) {
  const int64_t nb = cols / kQK_K;
  if (n == 1) return kquant_rows<T, 1>(w, ws, rows, a, as, 1, y, ldy, nb);
  // Activation rows in groups of up to 32 (their blocks stay in L2 while a weight row is
  // swept over them).
  for (int i0 = 0; i0 < n; i0 += 32) {
    const int nc = std::min(32, n - i0);
    kquant_rows<T, 0>(w, ws, rows, a + i0 * as, as, nc, y + i0 * ldy, ldy, nb);
  }
}

template <KType T>
float dot_kquant(const void* w, const void* a, int64_t n) {
  float out;
  kquant_rows<T, 1>(static_cast<const uint8_t*>(w), 0, 1, static_cast<const uint8_t*>(a), 0, 1,
                    &out, 0, n / kQK_K);
  return out;
}

// ---- activation preparation ---------------------------------------------------------------

// Q8_0 activations as the scalar quant_q8_0 (kernels_scalar.cpp) writes them, byte for byte, a
// block of 32 in two vectors: d = max|x| / 127, q = round(x / d) to nearest even (x times the
// same 1 / d), the stored scale rounded through f16, the sum of the quants. AVX2's version
// (which this table inherited) reduced and packed in 256-bit halves: at 8 activation rows the
// preparation runs on one thread, and quant_q8_0 was 2.3 % of a bundled model's 8-token pass.
void quant_q8_0(const float* x, void* dst, int64_t n) {
  ActQ8_0* y = static_cast<ActQ8_0*>(dst);
  for (int64_t b = 0; b < n / kQK; ++b, x += kQK) {
    const __m512 v0 = _mm512_loadu_ps(x), v1 = _mm512_loadu_ps(x + 16);
    const float d =
        _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(v0), _mm512_abs_ps(v1))) / 127.0f;
    const __m512 id = _mm512_set1_ps(d != 0 ? 1.0f / d : 0.0f);
    constexpr int kNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
    const __m512i q0 = _mm512_cvt_roundps_epi32(_mm512_mul_ps(v0, id), kNearest);
    const __m512i q1 = _mm512_cvt_roundps_epi32(_mm512_mul_ps(v1, id), kNearest);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y[b].qs), _mm512_cvtsepi32_epi8(q0));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y[b].qs + 16), _mm512_cvtsepi32_epi8(q1));
    y[b].d = _cvtsh_ss(_cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT));
    y[b].sum = _mm512_reduce_add_epi32(_mm512_add_epi32(q0, q1));
  }
}

}  // namespace

const Kernels* kernels_avx512() {
  static const Kernels k = [] {
    Kernels t = *kernels_avx2();
    t.isa = Isa::Avx512;
    t.dot[3] = dot_tiled<TileQ8_0<BType::Q8>, kQK>;
    t.dot[4] = dot_tiled<TileQ8_0<BType::Q4>, kQK>;
    t.dot[5] = dot_kquant<KType::Q4>;
    t.dot[6] = dot_kquant<KType::Q5>;
    t.dot[7] = dot_kquant<KType::Q6>;
    t.dot[8] = dot_tiled<TileQ8_0<BType::Q5>, kQK>;
    t.gemm[3] = gemm_tiled<TileQ8_0<BType::Q8>, kQK>;
    t.gemm[4] = gemm_tiled<TileQ8_0<BType::Q4>, kQK>;
    t.gemm[5] = gemm_kquant<KType::Q4>;
    t.gemm[6] = gemm_kquant<KType::Q5>;
    t.gemm[7] = gemm_kquant<KType::Q6>;
    t.gemm[8] = gemm_tiled<TileQ8_0<BType::Q5>, kQK>;
    // Q8_0/Q4_0/Q5_0/Q4_1/Q5_1/IQ4_NL and Q4_K/Q6_K/IQ4_XS matrices of whole 16-row groups are
    // packed and run the VNNI products over their layouts; the kernels above (and the AVX2
    // table's low-bit ones) serve the others.
    install_packed_vnni(t);
    install_packed_kquant_vnni(t);
    install_attention_avx512(t);
    install_activation_avx512(t);
    t.quantize[static_cast<int>(ActFormat::Q8_0)] = quant_q8_0;
    return t;
  }();
  return &k;
}

}  // namespace leapfrog::cpu
