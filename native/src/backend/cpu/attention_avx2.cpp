// AVX2 attention for one task (a few query rows x the query heads of one KV head): the walk
// every kernel shares (attend_blocks, attention_walk.h) over 256-bit pieces.
//
// Keys and values are f16 in the cache. Each block of 8 keys is converted once (keys_rows)
// and every (row, head) pair's 8 scores come out of head_dim / 8 multiply-adds per key and
// one horizontal sum of the 8 keys' lanes (sum8x8); each block of values is converted once
// and added into every (row, head) output with its weights. As in the AVX-512 kernel:
//   - the softmax's exponentials eight at a time (exp8, exp_avx2.h; libm's expf one at a time
//     was a fifth of attention on a Zen 3), in whole vectors (no masked stores);
//   - the weighted values over blocks of 32 positions, two pairs sharing each value load.
// Every (row, head) pair sees the same float operations whatever the task holds: scores over
// dimensions in fixed lanes, outputs over positions in order up to the row's own limit, so a
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

constexpr int kScoreBlock = 8;  // positions per block of scores (one vector)
constexpr int kBlock = 32;      // positions per block of weighted values
constexpr int kMaxHeadDim = 256;
constexpr int kPairs = 4;       // (row, head) pairs per call of block_scores
constexpr int kValuePairs = 2;  // (row, head) pairs whose weighted values share each value load

// Keys of positions [j0, j0 + n) (n <= 8; the rest zeros) converted from f16, position by
// position: kr[i * hd + d]. Not transposed (as the AVX-512 kernel's are): with 256-bit
// vectors the transposes cost more than the scores' horizontal sums (sum8x8) they save.
void keys_rows(const AttentionTask& t, int j0, int n, float* kr) {
  const int hd = t.head_dim;
  for (int i = 0; i < kScoreBlock; ++i) {
    float* row = kr + i * hd;
    if (i < n) {
      const uint16_t* k = t.k + (j0 + i) * t.kv_stride;
      for (int c = 0; c < hd; c += 8) _mm256_store_ps(row + c, load_f16x8(k + c));
    } else {
      for (int c = 0; c < hd; c += 8) _mm256_store_ps(row + c, _mm256_setzero_ps());
    }
  }
}

// Lane i of the result: the sum of a[i]'s eight lanes (pairs, then fours, then the halves).
inline __m256 sum8x8(const __m256 a[8]) {
  const __m256 t0 = _mm256_hadd_ps(a[0], a[1]), t1 = _mm256_hadd_ps(a[2], a[3]);
  const __m256 t2 = _mm256_hadd_ps(a[4], a[5]), t3 = _mm256_hadd_ps(a[6], a[7]);
  const __m256 u0 = _mm256_hadd_ps(t0, t1), u1 = _mm256_hadd_ps(t2, t3);
  return _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20), _mm256_permute2f128_ps(u0, u1, 0x31));
}

// Scores of P pairs against one block of 8 keys (keys_rows): per key, eight lanes of
// multiply-adds over the dimensions (lane l takes d = l mod 8), then the lanes summed.
template <int P>
inline void block_scores(const float* const* q, const float* kr, int hd, __m256 scale,
                         float* const* out) {
  for (int g = 0; g < P; ++g) {
    __m256 acc[kScoreBlock];
#pragma GCC unroll 8
    for (int i = 0; i < kScoreBlock; ++i) acc[i] = _mm256_setzero_ps();
    for (int c = 0; c < hd; c += 8) {
      const __m256 qv = _mm256_loadu_ps(q[g] + c);
#pragma GCC unroll 8
      for (int i = 0; i < kScoreBlock; ++i) {
        acc[i] = _mm256_fmadd_ps(qv, _mm256_load_ps(kr + i * hd + c), acc[i]);
      }
    }
    _mm256_storeu_ps(out[g], _mm256_mul_ps(sum8x8(acc), scale));
  }
}

