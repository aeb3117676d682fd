// AVX2 + FMA + F16C kernels. Integer sums are the same as the scalar kernels'; only the
// order of float additions differs. 8-bit products use the maddubs "sign trick":
// |w| (unsigned) times sign(w)*a (signed) gives w*a without overflow for |w| <= 127.
#include <immintrin.h>

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

// 32 signed bytes x 32 signed bytes -> 8 int32 partial sums.
inline __m256i dot_i8(__m256i w, __m256i a) {
  const __m256i p16 = _mm256_maddubs_epi16(_mm256_sign_epi8(w, w), _mm256_sign_epi8(a, w));
  return _mm256_madd_epi16(p16, _mm256_set1_epi16(1));
}

// 32 unsigned bytes (< 128) x 32 signed bytes -> 16 int16 pair sums.
inline __m256i dot_u8_i16(__m256i u, __m256i a) { return _mm256_maddubs_epi16(u, a); }

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

float dot_q8_0(const void* w, const void* a, int64_t n) {
  const BlockQ8_0* x = static_cast<const BlockQ8_0*>(w);
  const ActQ8_0* y = static_cast<const ActQ8_0*>(a);
  // Four accumulators: one FMA chain would wait on its own latency every block.
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                   _mm256_setzero_ps()};
  const int64_t nb = n / kQK;
  for (int64_t b = 0; b < nb; ++b) {
    const __m256i qw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[b].qs));
    const __m256i qa = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[b].qs));
    const __m256 d = _mm256_set1_ps(h2f(x[b].d) * y[b].d);
    acc[b & 3] = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(dot_i8(qw, qa)), acc[b & 3]);
  }
  return hsum(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
}

inline __m256i unpack_nibbles(const uint8_t* p) {  // 16 bytes -> low nibbles, then high
  const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i m = _mm_set1_epi8(0xF);
  return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(t, 4), m), _mm_and_si128(t, m));
}

float dot_q4_0(const void* w, const void* a, int64_t n) {
  const BlockQ4_0* x = static_cast<const BlockQ4_0*>(w);
  const ActQ8_0* y = static_cast<const ActQ8_0*>(a);
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                   _mm256_setzero_ps()};
  const __m256i eight = _mm256_set1_epi8(8);
  for (int64_t b = 0; b < n / kQK; ++b) {
    const __m256i qw = _mm256_sub_epi8(unpack_nibbles(x[b].qs), eight);
    const __m256i qa = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[b].qs));
    const __m256 d = _mm256_set1_ps(h2f(x[b].d) * y[b].d);
    acc[b & 3] = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(dot_i8(qw, qa)), acc[b & 3]);
  }
  return hsum(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
}

inline int kquant_min_sum(const uint8_t* scales, const int16_t* bsums) {
  int s = 0;
  for (int j = 0; j < 8; ++j) {
    uint8_t sc, m;
    scale_min_k4(j, scales, sc, m);
    s += m * (bsums[2 * j] + bsums[2 * j + 1]);
  }
  return s;
}

