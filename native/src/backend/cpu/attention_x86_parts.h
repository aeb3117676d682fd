// Pieces both x86 attention kernels use (attention_avx2.cpp, attention_avx512.cpp): f16
// loads and the f16 steps of the walk both run
// (attend_blocks, attention_walk.h).
// Include only from files built with AVX2 or more; internal linkage, as each instruction set's file
// needs its own copy (see packed_blocks.h).
#pragma once
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <type_traits>

#include "backend/cpu/attention_task.h"
#include "backend/cpu/attention_walk.h"

namespace leapfrog::cpu {

namespace {

// One value as f32, from f32 or from the cache's f16 (F16C: exact).
inline float as_f32(float x) { return x; }
inline float as_f32(uint16_t h) { return _cvtsh_ss(h); }

inline __m256 load_f16x8(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// A query rounded to f16 and back (F16C, round to nearest even), eight at a time.
inline void round_query_f16c(const float* q, float* qf, int hd) {
  for (int d = 0; d < hd; d += 8) {
    _mm256_storeu_ps(qf + d, _mm256_cvtph_ps(_mm256_cvtps_ph(_mm256_loadu_ps(q + d),
                                                             _MM_FROUND_TO_NEAREST_INT)));
  }
}

// Values of positions [j0, j0 + n) converted from f16: vf[i * hd + d].
inline void values_f16c(const AttentionTask& t, int j0, int n, float* vf) {
  for (int i = 0; i < n; ++i) {
    for (int d = 0; d < t.head_dim; d += 8) {
      _mm256_store_ps(vf + i * t.head_dim + d, load_f16x8(t.v + (j0 + i) * t.kv_stride + d));
    }
  }
}

}  // namespace

}  // namespace leapfrog::cpu
