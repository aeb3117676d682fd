// The walk every CPU attention kernel runs over one task (attention_task.h), with the
// instruction set's pieces supplied as a struct (attention_x86_parts.h for AVX2 and AVX-512,
// attention_neon.cpp): no intrinsics here. Include only from the kernels' files; internal
// linkage, as each instruction set's file needs its own copy (see packed_blocks.h).
#pragma once
#include <algorithm>
#include <cstddef>
#include <type_traits>

#include "backend/cpu/attention_task.h"
#include "backend/cpu/count_dispatch.h"

namespace leapfrog::cpu {

namespace {

// out[g][0, V::kWidth NV) += sum over i < m[g] of w[g][i] * v[i * stride + (0, V::kWidth NV)],
// in order of i, for P pairs sharing the value loads. The positions every pair has run with
// no test, each pair's remaining ones after, alone and in order: its sequence of operations
// is the one it has alone. (A test of each pair's limit at every position had GCC branch
// around each multiply-add and load every value once per pair; branch-free, with four pairs on
// AVX-512, the values' phase took 14 % less time — a one-task harness of a 0.5B 16-row pass,
// 1040 positions, Zen 4, session 17, BENCHMARKS.md.) V (one per vector width) supplies Reg,
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
  with_count<1, MaxP>(
      np, [&](auto n) { add_weighted<V, decltype(n)::value, NV>(w, m, v, stride, out); });
}

// np pairs' weighted values over every dimension of a head: chunks of Wide dimensions while
// they fit, then Narrow ones (Narrow divides the head size; both multiples of V::kWidth).
template <class V, int MaxP, int Wide, int Narrow>
inline void add_values_in_chunks(int np, const float* const* w, const int* m, const float* vf,
                                 int hd, float* const* out) {
  for (int d0 = 0; d0 < hd;) {
    float* o[MaxP];
    for (int k = 0; k < np; ++k) o[k] = out[k] + d0;
    if (hd - d0 >= Wide) {
      add_weighted_n<V, MaxP, Wide / V::kWidth>(np, w, m, vf + d0, hd, o), d0 += Wide;
    } else {
      add_weighted_n<V, MaxP, Narrow / V::kWidth>(np, w, m, vf + d0, hd, o), d0 += Narrow;
    }
  }
}

// One task's attention, the plan every attention kernel shares: queries rounded to f16; scores
// block by block of K::kScoreBlock positions, up to K::kPairs (row, head) pairs per call; a softmax
// per pair; weighted values block by block of K::kBlock positions, up to K::kValuePairs pairs per
// value load, each row up to its own limit. K (one per vector width) supplies:
//   round_query(q, qf, hd)                  a query rounded to f16 and back, into qf
//   values(t, j0, n, vf)                    values of positions [j0, j0 + n) as f32 rows of hd
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
    K::round_query(t.q + row_of(g) * t.q_stride + (g % t.heads) * hd, qf + g * hd, hd);
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
        with_count<1, K::kPairs>(
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
    K::values(t, j0, n, vf);
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
