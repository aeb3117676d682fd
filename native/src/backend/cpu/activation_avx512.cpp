// SwiGLU's gate, sixteen at a time: gate = silu(gate) * up with exp16 for the exponential. The
// scalar loop's std::exp was ~9 % of a 32-token pass of a 0.5B model (perf, Zen 5); each
// element's result depends only on its own two inputs, so batched rows stay bit-identical. And
// RMS norm's rows, the scalar table's sums in 512-bit vectors.
#include <immintrin.h>

#include <cmath>

#include "backend/cpu/avx512_parts.h"
#include "backend/cpu/exp_avx512.h"
#include "backend/cpu/rms_norm_parts.h"

namespace leapfrog::cpu {

namespace {

inline __m512 silu_mul16(__m512 g, __m512 u) {
  // g / (1 + e^-g): e^-g overflows to infinity for g < -88.7, and g / inf is -0 as for expf.
  const __m512 e = exp16(_mm512_sub_ps(_mm512_setzero_ps(), g));
  return _mm512_mul_ps(_mm512_div_ps(g, _mm512_add_ps(_mm512_set1_ps(1.0f), e)), u);
}

void silu_mul(float* gate, const float* up, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    _mm512_storeu_ps(gate + i, silu_mul16(_mm512_loadu_ps(gate + i), _mm512_loadu_ps(up + i)));
  }
  if (i < n) {
    const __mmask16 k = static_cast<__mmask16>((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(
        gate + i, k,
        silu_mul16(_mm512_maskz_loadu_ps(k, gate + i), _mm512_maskz_loadu_ps(k, up + i)));
  }
}

// rms_norm as the scalar table's (kernels_scalar.cpp), sum for sum: chain k of the squares is
// lane k of one vector of 8 doubles; then x * scale * w sixteen at a time. The portable loop's
// 2-lane double vectors were 2 % of a bundled model's 8-token pass samples, on the caller alone.
void rms_norm(const float* x, const float* w, int n, int dim, float eps, float* y) {
  for (int i = 0; i < n; ++i) {
    const float* xr = x + static_cast<size_t>(i) * dim;
    float* yr = y + static_cast<size_t>(i) * dim;
    __m512d acc = _mm512_setzero_pd();
    int c = 0;
    for (; c + 8 <= dim; c += 8) {
      const __m256 v = _mm256_loadu_ps(xr + c);
      acc = _mm512_add_pd(acc, _mm512_cvtps_pd(_mm256_mul_ps(v, v)));
    }
    alignas(64) double s[8];
    _mm512_store_pd(s, acc);
    for (int k = 0; c < dim; ++c, ++k) s[k] += static_cast<double>(xr[c] * xr[c]);
    const __m512 scale = _mm512_set1_ps(rms_scale(s, dim, eps));
    for (c = 0; c < dim; c += 16) {
      const __mmask16 in =
          dim - c >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << (dim - c)) - 1);
      __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(in, xr + c), scale);
      if (w) v = _mm512_mul_ps(v, _mm512_maskz_loadu_ps(in, w + c));
      _mm512_mask_storeu_ps(yr + c, in, v);
    }
  }
}

}  // namespace

void install_activation_avx512(Kernels& t) {
  t.silu_mul = silu_mul;
  t.rms_norm = rms_norm;
}

}  // namespace leapfrog::cpu