// Shared by Q4_K and Q5_K: `hi` adds the fifth bit (zero for Q4_K).
template <bool kFive>
float dot_q45_k(const void* w, const void* a, int64_t n) {
  const ActQ8_K* y = static_cast<const ActQ8_K*>(a);
  const __m256i m4 = _mm256_set1_epi8(0xF);
  float sum = 0;
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const uint8_t *scales, *q, *qh = nullptr;
    float dw, dminw;
    if constexpr (kFive) {
      const BlockQ5_K* x = static_cast<const BlockQ5_K*>(w) + b;
      scales = x->scales, q = x->qs, qh = x->qh;
      dw = h2f(x->d), dminw = h2f(x->dmin);
    } else {
      const BlockQ4_K* x = static_cast<const BlockQ4_K*>(w) + b;
      scales = x->scales, q = x->qs;
      dw = h2f(x->d), dminw = h2f(x->dmin);
    }
    __m256i hbits;
    if constexpr (kFive) hbits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qh));
    __m256i acc = _mm256_setzero_si256();
    const int8_t* act = y[b].qs;
    for (int c = 0; c < 4; ++c, q += 32, act += 64) {
      uint8_t sc0, m0, sc1, m1;
      scale_min_k4(2 * c, scales, sc0, m0);
      scale_min_k4(2 * c + 1, scales, sc1, m1);
      const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q));
      __m256i lo = _mm256_and_si256(raw, m4);
      __m256i hi = _mm256_and_si256(_mm256_srli_epi16(raw, 4), m4);
      if constexpr (kFive) {
        const __m256i b0 = _mm256_set1_epi8(static_cast<char>(1u << (2 * c)));
        const __m256i b1 = _mm256_set1_epi8(static_cast<char>(2u << (2 * c)));
        const __m256i sixteen = _mm256_set1_epi8(16);
        lo = _mm256_or_si256(
            lo, _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(hbits, b0), b0), sixteen));
        hi = _mm256_or_si256(
            hi, _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(hbits, b1), b1), sixteen));
      }
      const __m256i a0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(act));
      const __m256i a1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(act + 32));
      const __m256i p0 = _mm256_madd_epi16(dot_u8_i16(lo, a0), _mm256_set1_epi16(sc0));
      const __m256i p1 = _mm256_madd_epi16(dot_u8_i16(hi, a1), _mm256_set1_epi16(sc1));
      acc = _mm256_add_epi32(acc, _mm256_add_epi32(p0, p1));
    }
    const int sum_q = hsum_i32(acc);
    const int sum_m = kquant_min_sum(scales, y[b].bsums);
    sum += dw * y[b].d * static_cast<float>(sum_q) - dminw * y[b].d * static_cast<float>(sum_m);
  }
  return sum;
}

float dot_q6_k(const void* w, const void* a, int64_t n) {
  const BlockQ6_K* x = static_cast<const BlockQ6_K*>(w);
  const ActQ8_K* y = static_cast<const ActQ8_K*>(a);
  const __m256i m4 = _mm256_set1_epi8(0xF);
  const __m256i m2 = _mm256_set1_epi8(3);
  float sum = 0;
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const uint8_t* ql = x[b].ql;
    const uint8_t* qh = x[b].qh;
    const int8_t* sc = x[b].scales;
    const int8_t* act = y[b].qs;
    __m256i acc = _mm256_setzero_si256();
    for (int half = 0; half < 2; ++half, ql += 64, qh += 32, sc += 8, act += 128) {
      const __m256i l0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql));
      const __m256i l1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql + 32));
      const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qh));
      __m256i v[4];
      v[0] =
          _mm256_or_si256(_mm256_and_si256(l0, m4), _mm256_slli_epi16(_mm256_and_si256(h, m2), 4));
      v[1] = _mm256_or_si256(_mm256_and_si256(l1, m4),
                             _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, 2), m2), 4));
      v[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4),
                             _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, 4), m2), 4));
      v[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4),
                             _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, 6), m2), 4));
      for (int k = 0; k < 4; ++k) {
        const __m256i av = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(act + 32 * k));
        // Low 128-bit lane = 16 weights with scale sc[2k], high lane = sc[2k+1].
        const __m256i s =
            _mm256_set_m128i(_mm_set1_epi16(sc[2 * k + 1]), _mm_set1_epi16(sc[2 * k]));
        acc = _mm256_add_epi32(acc, _mm256_madd_epi16(dot_u8_i16(v[k], av), s));
      }
    }
    int offset = 0;  // the -32 of every weight, through the activation sums
    for (int k = 0; k < 16; ++k) offset += x[b].scales[k] * y[b].bsums[k];
    const int isum = hsum_i32(acc) - 32 * offset;
    sum += h2f(x[b].d) * y[b].d * static_cast<float>(isum);
  }
  return sum;
}

// ---- one weight row x four activation rows ------------------------------------------------

