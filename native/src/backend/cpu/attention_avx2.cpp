// AVX2 attention for one task (a few query rows x the query heads of one KV head).
//
// Keys and values are f16 in the cache. Walking the positions in blocks, each block of keys is
// converted once and transposed (dimension-major, 8 positions per vector), so a query's 8
// scores come out of head_dim multiply-adds with no horizontal sums; each block of values is
// converted once and added into every (row, head) output with its weights. The conversions
// are shared by all rows and heads of the task (a GQA group of 6-7 heads, up to 4 rows). As
// the AVX-512 kernel (attention_avx512.cpp), in 256-bit vectors:
//   - scores for four (row, head) pairs at once, so each transposed key vector loaded from
//     L1 serves four queries, the query's element broadcast from memory;
//   - the softmax's exponentials eight at a time (exp8, exp_avx2.h; libm's expf one at a time
//     was a fifth of attention on a Zen 3);
//   - the weighted values over blocks of 32 positions, two pairs sharing each value load.
//
// Every (row, head) pair sees the same float operations whatever the task holds: scores over
// dimensions in two fixed chains, outputs over positions in order up to the row's own limit,
// so a batched pass gives the one-row results bit for bit.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "backend/cpu/attention_x86_parts.h"
#include "backend/cpu/avx2_common.h"
#include "backend/cpu/avx2_parts.h"
#include "backend/cpu/exp_avx2.h"

namespace leapfrog::cpu::avx2 {

namespace {

constexpr int kScoreBlock = 8;  // positions per block of scores (one vector)
constexpr int kBlock = 32;      // positions per block of weighted values
constexpr int kMaxHeadDim = 256;
constexpr int kPairs = 4;       // (row, head) pairs whose scores share each key load
constexpr int kValuePairs = 2;  // (row, head) pairs whose weighted values share each value load

// Scores of P pairs against one block of 8 transposed keys: two chains per pair over the
// dimensions (even and odd d), summed at the end.
template <int P>
inline void block_scores(const float* const* q, const float* kt, int hd, __m256 scale,
                         float* const* out) {
  __m256 acc[P][2];
#pragma GCC unroll 4
  for (int g = 0; g < P; ++g) acc[g][0] = acc[g][1] = _mm256_setzero_ps();
  for (int d = 0; d < hd; d += 2) {
    const __m256 k0 = _mm256_load_ps(kt + d * kScoreBlock),
                 k1 = _mm256_load_ps(kt + (d + 1) * kScoreBlock);
#pragma GCC unroll 4
    for (int g = 0; g < P; ++g) {
      acc[g][0] = _mm256_fmadd_ps(_mm256_broadcast_ss(q[g] + d), k0, acc[g][0]);
      acc[g][1] = _mm256_fmadd_ps(_mm256_broadcast_ss(q[g] + d + 1), k1, acc[g][1]);
    }
  }
#pragma GCC unroll 4
  for (int g = 0; g < P; ++g) {
    _mm256_storeu_ps(out[g], _mm256_mul_ps(_mm256_add_ps(acc[g][0], acc[g][1]), scale));
  }
}

// out[g][0, 8 NV) += sum over i < m[g] of w[g][i] * v[i * stride + (0, 8 NV)], in order of i,
// for P pairs sharing the value loads.
template <int P, int NV>
inline void add_weighted(const float* const* w, const int* m, const float* v, int stride,
                         float* const* out) {
  __m256 acc[P][NV];
  int most = 0;
#pragma GCC unroll 2
  for (int g = 0; g < P; ++g) {
    most = std::max(most, m[g]);
#pragma GCC unroll 4
    for (int c = 0; c < NV; ++c) acc[g][c] = _mm256_loadu_ps(out[g] + 8 * c);
  }
  for (int i = 0; i < most; ++i) {
#pragma GCC unroll 4
    for (int c = 0; c < NV; ++c) {
      const __m256 vi = _mm256_load_ps(v + i * stride + 8 * c);
#pragma GCC unroll 2
      for (int g = 0; g < P; ++g) {
        // A pair past its own limit skips the position (no add of a zero weight, so its
        // sequence of operations is the one it has alone).
        if (i < m[g]) acc[g][c] = _mm256_fmadd_ps(_mm256_broadcast_ss(w[g] + i), vi, acc[g][c]);
      }
    }
  }
#pragma GCC unroll 2
  for (int g = 0; g < P; ++g) {
#pragma GCC unroll 4
    for (int c = 0; c < NV; ++c) _mm256_storeu_ps(out[g] + 8 * c, acc[g][c]);
  }
}

template <int NV>
inline void add_weighted_n(int np, const float* const* w, const int* m, const float* v, int stride,
                           float* const* out) {
  static_assert(kValuePairs == 2, "add_weighted_n dispatches one or two pairs");
  if (np == kValuePairs) return add_weighted<kValuePairs, NV>(w, m, v, stride, out);
  add_weighted<1, NV>(w, m, v, stride, out);
}

// Lanes [0, k) set (k <= 8): the tail of a row for maskload/maskstore.
inline __m256i first_lanes(int k) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

inline float hmax(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  return _mm_cvtss_f32(_mm_max_ss(m, _mm_movehdup_ps(m)));
}

// Softmax over s[0, lim) in place (masked positions become 0); false when nothing is
// visible (then s holds zeros).
bool softmax_row(float* s, int lim, const uint8_t* mask) {
  // The maximum eight lanes at a time; max is exact in any order.
  const __m256 ninf = _mm256_set1_ps(-INFINITY);
  __m256 vmax = ninf;
  for (int j = 0; j < lim; j += 8) {
    const int k = std::min(8, lim - j);
    const __m256i in = first_lanes(k);
    __m256 v = _mm256_blendv_ps(ninf, _mm256_maskload_ps(s + j, in), _mm256_castsi256_ps(in));
    if (mask) {
      int64_t m8 = 0;
      std::memcpy(&m8, mask + j, k);
      const __m256 hidden =
          _mm256_and_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(
                            _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(m8)), _mm256_setzero_si256())),
                        _mm256_castsi256_ps(in));
      v = _mm256_blendv_ps(v, ninf, hidden);
      _mm256_maskstore_ps(s + j, in, v);
    }
    vmax = _mm256_max_ps(vmax, v);
  }
  const float mx = hmax(vmax);
  if (mx == -INFINITY) {
    std::fill(s, s + lim, 0.0f);
    return false;
  }
  const __m256 vmx = _mm256_set1_ps(mx);
  __m256 sum = _mm256_setzero_ps();
  for (int j = 0; j < lim; j += 8) {
    const __m256i in = first_lanes(std::min(8, lim - j));
    const __m256 e = _mm256_and_ps(exp8(_mm256_sub_ps(_mm256_maskload_ps(s + j, in), vmx)),
                                   _mm256_castsi256_ps(in));
    _mm256_maskstore_ps(s + j, in, e);
    sum = _mm256_add_ps(sum, e);
  }
  const __m256 inv = _mm256_set1_ps(1.0f / hsum(sum));
  for (int j = 0; j < lim; j += 8) {
    const __m256i in = first_lanes(std::min(8, lim - j));
    _mm256_maskstore_ps(s + j, in, _mm256_mul_ps(_mm256_maskload_ps(s + j, in), inv));
  }
  return true;
}