// 256-bit vectors for add_weighted (attention_walk.h).
struct Vec8 {
  using Reg = __m256;
  static constexpr int kWidth = 8;
  static Reg load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, Reg v) { _mm256_storeu_ps(p, v); }
  static Reg broadcast(const float* p) { return _mm256_broadcast_ss(p); }
  static Reg fmadd(Reg a, Reg b, Reg c) { return _mm256_fmadd_ps(a, b, c); }
};

// Lanes [0, k) set (k <= 8).
inline __m256i first_lanes(int k) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

inline float hmax(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  return _mm_cvtss_f32(_mm_max_ss(m, _mm_movehdup_ps(m)));
}

// Softmax over s[0, lim) in place (masked positions become 0); false when nothing is
// visible (then s holds zeros). The row is read and written in whole vectors up to lim
// rounded up to 8 (the score row is padded to 16: attention_padded_span), the lanes past
// lim set to -inf and so to 0: AMD's masked stores (vmaskmovps) are microcoded and slow.
bool softmax_row(float* s, int lim, const uint8_t* mask) {
  // The maximum eight lanes at a time; max is exact in any order.
  const __m256 ninf = _mm256_set1_ps(-INFINITY);
  __m256 vmax = ninf;
  for (int j = 0; j < lim; j += 8) {
    const int k = std::min(8, lim - j);
    const __m256 in = _mm256_castsi256_ps(first_lanes(k));
    __m256 v = _mm256_blendv_ps(ninf, _mm256_loadu_ps(s + j), in);
    if (mask) {
      int64_t m8 = 0;
      std::memcpy(&m8, mask + j, k);
      const __m256 hidden = _mm256_castsi256_ps(
          _mm256_cmpeq_epi32(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(m8)), _mm256_setzero_si256()));
      v = _mm256_blendv_ps(v, ninf, hidden);
    }
    _mm256_storeu_ps(s + j, v);
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
    // exp(-inf) is 0: the lanes past lim add nothing.
    const __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(s + j), vmx));
    _mm256_storeu_ps(s + j, e);
    sum = _mm256_add_ps(sum, e);
  }
  const __m256 inv = _mm256_set1_ps(1.0f / hsum(sum));
  for (int j = 0; j < lim; j += 8) {
    _mm256_storeu_ps(s + j, _mm256_mul_ps(_mm256_loadu_ps(s + j), inv));
  }
  return true;
}

// The vector width's pieces of attend_blocks (attention_walk.h).
struct Avx2Pieces {
  static constexpr int kScoreBlock = avx2::kScoreBlock, kPairs = avx2::kPairs,
                       kBlock = avx2::kBlock, kValuePairs = avx2::kValuePairs,
                       kMaxHeadDim = avx2::kMaxHeadDim;
  static void keys(const AttentionTask& t, int j0, int n, float* kt) { keys_rows(t, j0, n, kt); }
  template <int P>
  static void scores(const float* const* q, const float* kt, int hd, float scale,
                     float* const* out) {
    block_scores<P>(q, kt, hd, _mm256_set1_ps(scale), out);
  }
  static void softmax(float* s, int lim, const uint8_t* mask) { softmax_row(s, lim, mask); }
  static void round_query(const float* q, float* qf, int hd) { round_query_f16c(q, qf, hd); }
  static void values(const AttentionTask& t, int j0, int n, float* vf) {
    values_f16c(t, j0, n, vf);
  }
  static void add_values(int np, const float* const* w, const int* m, const float* vf, int hd,
                         float* const* out) {
    add_values_in_chunks<Vec8, kValuePairs, 32, 8>(np, w, m, vf, hd, out);
  }
};

void attend(const AttentionTask& t) { attend_blocks<Avx2Pieces>(t); }

}  // namespace

void install_attention(Kernels& t) { t.attend = attend; }

}  // namespace leapfrog::cpu::avx2