float hsum4_store(const __m256 acc[4], float* out) {
  for (int k = 0; k < 4; ++k) out[k] = hsum(acc[k]);
  return 0;
}

template <bool kQ4>
void dot4_q8_0_q4_0(const void* w, const uint8_t* a, size_t a_stride, float* out, int64_t n) {
  const ActQ8_0* y[4];
  for (int k = 0; k < 4; ++k) y[k] = reinterpret_cast<const ActQ8_0*>(a + k * a_stride);
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                   _mm256_setzero_ps()};
  for (int64_t b = 0; b < n / kQK; ++b) {
    __m256i qw;
    float dw;
    if constexpr (kQ4) {
      const BlockQ4_0* x = static_cast<const BlockQ4_0*>(w) + b;
      qw = _mm256_sub_epi8(unpack_nibbles(x->qs), _mm256_set1_epi8(8));
      dw = h2f(x->d);
    } else {
      const BlockQ8_0* x = static_cast<const BlockQ8_0*>(w) + b;
      qw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x->qs));
      dw = h2f(x->d);
    }
    const __m256i aw = _mm256_sign_epi8(qw, qw);
    for (int k = 0; k < 4; ++k) {
      const __m256i qa = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[k][b].qs));
      const __m256i p = _mm256_madd_epi16(_mm256_maddubs_epi16(aw, _mm256_sign_epi8(qa, qw)),
                                          _mm256_set1_epi16(1));
      acc[k] = _mm256_fmadd_ps(_mm256_set1_ps(dw * y[k][b].d), _mm256_cvtepi32_ps(p), acc[k]);
    }
  }
  hsum4_store(acc, out);
}

template <bool kFive>
void dot4_q45_k(const void* w, const uint8_t* a, size_t a_stride, float* out, int64_t n) {
  const ActQ8_K* y[4];
  for (int k = 0; k < 4; ++k) y[k] = reinterpret_cast<const ActQ8_K*>(a + k * a_stride);
  const __m256i m4 = _mm256_set1_epi8(0xF);
  float sum[4] = {0, 0, 0, 0};
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const uint8_t *scales, *q, *qh = nullptr;
    float dw, dminw;
    if constexpr (kFive) {
      const BlockQ5_K* x = static_cast<const BlockQ5_K*>(w) + b;
      scales = x->scales, q = x->qs, qh = x->qh;
      dw = h2f(x->d), dminw = h2f(x->dmin);
    } else {
      const BlockQ4_K* x = static_cast<const BlockQ4_K*>(w) + b;
      scales = x->scales, q = x->qs;
      dw = h2f(x->d), dminw = h2f(x->dmin);
    }
    __m256i hbits;
    if constexpr (kFive) hbits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qh));
    __m256i acc[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(),
                      _mm256_setzero_si256()};
    for (int c = 0; c < 4; ++c) {
      uint8_t sc0, m0, sc1, m1;
      scale_min_k4(2 * c, scales, sc0, m0);
      scale_min_k4(2 * c + 1, scales, sc1, m1);
      const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + 32 * c));
      __m256i lo = _mm256_and_si256(raw, m4);
      __m256i hi = _mm256_and_si256(_mm256_srli_epi16(raw, 4), m4);
      if constexpr (kFive) {
        const __m256i b0 = _mm256_set1_epi8(static_cast<char>(1u << (2 * c)));
        const __m256i b1 = _mm256_set1_epi8(static_cast<char>(2u << (2 * c)));
        const __m256i sixteen = _mm256_set1_epi8(16);
        lo = _mm256_or_si256(
            lo, _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(hbits, b0), b0), sixteen));
        hi = _mm256_or_si256(
            hi, _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(hbits, b1), b1), sixteen));
      }
      const __m256i s0 = _mm256_set1_epi16(sc0), s1 = _mm256_set1_epi16(sc1);
      for (int k = 0; k < 4; ++k) {
        const int8_t* act = y[k][b].qs + 64 * c;
        const __m256i a0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(act));
        const __m256i a1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(act + 32));
        acc[k] = _mm256_add_epi32(
            acc[k], _mm256_add_epi32(_mm256_madd_epi16(_mm256_maddubs_epi16(lo, a0), s0),
                                     _mm256_madd_epi16(_mm256_maddubs_epi16(hi, a1), s1)));
      }
    }
    for (int k = 0; k < 4; ++k) {
      const int sum_q = hsum_i32(acc[k]);
      const int sum_m = kquant_min_sum(scales, y[k][b].bsums);
      sum[k] += dw * y[k][b].d * static_cast<float>(sum_q) -
                dminw * y[k][b].d * static_cast<float>(sum_m);
    }
  }
  for (int k = 0; k < 4; ++k) out[k] = sum[k];
}

