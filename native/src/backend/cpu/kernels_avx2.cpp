// AVX2 + FMA + F16C kernels. Integer sums are the same as the scalar kernels'; only the
// order of float additions differs. 8-bit products use the maddubs "sign trick":
// |w| (unsigned) times sign(w)*a (signed) gives w*a without overflow for |w| <= 127.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "backend/cpu/fp16.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/quant_blocks.h"

namespace leapfrog::cpu {

namespace {

// F16C scalar conversion for block scales (the portable f16_to_f32 branches).
inline float h2f(uint16_t h) { return _cvtsh_ss(h); }

inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

inline int hsum_i32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
  return _mm_cvtsi128_si32(s);
}

// ---- activation preparation -------------------------------------------------------------

void quant_f16(const float* x, void* dst, int64_t n) {
  uint16_t* y = static_cast<uint16_t*>(dst);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
  }
  for (; i < n; ++i) y[i] = f32_to_f16(x[i]);
}

void quant_q8_0(const float* x, void* dst, int64_t n) {
  ActQ8_0* y = static_cast<ActQ8_0*>(dst);
  const __m256 sign = _mm256_set1_ps(-0.0f);
  for (int64_t b = 0; b < n / kQK; ++b, x += kQK) {
    __m256 v[4];
    __m256 amax = _mm256_setzero_ps();
    for (int k = 0; k < 4; ++k) {
      v[k] = _mm256_loadu_ps(x + 8 * k);
      amax = _mm256_max_ps(amax, _mm256_andnot_ps(sign, v[k]));
    }
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(amax), _mm256_extractf128_ps(amax, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    const float d = _mm_cvtss_f32(m) / 127.0f;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    const __m256 vid = _mm256_set1_ps(id);
    __m256i q[4];
    for (int k = 0; k < 4; ++k) {
      q[k] = _mm256_cvtps_epi32(
          _mm256_round_ps(_mm256_mul_ps(v[k], vid), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    }
    // Pack 32 int32 -> 32 int8, undoing the lane interleave of the pack instructions.
    __m256i p01 = _mm256_packs_epi32(q[0], q[1]);
    __m256i p23 = _mm256_packs_epi32(q[2], q[3]);
    __m256i p = _mm256_packs_epi16(p01, p23);
    p = _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y[b].qs), p);
    y[b].d = f16_to_f32(f32_to_f16(d));
  }
}

// ---- dot products ------------------------------------------------------------------------

float dot_f32(const void* w, const void* a, int64_t n) {
  const float* x = static_cast<const float*>(w);
  const float* y = static_cast<const float*>(a);
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 8), _mm256_loadu_ps(y + i + 8), acc1);
  }
  for (; i + 8 <= n; i += 8) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), acc0);
  }
  float s = hsum(_mm256_add_ps(acc0, acc1));
  for (; i < n; ++i) s += x[i] * y[i];
  return s;
}

inline __m256 load_f16(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
inline __m256 load_bf16(const uint16_t* p) {
  __m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
}

template <__m256 (*Load)(const uint16_t*), float (*Scalar)(uint16_t)>
float dot_16bit(const void* w, const void* a, int64_t n) {
  const uint16_t* x = static_cast<const uint16_t*>(w);
  const uint16_t* y = static_cast<const uint16_t*>(a);
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    acc0 = _mm256_fmadd_ps(Load(x + i), Load(y + i), acc0);
    acc1 = _mm256_fmadd_ps(Load(x + i + 8), Load(y + i + 8), acc1);
  }
  for (; i + 8 <= n; i += 8) acc0 = _mm256_fmadd_ps(Load(x + i), Load(y + i), acc0);
  float s = hsum(_mm256_add_ps(acc0, acc1));
  for (; i < n; ++i) s += Scalar(x[i]) * Scalar(y[i]);
  return s;
}

inline __m256i unpack_nibbles(const uint8_t* p) {  // 16 bytes -> low nibbles, then high
  const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i m = _mm_set1_epi8(0xF);
  return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(t, 4), m), _mm_and_si128(t, m));
}

// ---- tiled integer matrix products ---------------------------------------------------------
//
// Q8_0 / Q4_0: a tile of R weight rows x C activation rows keeps R*C accumulators in
// registers; per 32-value block each weight block is loaded (and made absolute) once for
// the C activation rows, and each activation block once for the R weight rows. Every
// (row, activation) pair runs the same chain whatever the tile: acc = fma(int dot,
// d_w * d_a, acc) block after block from zero, then one horizontal sum.

