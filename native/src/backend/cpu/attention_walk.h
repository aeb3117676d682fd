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

// A vector that P pairs share (a block's keys, a position's values), kept in a register where
// V asks (V::keep: AVX2). Left free, GCC folds its load into every pair's multiply-add as a
// memory operand, so P pairs load it P times: in AVX2's values 10 loads per 8 multiply-adds
// at two pairs, against 6 kept; in its scores, with 3 pairs, two of the four key vectors
// reloaded by every pair (lf_attnbench, 16 rows of a 0.5B task, Zen 5: 0.435 -> 0.386 ms for
// the values, 0.386 -> 0.360 for the keys with 2 pairs a call: see kPairs there). AVX-512's
// 32 registers fare better folded (0.194 -> 0.224 ms with the same), so its V does not ask;
// BENCHMARKS.md, session 26.
template <class V, int P>
inline void keep_shared(typename V::Reg& v) {
  if constexpr (P > 1 && requires { V::keep(v); }) V::keep(v);
}

// The KV cache comes from memory in a pass (the products stream megabytes between two layers'
// attention), and the walk reads it block by block with work between the blocks that hides a
// request made early enough: each block asks for the lines kAheadPositions on. Without it the
// conversions of the keys and values stalled on their loads (half of the walk's own samples
// in `perf` of the bundled model's 4-token passes); with it AVX-512 16- and 32-token passes of
// a 0.5B at 1,024 positions were 2-5 % shorter, AVX-VNNI's no different (BENCHMARKS.md,
// session 27).
constexpr int kAheadPositions = 64;

inline void prefetch_lines(const void* p, size_t bytes) {
  for (size_t o = 0; o < bytes; o += 64) __builtin_prefetch(static_cast<const char*>(p) + o, 0, 3);
}

// Scores of P (row, head) pairs against NB * V::kWidth positions whose keys lie
// dimension-major (dimension d of position i at kt[d * ld + i], as the cache keeps them:
// cpu_kv.h), f32 (converted once for many pairs) or the cache's f16 (T = uint16_t, converted as
// loaded: exact, the same scores): per position two chains of multiply-adds over the
// dimensions, even d and odd d, then their sum times the scale. A score lane's operations
// depend neither on the pairs beside it nor on the vector width, so every instruction set
// gives the same scores. V supplies Reg, kWidth, zero, load, store, broadcast, fmadd, add, mul.
template <class V, int P, int NB = 1, class T>
inline void transposed_scores(const float* const* q, const T* kt, int ld, int hd, float scale,
                              float* const* out) {
  typename V::Reg acc[P][NB][2];
#pragma GCC unroll 8
  for (int g = 0; g < P; ++g) {
#pragma GCC unroll 4
    for (int b = 0; b < NB; ++b) acc[g][b][0] = acc[g][b][1] = V::zero();
  }
  for (int d = 0; d < hd; d += 2) {
    typename V::Reg k0[NB], k1[NB];
#pragma GCC unroll 4
    for (int b = 0; b < NB; ++b) {
      k0[b] = V::load(kt + d * ld + b * V::kWidth);
      k1[b] = V::load(kt + (d + 1) * ld + b * V::kWidth);
      keep_shared<V, P>(k0[b]);
      keep_shared<V, P>(k1[b]);
    }
#pragma GCC unroll 8
    for (int g = 0; g < P; ++g) {
      const typename V::Reg q0 = V::broadcast(q[g] + d), q1 = V::broadcast(q[g] + d + 1);
#pragma GCC unroll 4
      for (int b = 0; b < NB; ++b) {
        acc[g][b][0] = V::fmadd(q0, k0[b], acc[g][b][0]);
        acc[g][b][1] = V::fmadd(q1, k1[b], acc[g][b][1]);
      }
    }
  }
  const typename V::Reg s = V::broadcast(&scale);
#pragma GCC unroll 8
  for (int g = 0; g < P; ++g) {
#pragma GCC unroll 4
    for (int b = 0; b < NB; ++b) {
      V::store(out[g] + b * V::kWidth, V::mul(V::add(acc[g][b][0], acc[g][b][1]), s));
    }
  }
}

