// AVX-512 attention for one task (a few query rows x the query heads of one KV head): the
// walk every kernel shares (attend_blocks, attention_walk.h) over 512-bit pieces:
//   - scores of 16 positions for up to eight (row, head) pairs per key vector loaded from L1
//     (the cache's keys converted as they lie, dimension-major), the query's element
//     broadcast from memory into the multiply-add;
//   - the softmax's exponentials sixteen at a time (exp16, within 2 ulp of expf);
//   - the weighted values in 512-bit vectors, four pairs sharing each value load, over blocks
//     of 32 positions (an output's accumulators are loaded and stored once per block; blocks
//     of 8 made 16-token passes longer in 5 of 7 alternated runs — BENCHMARKS.md, session 10).
// Every (row, head) pair sees the same float operations whatever the task holds (scores over
// dimensions in two fixed chains, outputs over positions in order up to the row's own limit),
// so a batched pass gives the one-row results bit for bit.
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "backend/cpu/attention_x86_parts.h"
#include "backend/cpu/avx512_parts.h"
#include "backend/cpu/exp_avx512.h"
#include "backend/cpu/kernels.h"

namespace leapfrog::cpu {

namespace {

constexpr int kBlock = 32;       // positions per block of weighted values
constexpr int kScoreBlock = 16;  // positions per block of scores (one 512-bit vector)
constexpr int kMaxHeadDim = 256;
constexpr int kPairs = 8;  // (row, head) pairs whose scores share each key load
// (row, head) pairs whose weighted values share each value load: with a head of 64, 16
// accumulators and 4 values in registers. (Session 10 found four no better than two on a Zen
// 5 with the per-position limit test; without it four took 14 % off the values' time on a Zen
// 4 — add_weighted, attention_walk.h.)
constexpr int kValuePairs = 4;

// 512-bit vectors for transposed_scores and add_weighted (attention_walk.h).
struct Vec16 {
  using Reg = __m512;
  static constexpr int kWidth = 16;
  static Reg zero() { return _mm512_setzero_ps(); }
  static Reg load(const float* p) { return _mm512_loadu_ps(p); }
  static Reg load(const uint16_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static void store(float* p, Reg v) { _mm512_storeu_ps(p, v); }
  static Reg broadcast(const float* p) { return _mm512_set1_ps(*p); }
  static Reg fmadd(Reg a, Reg b, Reg c) { return _mm512_fmadd_ps(a, b, c); }
  static Reg add(Reg a, Reg b) { return _mm512_add_ps(a, b); }
  static Reg mul(Reg a, Reg b) { return _mm512_mul_ps(a, b); }
};

// Keys of positions [j0, j0 + 16) (j0 a multiple of 16) as f32, kt[d * 16 + i]: one conversion
// per dimension, the cache's block as it lies.
void keys16(const AttentionTask& t, int j0, float* kt) {
  const uint16_t* kb = key_block(t, j0);
  for (int d = 0; d < t.head_dim; ++d)
    _mm512_store_ps(kt + d * kScoreBlock, Vec16::load(kb + d * kKeyBlock));
}

// Softmax numerators over s[0, lim) in place, exp(s - max) (masked positions become 0), and
// the inverse of their sum, by which the walk scales the weighted values' sums (0 when nothing
// is visible: then s holds zeros).
float softmax_row(float* s, int lim, const uint8_t* mask) {
  // The maximum sixteen lanes at a time (a scalar loop's chain of dependent max was a sixth
  // of attention's time); max is exact in any order, so the result is the scalar loop's.
  const __m512 ninf = _mm512_set1_ps(-INFINITY);
  __m512 vmax = ninf;
  for (int j = 0; j < lim; j += 16) {
    const __mmask16 in = lim - j >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (lim - j)) - 1);
    __m512 v = _mm512_maskz_loadu_ps(in, s + j);
    if (mask) {
      const __mmask16 hidden = _mm512_mask_cmpeq_epi32_mask(
          in, _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(in, mask + j)), _mm512_setzero_si512());
      v = _mm512_mask_mov_ps(v, hidden, ninf);
      _mm512_mask_storeu_ps(s + j, hidden, ninf);
    }
    vmax = _mm512_mask_max_ps(vmax, in, vmax, v);
  }
  const float mx = _mm512_reduce_max_ps(vmax);
  if (mx == -INFINITY) {
    std::fill(s, s + lim, 0.0f);
    return 0.0f;
  }
  const __m512 vmx = _mm512_set1_ps(mx);
  __m512 sum = _mm512_setzero_ps();
  int j = 0;
  for (; j + 16 <= lim; j += 16) {
    const __m512 e = exp16(_mm512_sub_ps(_mm512_loadu_ps(s + j), vmx));
    _mm512_storeu_ps(s + j, e);
    sum = _mm512_add_ps(sum, e);
  }
  if (j < lim) {
    const __mmask16 k = static_cast<__mmask16>((1u << (lim - j)) - 1);
    const __m512 e = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, s + j), vmx));
    _mm512_mask_storeu_ps(s + j, k, e);
    sum = _mm512_add_ps(sum, _mm512_maskz_mov_ps(k, e));
  }
  return 1.0f / _mm512_reduce_add_ps(sum);
}

// The vector width's pieces of attend_blocks (attention_walk.h).
struct Avx512Pieces {
  static constexpr int kScoreBlock = leapfrog::cpu::kScoreBlock, kPairs = leapfrog::cpu::kPairs,
                       kBlock = leapfrog::cpu::kBlock, kValuePairs = leapfrog::cpu::kValuePairs,
                       kMaxHeadDim = leapfrog::cpu::kMaxHeadDim;
  static void keys(const AttentionTask& t, int j0, float* kt) { keys16(t, j0, kt); }
  template <int P, class T>
  static void scores(const float* const* q, const T* kt, int ld, int hd, float scale,
                     float* const* out) {
    transposed_scores<Vec16, P>(q, kt, ld, hd, scale, out);
  }
  static float softmax(float* s, int lim, const uint8_t* mask) { return softmax_row(s, lim, mask); }
  static void round_query(const float* q, float* qf, int hd) { round_query_f16c(q, qf, hd); }
  static void values(const AttentionTask& t, int j0, int n, float* vf) {
    values_f16c(t, j0, n, vf);
  }
  template <class T>
  static void add_values(int np, const float* const* w, const int* m, const T* v, int stride,
                         int hd, float* const* out) {
    for (int d0 = 0; d0 < hd;) {
      float* o[kValuePairs];
      for (int k = 0; k < np; ++k) o[k] = out[k] + d0;
      const int left = hd - d0;
      if (left >= 64) {
        add_weighted_n<Vec16, kValuePairs, 4>(np, w, m, v + d0, stride, o), d0 += 64;
      } else if (left >= 16) {
        add_weighted_n<Vec16, kValuePairs, 1>(np, w, m, v + d0, stride, o), d0 += 16;
      } else {
        // A head size of 8 mod 16: the last 8 dimensions one by one, in the same order.
        for (int k = 0; k < np; ++k) {
          for (int dd = d0; dd < hd; ++dd) {
            float acc = o[k][dd - d0];
            for (int i = 0; i < m[k]; ++i) acc = std::fma(w[k][i], as_f32(v[i * stride + dd]), acc);
            o[k][dd - d0] = acc;
          }
        }
        d0 = hd;
      }
    }
  }
};

void attend(const AttentionTask& t) { attend_blocks<Avx512Pieces>(t); }

}  // namespace

void install_attention_avx512(Kernels& t) { t.attend = attend; }

}  // namespace leapfrog::cpu
