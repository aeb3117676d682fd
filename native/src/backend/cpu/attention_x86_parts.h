// Pieces both x86 attention kernels use (attention_avx2.cpp, attention_avx512.cpp): f16
// loads, an 8 x 8 transpose (the AVX-512 kernel's keys), and the walk both run
// (attend_blocks), over their own vector width's pieces.
// Include only from files built with AVX2 or more; internal linkage, as each instruction set's file
// needs its own copy (see packed_blocks.h).
#pragma once
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <type_traits>

#include "backend/cpu/attention_task.h"

namespace leapfrog::cpu {

namespace {

// Transposes 8 vectors of 8 floats (r[i] = row i) in place: r[i] becomes column i.
inline void transpose8(__m256 r[8]) {
  __m256 t[8], u[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    u[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
    u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
    u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  for (int i = 0; i < 4; ++i) {
    r[i] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x20);
    r[i + 4] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x31);
  }
}

inline __m256 load_f16x8(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// f(std::integral_constant<int, np>) for a run-time np in [1, P]: a kernel templated on its
// number of (row, head) pairs, called with the count a block has.
template <int P, class F>
inline void with_pairs(int np, F&& f) {
  if (np == P) return f(std::integral_constant<int, P>{});
  if constexpr (P > 1) with_pairs<P - 1>(np, f);
}

// out[g][0, V::kWidth NV) += sum over i < m[g] of w[g][i] * v[i * stride + (0, V::kWidth NV)],
// in order of i, for P pairs sharing the value loads. The positions every pair has run with
// no test, each pair's remaining ones after, alone and in order: its sequence of operations
// is the one it has alone. (A test of each pair's limit at every position had GCC branch
// around each multiply-add and load every value once per pair: with two pairs the values
// ran at ~73 % of the FMA rate, branch-free with four at ~85 % — a one-task harness of a 0.5B
// 16-row pass, 1040 positions, Zen 4, session 17.) V (one per vector width) supplies Reg,
// kWidth, load, store, broadcast and fmadd.
template <class V, int P, int NV>
inline void add_weighted(const float* const* w, const int* m, const float* v, int stride,
                         float* const* out) {
  typename V::Reg acc[P][NV];
  int common = m[0];
#pragma GCC unroll 8
  for (int g = 0; g < P; ++g) {
    common = std::min(common, m[g]);
#pragma GCC unroll 8
    for (int c = 0; c < NV; ++c) acc[g][c] = V::load(out[g] + V::kWidth * c);
  }
  for (int i = 0; i < common; ++i) {
    typename V::Reg vi[NV];
#pragma GCC unroll 8
    for (int c = 0; c < NV; ++c) vi[c] = V::load(v + i * stride + V::kWidth * c);
#pragma GCC unroll 8
    for (int g = 0; g < P; ++g) {
      const typename V::Reg wi = V::broadcast(w[g] + i);
#pragma GCC unroll 8
      for (int c = 0; c < NV; ++c) acc[g][c] = V::fmadd(wi, vi[c], acc[g][c]);
    }
  }
#pragma GCC unroll 8
  for (int g = 0; g < P; ++g) {
    for (int i = common; i < m[g]; ++i) {
      const typename V::Reg wi = V::broadcast(w[g] + i);
#pragma GCC unroll 8
      for (int c = 0; c < NV; ++c)
        acc[g][c] = V::fmadd(wi, V::load(v + i * stride + V::kWidth * c), acc[g][c]);
    }
#pragma GCC unroll 8
    for (int c = 0; c < NV; ++c) V::store(out[g] + V::kWidth * c, acc[g][c]);
  }
}

// add_weighted for np (1 to MaxP) pairs.
template <class V, int MaxP, int NV>
inline void add_weighted_n(int np, const float* const* w, const int* m, const float* v, int stride,
                           float* const* out) {
  with_pairs<MaxP>(np,
                   [&](auto n) { add_weighted<V, decltype(n)::value, NV>(w, m, v, stride, out); });
}

// One task's attention, the plan both x86 kernels share: queries rounded to f16; scores block
// by block of K::kScoreBlock positions, up to K::kPairs (row, head) pairs per call; a
// softmax per pair; weighted values block by block of K::kBlock positions, up to
// K::kValuePairs pairs per value load, each row up to its own limit. K (one per vector width)
// supplies:
//   keys(t, j0, n, kt)                      keys of positions [j0, j0 + n) into kt, laid out
//                                           as that width's scores read them
//   scores<P>(q, kt, hd, scale, out)        P pairs' scores against one transposed block
//   softmax(s, lim, mask)                   in place over s[0, lim)
//   add_values(np, w, m, vf, hd, out)       np pairs' weighted values over every dimension
// Every (row, head) pair sees the same float operations whatever the task holds, so a batched
// pass gives the one-row results bit for bit.
template <class K>
void attend_blocks(const AttentionTask& t) {
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

  // Scores.
  alignas(64) float kt[K::kMaxHeadDim * K::kScoreBlock];
  for (int j0 = 0; j0 < span; j0 += K::kScoreBlock) {
    K::keys(t, j0, std::min(K::kScoreBlock, span - j0), kt);
    const float* q[K::kPairs];
    float* out[K::kPairs];
    int np = 0;
    const auto flush = [&] {
      if (np > 0) {
        with_pairs<K::kPairs>(
            np, [&](auto n) { K::template scores<decltype(n)::value>(q, kt, hd, t.scale, out); });
      }
      np = 0;
    };
    for (int g = 0; g < pairs; ++g) {
      if (j0 >= t.limit[row_of(g)]) continue;
      q[np] = qf + g * hd;
      out[np] = p + size_t(g) * padded + j0;
      if (++np == K::kPairs) flush();
    }
    flush();
  }

  // Softmax per (row, head) over its visible positions; weights in p.
  for (int g = 0; g < pairs; ++g) {
    const int r = row_of(g);
    float* o = out_of(g);
    std::fill(o, o + hd, 0.0f);
    K::softmax(p + size_t(g) * padded, t.limit[r], t.mask ? t.mask + r * t.mask_stride : nullptr);
  }

  // Weighted values.
  alignas(64) float vf[K::kBlock * K::kMaxHeadDim];
  for (int j0 = 0; j0 < span; j0 += K::kBlock) {
    const int n = std::min(K::kBlock, span - j0);
    for (int i = 0; i < n; ++i) {
      for (int d = 0; d < hd; d += 8) {
        _mm256_store_ps(vf + i * hd + d, load_f16x8(t.v + (j0 + i) * t.kv_stride + d));
      }
    }
    int g = 0;
    while (g < pairs) {
      const float* w[K::kValuePairs];
      float* out[K::kValuePairs];
      int m[K::kValuePairs], np = 0;
      for (; g < pairs && np < K::kValuePairs; ++g) {
        const int mm = std::min(n, t.limit[row_of(g)] - j0);
        if (mm <= 0) continue;
        w[np] = p + size_t(g) * padded + j0;
        out[np] = out_of(g);
        m[np++] = mm;
      }
      if (np == 0) break;
      K::add_values(np, w, m, vf, hd, out);
    }
  }
}

}  // namespace

}  // namespace leapfrog::cpu