void dot4_q6_k(const void* w, const uint8_t* a, size_t a_stride, float* out, int64_t n) {
  const BlockQ6_K* x = static_cast<const BlockQ6_K*>(w);
  const ActQ8_K* y[4];
  for (int k = 0; k < 4; ++k) y[k] = reinterpret_cast<const ActQ8_K*>(a + k * a_stride);
  const __m256i m4 = _mm256_set1_epi8(0xF);
  const __m256i m2 = _mm256_set1_epi8(3);
  float sum[4] = {0, 0, 0, 0};
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    __m256i acc[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(),
                      _mm256_setzero_si256()};
    for (int half = 0; half < 2; ++half) {
      const uint8_t* ql = x[b].ql + 64 * half;
      const uint8_t* qh = x[b].qh + 32 * half;
      const int8_t* sc = x[b].scales + 8 * half;
      const __m256i l0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql));
      const __m256i l1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql + 32));
      const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qh));
      __m256i v[4], s[4];
      v[0] =
          _mm256_or_si256(_mm256_and_si256(l0, m4), _mm256_slli_epi16(_mm256_and_si256(h, m2), 4));
      v[1] = _mm256_or_si256(_mm256_and_si256(l1, m4),
                             _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, 2), m2), 4));
      v[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4),
                             _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, 4), m2), 4));
      v[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4),
                             _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, 6), m2), 4));
      for (int r = 0; r < 4; ++r) {
        s[r] = _mm256_set_m128i(_mm_set1_epi16(sc[2 * r + 1]), _mm_set1_epi16(sc[2 * r]));
      }
      for (int k = 0; k < 4; ++k) {
        const int8_t* act = y[k][b].qs + 128 * half;
        for (int r = 0; r < 4; ++r) {
          const __m256i av = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(act + 32 * r));
          acc[k] =
              _mm256_add_epi32(acc[k], _mm256_madd_epi16(_mm256_maddubs_epi16(v[r], av), s[r]));
        }
      }
    }
    const float dw = h2f(x[b].d);
    for (int k = 0; k < 4; ++k) {
      int offset = 0;
      for (int j = 0; j < 16; ++j) offset += x[b].scales[j] * y[k][b].bsums[j];
      sum[k] += dw * y[k][b].d * static_cast<float>(hsum_i32(acc[k]) - 32 * offset);
    }
  }
  for (int k = 0; k < 4; ++k) out[k] = sum[k];
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
    t.dot[3] = dot_q8_0;
    t.dot[4] = dot_q4_0;
    t.dot[5] = dot_q45_k<false>;
    t.dot[6] = dot_q45_k<true>;
    t.dot[7] = dot_q6_k;
    t.dot4[3] = dot4_q8_0_q4_0<false>;
    t.dot4[4] = dot4_q8_0_q4_0<true>;
    t.dot4[5] = dot4_q45_k<false>;
    t.dot4[6] = dot4_q45_k<true>;
    t.dot4[7] = dot4_q6_k;
    t.axpy_f16 = axpy_f16;
    return t;
  }();
  return &k;
}

}  // namespace leapfrog::cpu
