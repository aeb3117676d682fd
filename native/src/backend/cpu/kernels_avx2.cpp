// AVX2 + FMA + F16C kernels. Integer sums are the same as the scalar kernels'; only the
// order of float additions differs. 8-bit products use the maddubs "sign trick":
// |w| (unsigned) times sign(w)*a (signed) gives w*a without overflow for |w| <= 127.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "backend/cpu/avx2_common.h"
#include "backend/cpu/avx2_parts.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/quant_blocks.h"
#include "backend/cpu/tile_driver.h"
#include "format/fp16.h"

namespace leapfrog::cpu {

namespace {

using avx2::h2f;
using avx2::hsum;
using avx2::unpack_nibbles;

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
    // F16C rounds as f32_to_f16 does (to nearest even); the sum from the register (byte
    // pairs, then word pairs), not the stored bytes: 8 rows of 512 to 4,864 values quantized
    // in 0.77x the time of the scalar versions of both (BENCHMARKS.md, session 16).
    y[b].d = h2f(_cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT));
    const __m256i words = _mm256_maddubs_epi16(_mm256_set1_epi8(1), p);
    y[b].sum = avx2::hsum_i32(_mm256_madd_epi16(words, _mm256_set1_epi16(1)));
  }
}

// As the scalar quant_q8_k (llama.cpp's Q8_K), byte for byte: the first value of largest
// magnitude maps to -127, the scale is -127 / that value, and bsums are sums of 16 quants.
void quant_q8_k(const float* x, void* dst, int64_t n) {
  ActQ8_K* y = static_cast<ActQ8_K*>(dst);
  const __m256 sign = _mm256_set1_ps(-0.0f);
  for (int64_t b = 0; b < n / kQK_K; ++b, x += kQK_K) {
    __m256 m8 = _mm256_setzero_ps();
    // The running maximum as the second operand: a NaN value is skipped, as in the scalar.
    for (int k = 0; k < kQK_K / 8; ++k)
      m8 = _mm256_max_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(x + 8 * k)), m8);
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(m8), _mm256_extractf128_ps(m8, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    const float amax = _mm_cvtss_f32(m);
    if (amax == 0) {
      q8k_zero(y[b]);
      continue;
    }
    const float iscale = -127.0f / q8k_first_of_magnitude(x, amax);
    const __m256 vis = _mm256_set1_ps(iscale);
    for (int k = 0; k < kQK_K / 32; ++k) {
      __m256i q[4];
      for (int i = 0; i < 4; ++i) {
        q[i] = _mm256_cvtps_epi32(
            _mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(x + 32 * k + 8 * i), vis),
                            _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
      }
      // |q| <= 127 by construction; pack 32 int32 -> 32 int8 and undo the lane interleave.
      __m256i p =
          _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
      p = _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y[b].qs + 32 * k), p);
    }
    for (int g = 0; g < kQK_K / 16; ++g) {
      int sum = 0;
      for (int j = 0; j < 16; ++j) sum += y[b].qs[16 * g + j];
      y[b].bsums[g] = static_cast<int16_t>(sum);
    }
    y[b].d = 1.0f / iscale;
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

template <bool kQ4>
struct TileQ8_0 {
  template <int R, int C>
  static void run(const uint8_t* w, size_t ws, const uint8_t* a, size_t as, float* y, size_t ldy,
                  int64_t nb) {
    tile_q8_0<kQ4, R, C>(w, ws, a, as, y, ldy, nb);
  }
};

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
    t.quantize[static_cast<int>(ActFormat::Q8_K)] = quant_q8_k;
    t.dot[0] = dot_f32;
    t.dot[1] = dot_16bit<load_f16, f16_to_f32>;
    t.dot[2] = dot_16bit<load_bf16, bf16_to_f32>;
    t.dot[3] = dot_tiled<TileQ8_0<false>, kQK>;
    t.dot[4] = dot_tiled<TileQ8_0<true>, kQK>;
    t.gemm[0] = gemm_by_dot<dot_f32>;
    t.gemm[1] = gemm_by_dot<dot_16bit<load_f16, f16_to_f32>>;
    t.gemm[2] = gemm_by_dot<dot_16bit<load_bf16, bf16_to_f32>>;
    t.gemm[3] = gemm_tiled<TileQ8_0<false>, kQK>;
    t.gemm[4] = gemm_tiled<TileQ8_0<true>, kQK>;
    t.axpy_f16 = axpy_f16;
    avx2::install_kquant(t);
    avx2::install_lowbit(t);
    avx2::install_attention(t);
    avx2::install_activation(t);
    avx2::install_packed(t);
    return t;
  }();
  return &k;
}

}  // namespace leapfrog::cpu