template <bool kQ4, int R, int C>
void tile_q8_0(const uint8_t* w, size_t ws, const uint8_t* a, size_t as, float* y, size_t ldy,
               int64_t nb) {
  __m256 acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = _mm256_setzero_ps();
  const __m256i ones = _mm256_set1_epi16(1);
  for (int64_t b = 0; b < nb; ++b) {
    __m256i qw[R], aw[R];
    __m256 dw[R];
    for (int r = 0; r < R; ++r) {
      if constexpr (R > 1) {
        // R rows are read side by side: fetch the next R rows' blocks ahead, so the
        // interleaved short streams do not wait on memory.
        constexpr size_t kBlock = kQ4 ? sizeof(BlockQ4_0) : sizeof(BlockQ8_0);
        _mm_prefetch(reinterpret_cast<const char*>(w + (R + r) * ws + b * kBlock), _MM_HINT_T0);
      }
      if constexpr (kQ4) {
        const BlockQ4_0* x = reinterpret_cast<const BlockQ4_0*>(w + r * ws) + b;
        qw[r] = _mm256_sub_epi8(unpack_nibbles(x->qs), _mm256_set1_epi8(8));
        dw[r] = _mm256_set1_ps(h2f(x->d));
      } else {
        const BlockQ8_0* x = reinterpret_cast<const BlockQ8_0*>(w + r * ws) + b;
        qw[r] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x->qs));
        dw[r] = _mm256_set1_ps(h2f(x->d));
      }
      aw[r] = _mm256_sign_epi8(qw[r], qw[r]);
    }
    for (int c = 0; c < C; ++c) {
      const ActQ8_0* ya = reinterpret_cast<const ActQ8_0*>(a + c * as) + b;
      const __m256i qa = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ya->qs));
      const __m256 da = _mm256_broadcast_ss(&ya->d);
      for (int r = 0; r < R; ++r) {
        const __m256i p =
            _mm256_madd_epi16(_mm256_maddubs_epi16(aw[r], _mm256_sign_epi8(qa, qw[r])), ones);
        acc[r][c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_mul_ps(dw[r], da), acc[r][c]);
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) y[c * ldy + r] = hsum(acc[r][c]);
}

template <bool kQ4, int R>
void cols_q8_0(const uint8_t* w, size_t ws, const uint8_t* a, size_t as, int n, float* y,
               size_t ldy, int64_t nb) {
  int i = 0;
  for (; i + 4 <= n; i += 4) tile_q8_0<kQ4, R, 4>(w, ws, a + i * as, as, y + i * ldy, ldy, nb);
  if (n - i >= 2) {
    tile_q8_0<kQ4, R, 2>(w, ws, a + i * as, as, y + i * ldy, ldy, nb);
    i += 2;
  }
  if (i < n) tile_q8_0<kQ4, R, 1>(w, ws, a + i * as, as, y + i * ldy, ldy, nb);
}

template <bool kQ4>
void gemm_q8_0(const uint8_t* w, size_t ws, int64_t rows, const uint8_t* a, size_t as, int n,
               float* y, size_t ldy, int64_t cols) {
  const int64_t nb = cols / kQK;
  int64_t r = 0;
  // Two rows at a time (decoding included: two independent chains, and the prefetch of
  // the next pair keeps the side-by-side streams fed; 4 rows measured no better).
  for (; r + 2 <= rows; r += 2) cols_q8_0<kQ4, 2>(w + r * ws, ws, a, as, n, y + r, ldy, nb);
  for (; r < rows; ++r) cols_q8_0<kQ4, 1>(w + r * ws, ws, a, as, n, y + r, ldy, nb);
}

template <bool kQ4>
float dot_q8_0(const void* w, const void* a, int64_t n) {
  float out;
  tile_q8_0<kQ4, 1, 1>(static_cast<const uint8_t*>(w), 0, static_cast<const uint8_t*>(a), 0, &out,
                       0, n / kQK);
  return out;
}

// K-quants: one weight row's super-block (256 values) is unpacked once into eight vectors
// of unsigned quants with their sub-block scales as int16 vectors, then multiplied with the
// same super-block of every activation row (the whole batch). Integer sums are exact; each
// (row, activation) pair then adds its super-block's float term to its own accumulator in
// the same order whatever the batch.
struct KBlock {
  __m256i q[8];     // unsigned quants, vector k <-> activations [32k, 32k + 32)
  __m256i sc[8];    // int16 scale(s) of vector k
  __m256i m16;      // Q4_K/Q5_K: mins, each twice (pairs with bsums); Q6_K: the 16 scales
  __m256 dw, dmin;  // f16 scales as f32 (dmin unused by Q6_K)
};