void attend(const AttentionTask& t) {
  const int hd = t.head_dim, pairs = t.rows * t.heads;
  int span = 0;  // positions any row may see
  for (int r = 0; r < t.rows; ++r) span = std::max(span, t.limit[r]);
  const int padded = attention_padded_span(t);
  float* qf = t.scratch;                      // pairs x hd
  float* p = t.scratch + size_t(pairs) * hd;  // pairs x padded
  const auto row_of = [&](int g) { return g / t.heads; };
  const auto out_of = [&](int g) { return t.out + row_of(g) * t.q_stride + (g % t.heads) * hd; };
  // Queries rounded to f16 to meet the f16 keys, as llama.cpp's f16 cache does.
  for (int g = 0; g < pairs; ++g) {
    const float* q = t.q + row_of(g) * t.q_stride + (g % t.heads) * hd;
    for (int d = 0; d < hd; d += 8) {
      _mm256_storeu_ps(qf + g * hd + d, _mm256_cvtph_ps(_mm256_cvtps_ph(
                                            _mm256_loadu_ps(q + d), _MM_FROUND_TO_NEAREST_INT)));
    }
  }

  // Scores, block by block of 8 positions, four pairs at a time.
  alignas(32) float kt[kMaxHeadDim * kScoreBlock];
  const __m256 scale = _mm256_set1_ps(t.scale);
  for (int j0 = 0; j0 < span; j0 += kScoreBlock) {
    keys_transposed(t, j0, std::min(kScoreBlock, span - j0), kt);
    const float* q[kPairs];
    float* out[kPairs];
    int np = 0;
    const auto flush = [&] {
      switch (np) {
        case 4:
          block_scores<4>(q, kt, hd, scale, out);
          break;
        case 3:
          block_scores<3>(q, kt, hd, scale, out);
          break;
        case 2:
          block_scores<2>(q, kt, hd, scale, out);
          break;
        case 1:
          block_scores<1>(q, kt, hd, scale, out);
          break;
      }
      np = 0;
    };
    for (int g = 0; g < pairs; ++g) {
      if (j0 >= t.limit[row_of(g)]) continue;
      q[np] = qf + g * hd;
      out[np] = p + size_t(g) * padded + j0;
      if (++np == kPairs) flush();
    }
    flush();
  }

  // Softmax per (row, head) over its visible positions; weights in p.
  for (int g = 0; g < pairs; ++g) {
    const int r = row_of(g);
    float* o = out_of(g);
    std::fill(o, o + hd, 0.0f);
    softmax_row(p + size_t(g) * padded, t.limit[r], t.mask ? t.mask + r * t.mask_stride : nullptr);
  }

  // Weighted values, block by block of positions, each row up to its own limit, two pairs
  // sharing each value load.
  alignas(32) float vf[kBlock * kMaxHeadDim];
  for (int j0 = 0; j0 < span; j0 += kBlock) {
    const int n = std::min(kBlock, span - j0);
    for (int i = 0; i < n; ++i) {
      for (int d = 0; d < hd; d += 8) {
        _mm256_store_ps(vf + i * hd + d, load_f16x8(t.v + (j0 + i) * t.kv_stride + d));
      }
    }
    int g = 0;
    while (g < pairs) {
      const float* w[kValuePairs];
      float* out[kValuePairs];
      int m[kValuePairs], np = 0;
      for (; g < pairs && np < kValuePairs; ++g) {
        const int mm = std::min(n, t.limit[row_of(g)] - j0);
        if (mm <= 0) continue;
        w[np] = p + size_t(g) * padded + j0;
        out[np] = out_of(g);
        m[np++] = mm;
      }
      if (np == 0) break;
      for (int d0 = 0; d0 < hd;) {
        float* o[kValuePairs];
        for (int k = 0; k < np; ++k) o[k] = out[k] + d0;
        if (hd - d0 >= 32) {
          add_weighted_n<4>(np, w, m, vf + d0, hd, o), d0 += 32;
        } else {
          add_weighted_n<1>(np, w, m, vf + d0, hd, o), d0 += 8;
        }
      }
    }
  }
}

}  // namespace

void install_attention(Kernels& t) { t.attend = attend; }

}  // namespace leapfrog::cpu::avx2