// out[g][0, V::kWidth NV) += sum over i < m[g] of w[g][i] * v[i * stride + (0, V::kWidth NV)],
// in order of i, for P pairs sharing the value loads. The positions every pair has run with
// no test, each pair's remaining ones after, alone and in order: its sequence of operations
// is the one it has alone. (A test of each pair's limit at every position had GCC branch
// around each multiply-add and load every value once per pair; branch-free, with four pairs on
// AVX-512, the values' phase took 14 % less time — a one-task harness of a 0.5B 16-row pass,
// 1040 positions, Zen 4, session 17, BENCHMARKS.md.) The values are f32 (converted once for
// many pairs) or the cache's f16 (T = uint16_t: converted as loaded, for a task whose pairs
// share one load anyway); the conversion is exact, so both give the same sums. V (one per
// vector width) supplies Reg, kWidth, load (of f32 and of f16), store, broadcast and fmadd.
template <class V, int P, int NV, class T>
inline void add_weighted(const float* const* w, const int* m, const T* v, int stride,
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
    for (int c = 0; c < NV; ++c) {
      vi[c] = V::load(v + i * stride + V::kWidth * c);
      keep_shared<V, P>(vi[c]);
    }
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
template <class V, int MaxP, int NV, class T>
inline void add_weighted_n(int np, const float* const* w, const int* m, const T* v, int stride,
                           float* const* out) {
  with_count<1, MaxP>(
      np, [&](auto n) { add_weighted<V, decltype(n)::value, NV>(w, m, v, stride, out); });
}

// np pairs' weighted values over every dimension of a head (position i's values at v + i *
// stride): chunks of Wide dimensions while they fit, then Narrow ones (Narrow divides the head
// size; both multiples of V::kWidth).
template <class V, int MaxP, int Wide, int Narrow, class T>
inline void add_values_in_chunks(int np, const float* const* w, const int* m, const T* v,
                                 int stride, int hd, float* const* out) {
  for (int d0 = 0; d0 < hd;) {
    float* o[MaxP];
    for (int k = 0; k < np; ++k) o[k] = out[k] + d0;
    if (hd - d0 >= Wide) {
      add_weighted_n<V, MaxP, Wide / V::kWidth>(np, w, m, v + d0, stride, o), d0 += Wide;
    } else {
      add_weighted_n<V, MaxP, Narrow / V::kWidth>(np, w, m, v + d0, stride, o), d0 += Narrow;
    }
  }
}

// One task's attention, the plan every attention kernel shares: queries rounded to f16; scores
// block by block of K::kScoreBlock positions, up to K::kPairs (row, head) pairs per call; a softmax
// per pair; weighted values block by block of K::kBlock positions, up to K::kValuePairs pairs per
// value load, each row up to its own limit. K (one per vector width) supplies:
//   round_query(q, qf, hd)                  a query rounded to f16 and back, into qf
//   values(t, j0, n, vf)                    values of positions [j0, j0 + n) as f32 rows of hd
//   keys(t, j0, kt)                         keys of the block of positions at j0 as f32 into
//                                           kt, dimension-major (transposed_scores)
//   scores<P>(q, kt, ld, hd, scale, out)    P pairs' scores against that block (or against the
//                                           cache's f16 block itself: ld = kKeyBlock)
//   softmax(s, lim, mask)                   the numerators exp(s - max) in place over
//                                           s[0, lim), returning 1 / their sum (0: none)
//   add_values(np, w, m, v, stride, hd, out) np pairs' weighted values over every dimension,
//                                           position i's values (f32 or f16) at v + i * stride
// Every (row, head) pair sees the same float operations whatever the task holds, so a batched
// pass gives the one-row results bit for bit.
template <class K>
void attend_blocks(const AttentionTask& t) {
  const int hd = t.head_dim, heads = t.heads, pairs = t.rows * heads;
  int span = 0;  // positions any row may see
  for (int r = 0; r < t.rows; ++r) span = std::max(span, t.limit[r]);
  const int padded = attention_padded_span(t);
  float* qf = t.scratch;                      // pairs x hd, pair g = row * heads + head
  float* p = t.scratch + size_t(pairs) * hd;  // pairs x padded
  float* inv = p + size_t(pairs) * padded;    // pairs: 1 / each softmax's sum
  // The walks below go row by row, then head by head (finding a pair's row by division cost
  // an integer divide per pair and block: 1-3 % of a 16-row task, lf_attnbench, session 20).
  for (int r = 0; r < t.rows; ++r) {
    // Queries rounded to f16 to meet the f16 keys, as llama.cpp's f16 cache does.
    for (int h = 0; h < heads; ++h) {
      K::round_query(t.q + r * t.q_stride + h * hd, qf + size_t(r * heads + h) * hd, hd);
    }
  }

  // Scores. A task whose pairs all share each key load (decoding with a few query heads per KV
  // head) reads the cache's f16 keys as they lie; more pairs convert each block once into kt
  // for all of them. Either way a block's lanes past the span score whatever the cache holds
  // there: no row reads them (the softmax and the values stop at each row's limit).
  alignas(64) float kt[K::kMaxHeadDim * K::kScoreBlock];
  const bool direct_keys = pairs <= K::kPairs;
  for (int j0 = 0; j0 < span; j0 += K::kScoreBlock) {
    if (j0 % kKeyBlock == 0 && j0 + kAheadPositions < span) {
      prefetch_lines(key_block(t, j0 + kAheadPositions), sizeof(uint16_t) * hd * kKeyBlock);
    }
    if (!direct_keys) K::keys(t, j0, kt);
    const float* q[K::kPairs];
    float* out[K::kPairs];
    int np = 0;
    const auto flush = [&] {
      if (np == 0) return;
      with_count<1, K::kPairs>(np, [&](auto n) {
        constexpr int kN = decltype(n)::value;
        if (direct_keys) {
          K::template scores<kN>(q, key_block(t, j0), kKeyBlock, hd, t.scale, out);
        } else {
          K::template scores<kN>(q, static_cast<const float*>(kt), K::kScoreBlock, hd, t.scale,
                                 out);
        }
      });
      np = 0;
    };
    for (int r = 0; r < t.rows; ++r) {
      if (j0 >= t.limit[r]) continue;
      for (int g = r * heads; g < (r + 1) * heads; ++g) {
        q[np] = qf + size_t(g) * hd;
        out[np] = p + size_t(g) * padded + j0;
        if (++np == K::kPairs) flush();
      }
    }
    flush();
  }

  // Softmax per (row, head) over its visible positions: its numerators in p, the inverse of
  // their sum in inv, applied to the weighted values' sums at the end (hd multiplies a pair
  // where normalizing the weights took one per position, and a pass over every score row:
  // BENCHMARKS.md, session 26).
  for (int r = 0; r < t.rows; ++r) {
    for (int h = 0; h < heads; ++h) {
      inv[r * heads + h] = K::softmax(p + size_t(r * heads + h) * padded, t.limit[r],
                                      t.mask ? t.mask + r * t.mask_stride : nullptr);
    }
  }
  // The weighted values accumulate in the queries' place (pair g at acc + g * hd, read by the
  // scores, free now) and go to t.out at the end, times inv. Accumulated in t.out, where a pass
  // keeps a row's outputs for every head side by side (a task's rows q_stride apart), they were
  // reloaded at every block from beyond L1: in 16-token passes of a 0.5B (2 threads, Zen 5)
  // the values took 9.6 % of the samples, a third on those loads, against 5.5 % now, and the
  // 16- and 32-token passes 5-12 % shorter (alternated A/Bs, BENCHMARKS.md, session 25).
  float* acc = qf;
  std::fill(acc, acc + size_t(pairs) * hd, 0.0f);

  // Weighted values. A task whose pairs all share each value load (decoding with a few query
  // heads per KV head) reads the cache's f16 values as they lie; more pairs convert each block
  // once into vf for all of them.
  alignas(64) float vf[K::kBlock * K::kMaxHeadDim];
  const bool direct = pairs <= K::kValuePairs;
  for (int j0 = 0; j0 < span; j0 += K::kBlock) {
    const int n = std::min(K::kBlock, span - j0);
    for (int i = j0 + kAheadPositions; i < std::min(span, j0 + kAheadPositions + n); ++i) {
      prefetch_lines(t.v + size_t(i) * t.kv_stride, sizeof(uint16_t) * hd);
    }
    if (!direct) K::values(t, j0, n, vf);
    const float* w[K::kValuePairs];
    float* out[K::kValuePairs];
    int m[K::kValuePairs], np = 0;
    const auto flush = [&] {
      if (np > 0 && direct) {
        K::add_values(np, w, m, t.v + j0 * t.kv_stride, int(t.kv_stride), hd, out);
      } else if (np > 0) {
        K::add_values(np, w, m, static_cast<const float*>(vf), hd, hd, out);
      }
      np = 0;
    };
    for (int r = 0; r < t.rows; ++r) {
      const int mm = std::min(n, t.limit[r] - j0);
      if (mm <= 0) continue;
      for (int h = 0; h < heads; ++h) {
        w[np] = p + size_t(r * heads + h) * padded + j0;
        out[np] = acc + size_t(r * heads + h) * hd;
        m[np] = mm;
        if (++np == K::kValuePairs) flush();
      }
    }
    flush();
  }
  for (int r = 0; r < t.rows; ++r) {
    for (int h = 0; h < heads; ++h) {
      const int g = r * heads + h;
      const float* a = acc + size_t(g) * hd;
      float* o = t.out + r * t.q_stride + h * hd;
      for (int d = 0; d < hd; ++d) o[d] = a[d] * inv[g];
    }
  }
}

}  // namespace

}  // namespace leapfrog::cpu