enum class KType { Q4, Q5, Q6 };

template <KType T>
inline void unpack_kblock(const uint8_t* row, int64_t b, KBlock& kb) {
  if constexpr (T == KType::Q6) {
    const BlockQ6_K* x = reinterpret_cast<const BlockQ6_K*>(row) + b;
    const __m256i m4 = _mm256_set1_epi8(0xF), m2 = _mm256_set1_epi8(3);
    for (int half = 0; half < 2; ++half) {
      const uint8_t* ql = x->ql + 64 * half;
      const int8_t* sc = x->scales + 8 * half;
      const __m256i l0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql));
      const __m256i l1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql + 32));
      const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x->qh + 32 * half));
      __m256i* v = kb.q + 4 * half;
      v[0] =
          _mm256_or_si256(_mm256_and_si256(l0, m4), _mm256_slli_epi16(_mm256_and_si256(h, m2), 4));
      v[1] = _mm256_or_si256(_mm256_and_si256(l1, m4),
                             _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, 2), m2), 4));
      v[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4),
                             _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, 4), m2), 4));
      v[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4),
                             _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, 6), m2), 4));
      for (int k = 0; k < 4; ++k) {
        // Low 128-bit lane: 16 weights with scale sc[2k]; high lane: sc[2k + 1].
        kb.sc[4 * half + k] =
            _mm256_set_m128i(_mm_set1_epi16(sc[2 * k + 1]), _mm_set1_epi16(sc[2 * k]));
      }
    }
    kb.m16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x->scales)));
    kb.dw = _mm256_set1_ps(h2f(x->d));
  } else {
    const uint8_t *scales, *q;
    uint16_t d, dmin;
    if constexpr (T == KType::Q5) {
      const BlockQ5_K* x = reinterpret_cast<const BlockQ5_K*>(row) + b;
      scales = x->scales, q = x->qs, d = x->d, dmin = x->dmin;
    } else {
      const BlockQ4_K* x = reinterpret_cast<const BlockQ4_K*>(row) + b;
      scales = x->scales, q = x->qs, d = x->d, dmin = x->dmin;
    }
    const __m256i m4 = _mm256_set1_epi8(0xF);
    __m256i hbits;
    if constexpr (T == KType::Q5) {
      hbits = _mm256_loadu_si256(
          reinterpret_cast<const __m256i*>(reinterpret_cast<const BlockQ5_K*>(row)[b].qh));
    }
    for (int c = 0; c < 4; ++c) {
      const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + 32 * c));
      __m256i lo = _mm256_and_si256(raw, m4);
      __m256i hi = _mm256_and_si256(_mm256_srli_epi16(raw, 4), m4);
      if constexpr (T == KType::Q5) {
        const __m256i b0 = _mm256_set1_epi8(static_cast<char>(1u << (2 * c)));
        const __m256i b1 = _mm256_set1_epi8(static_cast<char>(2u << (2 * c)));
        const __m256i sixteen = _mm256_set1_epi8(16);
        lo = _mm256_or_si256(
            lo, _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(hbits, b0), b0), sixteen));
        hi = _mm256_or_si256(
            hi, _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(hbits, b1), b1), sixteen));
      }
      kb.q[2 * c] = lo;
      kb.q[2 * c + 1] = hi;
    }
    // The 8 six-bit scales and mins, unpacked with word operations (see scale_min_k4).
    uint32_t u[3];
    std::memcpy(u, scales, 12);
    const uint32_t sc_lo = u[0] & 0x3f3f3f3f, m_lo = u[1] & 0x3f3f3f3f;
    const uint32_t sc_hi = (u[2] & 0x0f0f0f0f) | ((u[0] >> 2) & 0x30303030);
    const uint32_t m_hi = ((u[2] >> 4) & 0x0f0f0f0f) | ((u[1] >> 2) & 0x30303030);
    const __m128i sm = _mm_setr_epi32(sc_lo, sc_hi, m_lo, m_hi);  // bytes: 8 scales, 8 mins
    const __m256i sc16 = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(sm));
    for (int j = 0; j < 8; ++j) {
      kb.sc[j] =
          _mm256_shuffle_epi8(sc16, _mm256_set1_epi16(static_cast<int16_t>(0x0100 + 0x0202 * j)));
    }
    kb.m16 = _mm256_cvtepu8_epi16(_mm_shuffle_epi8(
        sm, _mm_setr_epi8(8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15)));
    kb.dw = _mm256_set1_ps(h2f(d));
    kb.dmin = _mm256_set1_ps(h2f(dmin));
  }
}

