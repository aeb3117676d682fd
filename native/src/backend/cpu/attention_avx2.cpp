// AVX2 attention for one task (a few query rows x the query heads of one KV head).
//
// Keys and values are f16 in the cache. Walking the positions in blocks of 8, each block of
// keys is converted once and transposed (dimension-major, 8 positions per vector), so a
// query's 8 scores come out of head_dim multiply-adds with no horizontal sums; each block of
// values is converted once and added into every (row, head) output with its 8 weights. The
// conversions are shared by all rows and heads of the task (a GQA group of 6-7 heads, up to
// 4 rows), which is what the per-(row, head) loop over dot and axpy did not do.
//
// Every (row, head) pair sees the same float operations whatever the task holds: scores
// accumulate over dimensions in order, outputs over positions in order up to the row's own
// limit, so a batched pass gives the one-row results bit for bit.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "backend/cpu/attention_x86_parts.h"
#include "backend/cpu/avx2_parts.h"
#include "format/fp16.h"

namespace leapfrog::cpu::avx2 {

namespace {

constexpr int kBlock = 8;  // positions per block
constexpr int kMaxHeadDim = 256;

// out[0, 8 NV) += sum over i < m of w[i] * v[i * stride + (0, 8 NV)], in order of i.
template <int NV>
inline void add_weighted(const float* w, int m, const float* v, int stride, float* out) {
  __m256 acc[NV];
#pragma GCC unroll 8
  for (int c = 0; c < NV; ++c) acc[c] = _mm256_loadu_ps(out + 8 * c);
  for (int i = 0; i < m; ++i) {
    const __m256 wi = _mm256_broadcast_ss(w + i);
#pragma GCC unroll 8
    for (int c = 0; c < NV; ++c) {
      acc[c] = _mm256_fmadd_ps(wi, _mm256_load_ps(v + i * stride + 8 * c), acc[c]);
    }
  }
#pragma GCC unroll 8
  for (int c = 0; c < NV; ++c) _mm256_storeu_ps(out + 8 * c, acc[c]);
}

void attend(const AttentionTask& t) {
  const int hd = t.head_dim, pairs = t.rows * t.heads;
  int span = 0;  // positions any row may see
  for (int r = 0; r < t.rows; ++r) span = std::max(span, t.limit[r]);
  const int padded = attention_padded_span(t);
  float* qf = t.scratch;                      // pairs x hd
  float* p = t.scratch + size_t(pairs) * hd;  // pairs x padded
  // Queries rounded to f16 to meet the f16 keys, as llama.cpp's f16 cache does.
  for (int g = 0; g < pairs; ++g) {
    const float* q = t.q + (g / t.heads) * t.q_stride + (g % t.heads) * hd;
    for (int d = 0; d < hd; d += 8) {
      _mm256_storeu_ps(qf + g * hd + d, _mm256_cvtph_ps(_mm256_cvtps_ph(
                                            _mm256_loadu_ps(q + d), _MM_FROUND_TO_NEAREST_INT)));
    }
  }

  // Scores, block by block of positions.
  alignas(32) float kt[kMaxHeadDim * kBlock];
  const __m256 scale = _mm256_set1_ps(t.scale);
  for (int j0 = 0; j0 < span; j0 += kBlock) {
    keys_transposed(t, j0, std::min(kBlock, span - j0), kt);
    for (int g = 0; g < pairs; ++g) {
      if (j0 >= t.limit[g / t.heads]) continue;
      // Eight chains (dimension d mod 8), summed pairwise: the multiply-adds overlap.
      const float* q = qf + g * hd;
      __m256 acc[8];
      for (int c = 0; c < 8; ++c) acc[c] = _mm256_setzero_ps();
      for (int d = 0; d < hd; d += 8) {
#pragma GCC unroll 8
        for (int c = 0; c < 8; ++c) {
          acc[c] = _mm256_fmadd_ps(_mm256_broadcast_ss(q + d + c), _mm256_load_ps(kt + (d + c) * 8),
                                   acc[c]);
        }
      }
      for (int c = 0; c < 4; ++c) acc[c] = _mm256_add_ps(acc[c], acc[c + 4]);
      acc[0] = _mm256_add_ps(_mm256_add_ps(acc[0], acc[2]), _mm256_add_ps(acc[1], acc[3]));
      _mm256_storeu_ps(p + size_t(g) * padded + j0, _mm256_mul_ps(acc[0], scale));
    }
  }

  // Softmax per (row, head) over its visible positions; weights in p.
  for (int g = 0; g < pairs; ++g) {
    const int r = g / t.heads, lim = t.limit[r];
    const uint8_t* mask = t.mask ? t.mask + r * t.mask_stride : nullptr;
    float* s = p + size_t(g) * padded;
    // The maximum eight lanes at a time, as the AVX-512 kernel's (where the scalar chain of
    // dependent max measured a sixth of attention); max is exact in any order, so the result
    // is the scalar loop's.
    const __m256 ninf = _mm256_set1_ps(-INFINITY);
    __m256 vmax = ninf;
    int j8 = 0;
    for (; j8 + 8 <= lim; j8 += 8) {
      __m256 v = _mm256_loadu_ps(s + j8);
      if (mask) {
        int64_t m8;
        std::memcpy(&m8, mask + j8, 8);
        const __m256 hidden = _mm256_castsi256_ps(_mm256_cmpeq_epi32(
            _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(m8)), _mm256_setzero_si256()));
        v = _mm256_blendv_ps(v, ninf, hidden);
        _mm256_storeu_ps(s + j8, v);
      }
      vmax = _mm256_max_ps(vmax, v);
    }
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, vmax);
    float mx = -INFINITY;
    for (float l : lanes) mx = std::max(mx, l);
    for (int j = j8; j < lim; ++j) {
      if (mask && !mask[j]) s[j] = -INFINITY;
      mx = std::max(mx, s[j]);
    }
    float* out = t.out + r * t.q_stride + (g % t.heads) * hd;
    std::fill(out, out + hd, 0.0f);
    if (mx == -INFINITY) {  // nothing visible: zero output, no weights
      std::fill(s, s + lim, 0.0f);
      continue;
    }
    double sum = 0;
    for (int j = 0; j < lim; ++j) {
      s[j] = s[j] == -INFINITY ? 0.0f : std::exp(s[j] - mx);
      sum += s[j];
    }
    const float inv = static_cast<float>(1.0 / sum);
    for (int j = 0; j < lim; ++j) s[j] *= inv;
  }

  // Weighted values, block by block of positions, each row up to its own limit.
  alignas(32) float vf[kBlock * kMaxHeadDim];
  for (int j0 = 0; j0 < span; j0 += kBlock) {
    const int n = std::min(kBlock, span - j0);
    for (int i = 0; i < n; ++i) {
      for (int d = 0; d < hd; d += 8) {
        _mm256_store_ps(vf + i * hd + d, load_f16x8(t.v + (j0 + i) * t.kv_stride + d));
      }
    }
    for (int g = 0; g < pairs; ++g) {
      const int r = g / t.heads;
      const int m = std::min(n, t.limit[r] - j0);
      if (m <= 0) continue;
      const float* w = p + size_t(g) * padded + j0;
      float* out = t.out + r * t.q_stride + (g % t.heads) * hd;
      int d0 = 0;
      for (; d0 + 64 <= hd; d0 += 64) add_weighted<8>(w, m, vf + d0, hd, out + d0);
      for (; d0 < hd; d0 += 8) add_weighted<1>(w, m, vf + d0, hd, out + d0);
    }
  }
}

}  // namespace

void install_attention(Kernels& t) { t.attend = attend; }

}  // namespace leapfrog::cpu::avx2
