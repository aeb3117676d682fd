// Pieces both x86 attention kernels use (attention_avx2.cpp, attention_avx512.cpp): keys of
// 8 positions converted from f16 and transposed, so 8 scores come out of one vector's
// multiply-adds. Include only from files built with AVX2 or more; internal linkage, as each
// instruction set's file needs its own copy (see packed_blocks.h).
#pragma once
#include <immintrin.h>

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

// Keys of positions [j0, j0 + n) (n <= 8; the rest read as zeros) as kt[d * 8 + i].
void keys_transposed(const AttentionTask& t, int j0, int n, float* kt) {
  for (int c = 0; c < t.head_dim; c += 8) {
    __m256 r[8];
    for (int i = 0; i < 8; ++i) {
      r[i] = i < n ? load_f16x8(t.k + (j0 + i) * t.kv_stride + c) : _mm256_setzero_ps();
    }
    transpose8(r);
    for (int i = 0; i < 8; ++i) _mm256_store_ps(kt + (c + i) * 8, r[i]);
  }
}

}  // namespace

}  // namespace leapfrog::cpu
