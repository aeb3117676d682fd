// AVX2 attention for one task (a few query rows x the query heads of one KV head): the walk
// every kernel shares (attend_blocks, attention_walk.h) over 256-bit pieces.
//
// Keys and values are f16 in the cache. Each block of 16 keys is converted once, as the cache
// lays it out (dimension-major), and every (row, head) pair's 16 scores come out of two
// multiply-adds per dimension (transposed_scores: the AVX-512 kernel's operations, lane for
// lane; the position-major cache before had each key's lanes summed horizontally); each
// block of values is converted once and added into every (row, head) output with its
// weights. As in the AVX-512 kernel:
//   - the softmax's exponentials eight at a time (exp8, exp_avx2.h; libm's expf one at a time
//     was a fifth of attention on a Zen 3), in whole vectors (no masked stores);
//   - the weighted values over blocks of 32 positions, two pairs sharing each value load.
// Every (row, head) pair sees the same float operations whatever the task holds: scores over
// dimensions in two fixed chains, outputs over positions in order up to the row's own limit, so a
// batched pass gives the one-row results bit for bit.
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

constexpr int kScoreBlock = 16;  // positions per block of scores (two vectors)
constexpr int kBlock = 32;       // positions per block of weighted values
constexpr int kMaxHeadDim = 256;
// (row, head) pairs per call of transposed_scores: 8 accumulators beside the four vectors of
// keys, which stay in registers (Vec8::keep). Three pairs (12 accumulators) left GCC room for
// two of the keys only, the other two folded into every pair's FMA as memory operands; with
// all four kept, three pairs spill. Two pairs, keys kept: 16 rows of a 0.5B task 0.386 ->
// 0.360 ms, of a 1.5B 0.606 -> 0.575 (lf_attnbench, 3 copies per build, Zen 5, session 26;
// four pairs over one vector: 6-13 % slower, session 20).
constexpr int kPairs = 2;
constexpr int kValuePairs = 2;  // (row, head) pairs whose weighted values share each value load

// 256-bit vectors for transposed_scores and add_weighted (attention_walk.h).
struct Vec8 {
  using Reg = __m256;
  static constexpr int kWidth = 8;
  static Reg zero() { return _mm256_setzero_ps(); }
  static Reg load(const float* p) { return _mm256_loadu_ps(p); }
  static Reg load(const uint16_t* p) { return load_f16x8(p); }
  static void store(float* p, Reg v) { _mm256_storeu_ps(p, v); }
  static Reg broadcast(const float* p) { return _mm256_broadcast_ss(p); }
  static Reg fmadd(Reg a, Reg b, Reg c) { return _mm256_fmadd_ps(a, b, c); }
  static Reg add(Reg a, Reg b) { return _mm256_add_ps(a, b); }
  static Reg mul(Reg a, Reg b) { return _mm256_mul_ps(a, b); }
  // Keys and values the walk loads once for several pairs stay in registers (keep_shared,
  // attention_walk.h).
  static void keep(Reg& v) { keep_in_register(v); }
};

// Lanes [0, k) set (k <= 8).
inline __m256i first_lanes(int k) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// Keys of positions [j0, j0 + 16) (j0 a multiple of 16) as f32, kt[d * 16 + i]: two
// conversions per dimension, the cache's block as it lies.
void keys16(const AttentionTask& t, int j0, float* kt) {
  const uint16_t* kb = key_block(t, j0);
  for (int d = 0; d < t.head_dim; ++d) {
    _mm256_store_ps(kt + d * kScoreBlock, load_f16x8(kb + d * kKeyBlock));
    _mm256_store_ps(kt + d * kScoreBlock + 8, load_f16x8(kb + d * kKeyBlock + 8));
  }
}

inline float hmax(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  return _mm_cvtss_f32(_mm_max_ss(m, _mm_movehdup_ps(m)));
}

// Softmax numerators over s[0, lim) in place, exp(s - max) (masked positions become 0), and
// the inverse of their sum, by which the walk scales the weighted values' sums (0 when nothing
// is visible: then s holds zeros). The row is read and written in whole vectors up to lim
// rounded up to 8 (the score row is padded to 16: attention_padded_span), the lanes past lim
// set to -inf and so to 0: AMD's masked stores (vmaskmovps) are microcoded and slow. The
// maximum's pass writes back only what it hides (the mask, the lanes past lim).
float softmax_row(float* s, int lim, const uint8_t* mask) {
  // The maximum eight lanes at a time; max is exact in any order.
  const __m256 ninf = _mm256_set1_ps(-INFINITY);
  __m256 vmax = ninf;
  for (int j = 0; j < lim; j += 8) {
    const int k = std::min(8, lim - j);
    __m256 v = _mm256_loadu_ps(s + j);
    if (k < 8 || mask) {
      v = _mm256_blendv_ps(ninf, v, _mm256_castsi256_ps(first_lanes(k)));
      if (mask) {
        int64_t m8 = 0;
        std::memcpy(&m8, mask + j, k);
        const __m256 hidden = _mm256_castsi256_ps(_mm256_cmpeq_epi32(
            _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(m8)), _mm256_setzero_si256()));
        v = _mm256_blendv_ps(v, ninf, hidden);
      }
      _mm256_storeu_ps(s + j, v);
    }
    vmax = _mm256_max_ps(vmax, v);
  }
  const float mx = hmax(vmax);
  if (mx == -INFINITY) {
    std::fill(s, s + lim, 0.0f);
    return 0.0f;
  }
  const __m256 vmx = _mm256_set1_ps(mx);
  __m256 sum = _mm256_setzero_ps();
  for (int j = 0; j < lim; j += 8) {
    // exp(-inf) is 0: the lanes past lim add nothing.
    const __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(s + j), vmx));
    _mm256_storeu_ps(s + j, e);
    sum = _mm256_add_ps(sum, e);
  }
  return 1.0f / hsum(sum);
}

// The vector width's pieces of attend_blocks (attention_walk.h).
struct Avx2Pieces {
  static constexpr int kScoreBlock = avx2::kScoreBlock, kPairs = avx2::kPairs,
                       kBlock = avx2::kBlock, kValuePairs = avx2::kValuePairs,
                       kMaxHeadDim = avx2::kMaxHeadDim;
  static void keys(const AttentionTask& t, int j0, float* kt) { keys16(t, j0, kt); }
  template <int P, class T>
  static void scores(const float* const* q, const T* kt, int ld, int hd, float scale,
                     float* const* out) {
    transposed_scores<Vec8, P, 2>(q, kt, ld, hd, scale, out);
  }
  static float softmax(float* s, int lim, const uint8_t* mask) { return softmax_row(s, lim, mask); }
  static void round_query(const float* q, float* qf, int hd) { round_query_f16c(q, qf, hd); }
  static void values(const AttentionTask& t, int j0, int n, float* vf) {
    values_f16c(t, j0, n, vf);
  }
  template <class T>
  static void add_values(int np, const float* const* w, const int* m, const T* v, int stride,
                         int hd, float* const* out) {
    add_values_in_chunks<Vec8, kValuePairs, 32, 8>(np, w, m, v, stride, hd, out);
  }
};

void attend(const AttentionTask& t) { attend_blocks<Avx2Pieces>(t); }

}  // namespace

void install_attention(Kernels& t) { t.attend = attend; }

}  // namespace leapfrog::cpu::avx2