// One super-block of one (row, activation) pair, added to that pair's accumulator.
template <KType T>
inline __m256 kblock_pair(const KBlock& kb, const ActQ8_K* ya, __m256 facc) {
  __m256i acc = _mm256_setzero_si256();
  for (int k = 0; k < 8; ++k) {
    const __m256i av = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ya->qs + 32 * k));
    acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(kb.q[k], av), kb.sc[k]));
  }
  const __m256i bs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ya->bsums));
  const __m256 da = _mm256_broadcast_ss(&ya->d);
  if constexpr (T == KType::Q6) {
    // The -32 of every weight, through the activation sums.
    acc = _mm256_sub_epi32(acc, _mm256_slli_epi32(_mm256_madd_epi16(kb.m16, bs), 5));
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(acc), _mm256_mul_ps(kb.dw, da), facc);
  } else {
    const __m256 mins = _mm256_cvtepi32_ps(_mm256_madd_epi16(kb.m16, bs));
    const __m256 t = _mm256_fnmadd_ps(mins, kb.dmin, _mm256_mul_ps(_mm256_cvtepi32_ps(acc), kb.dw));
    return _mm256_fmadd_ps(t, da, facc);
  }
}

// Rows [0, rows) x activation rows [0, nc) (nc <= 32; kNc > 0 fixes it at compile time).
template <KType T, int kNc>
void kquant_rows(const uint8_t* w, size_t ws, int64_t rows, const uint8_t* a, size_t as, int nc,
                 float* y, size_t ldy, int64_t nb) {
  if constexpr (kNc > 0) nc = kNc;
  __m256 facc[kNc > 0 ? kNc : 32];
  KBlock kb;
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* row = w + r * ws;
    for (int c = 0; c < nc; ++c) facc[c] = _mm256_setzero_ps();
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
  kquant_rows<T, 0>(static_cast<const uint8_t*>(w), 0, 1, static_cast<const uint8_t*>(a), 0, 1,
                    &out, 0, n / kQK_K);
  return out;
}

void axpy_f16(float a, const uint16_t* v, float* y, int64_t n) {
  const __m256 va = _mm256_set1_ps(a);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, load_f16(v + i), _mm256_loadu_ps(y + i)));
  }
  for (; i < n; ++i) y[i] += a * f16_to_f32(v[i]);
}

}  // namespace

const Kernels* kernels_avx2() {
  static const Kernels k = [] {
    Kernels t = kernels_scalar();  // quantizers without an AVX2 version stay scalar
    t.isa = Isa::Avx2;
    t.quantize[static_cast<int>(ActFormat::F16)] = quant_f16;
    t.quantize[static_cast<int>(ActFormat::Q8_0)] = quant_q8_0;
    t.dot[0] = dot_f32;
    t.dot[1] = dot_16bit<load_f16, f16_to_f32>;
    t.dot[2] = dot_16bit<load_bf16, bf16_to_f32>;
    t.dot[3] = dot_q8_0<false>;
    t.dot[4] = dot_q8_0<true>;
    t.dot[5] = dot_kquant<KType::Q4>;
    t.dot[6] = dot_kquant<KType::Q5>;
    t.dot[7] = dot_kquant<KType::Q6>;
    t.gemm[0] = gemm_by_dot<dot_f32>;
    t.gemm[1] = gemm_by_dot<dot_16bit<load_f16, f16_to_f32>>;
    t.gemm[2] = gemm_by_dot<dot_16bit<load_bf16, bf16_to_f32>>;
    t.gemm[3] = gemm_q8_0<false>;
    t.gemm[4] = gemm_q8_0<true>;
    t.gemm[5] = gemm_kquant<KType::Q4>;
    t.gemm[6] = gemm_kquant<KType::Q5>;
    t.gemm[7] = gemm_kquant<KType::Q6>;
    t.axpy_f16 = axpy_f16;
    return t;
  }();
  return &k;
}

}  // namespace leapfrog::cpu
