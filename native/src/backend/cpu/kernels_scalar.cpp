// Portable kernels: the definition of what every faster path must compute.
#include <cmath>
#include <cstring>

#include "backend/cpu/kernels.h"
#include "backend/cpu/quant_blocks.h"
#include "backend/cpu/rms_norm_parts.h"
#include "backend/cpu/scalar_parts.h"
#include "format/fp16.h"

namespace leapfrog::cpu {

namespace {

// ---- activation preparation -------------------------------------------------------------

void quant_f32(const float* x, void* dst, int64_t n) { std::memcpy(dst, x, n * 4); }

void quant_f16(const float* x, void* dst, int64_t n) {
  uint16_t* y = static_cast<uint16_t*>(dst);
  for (int64_t i = 0; i < n; ++i) y[i] = f32_to_f16(x[i]);
}

void quant_bf16(const float* x, void* dst, int64_t n) {
  uint16_t* y = static_cast<uint16_t*>(dst);
  for (int64_t i = 0; i < n; ++i) y[i] = f32_to_bf16(x[i]);
}

// Per 32 values: d = max|x| / 127, q = round(x / d) (ties to even, as vroundps does), and
// the stored scale rounded through f16 (llama.cpp keeps it as f16).
void quant_q8_0(const float* x, void* dst, int64_t n) {
  ActQ8_0* y = static_cast<ActQ8_0*>(dst);
  for (int64_t b = 0; b < n / kQK; ++b, x += kQK) {
    float amax = 0;
    for (int j = 0; j < kQK; ++j) amax = std::fmax(amax, std::fabs(x[j]));
    const float d = amax / 127.0f;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    for (int j = 0; j < kQK; ++j) y[b].qs[j] = static_cast<int8_t>(std::nearbyintf(x[j] * id));
    y[b].d = f16_to_f32(f32_to_f16(d));
    q8_0_set_sum(y[b]);
  }
}

// Per 256 values, as llama.cpp's Q8_K: the value of largest magnitude maps to -127 exactly
// (scale = -127 / max), others are clamped to 127.
void quant_q8_k(const float* x, void* dst, int64_t n) {
  ActQ8_K* y = static_cast<ActQ8_K*>(dst);
  for (int64_t b = 0; b < n / kQK_K; ++b, x += kQK_K) {
    float amax = 0;
    for (int j = 0; j < kQK_K; ++j) amax = std::fmax(amax, std::fabs(x[j]));  // skips NaN
    if (amax == 0) {
      q8k_zero(y[b]);
      continue;
    }
    const float iscale = -127.0f / q8k_first_of_magnitude(x, amax);
    for (int j = 0; j < kQK_K; ++j) {
      int v = static_cast<int>(std::nearbyintf(iscale * x[j]));
      y[b].qs[j] = static_cast<int8_t>(v > 127 ? 127 : v);
    }
    for (int g = 0; g < kQK_K / 16; ++g) {
      int s = 0;
      for (int j = 0; j < 16; ++j) s += y[b].qs[g * 16 + j];
      y[b].bsums[g] = static_cast<int16_t>(s);
    }
    y[b].d = 1.0f / iscale;
  }
}

// ---- dot products ------------------------------------------------------------------------

// Eight partial sums (like an 8-lane vector) keep float rounding close to the SIMD paths.
template <typename Load>
float dot_lanes(int64_t n, Load load) {
  float acc[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int l = 0; l < 8; ++l) acc[l] += load(i + l);
  }
  float s = 0;
  for (int l = 0; l < 8; ++l) s += acc[l];
  for (; i < n; ++i) s += load(i);
  return s;
}

float dot_f32(const void* w, const void* a, int64_t n) {
  const float* x = static_cast<const float*>(w);
  const float* y = static_cast<const float*>(a);
  return dot_lanes(n, [&](int64_t i) { return x[i] * y[i]; });
}

float dot_f16(const void* w, const void* a, int64_t n) {
  const uint16_t* x = static_cast<const uint16_t*>(w);
  const uint16_t* y = static_cast<const uint16_t*>(a);
  return dot_lanes(n, [&](int64_t i) { return f16_to_f32(x[i]) * f16_to_f32(y[i]); });
}

float dot_bf16(const void* w, const void* a, int64_t n) {
  const uint16_t* x = static_cast<const uint16_t*>(w);
  const uint16_t* y = static_cast<const uint16_t*>(a);
  return dot_lanes(n, [&](int64_t i) { return bf16_to_f32(x[i]) * bf16_to_f32(y[i]); });
}

float dot_q8_0(const void* w, const void* a, int64_t n) {
  const BlockQ8_0* x = static_cast<const BlockQ8_0*>(w);
  const ActQ8_0* y = static_cast<const ActQ8_0*>(a);
  float sum = 0;
  for (int64_t b = 0; b < n / kQK; ++b) {
    int isum = 0;
    for (int j = 0; j < kQK; ++j) isum += x[b].qs[j] * y[b].qs[j];
    sum += static_cast<float>(isum) * (f16_to_f32(x[b].d) * y[b].d);
  }
  return sum;
}

float dot_q4_0(const void* w, const void* a, int64_t n) {
  const BlockQ4_0* x = static_cast<const BlockQ4_0*>(w);
  const ActQ8_0* y = static_cast<const ActQ8_0*>(a);
  float sum = 0;
  for (int64_t b = 0; b < n / kQK; ++b) {
    int isum = 0;
    for (int j = 0; j < kQK / 2; ++j) {
      isum += ((x[b].qs[j] & 0xF) - 8) * y[b].qs[j];
      isum += ((x[b].qs[j] >> 4) - 8) * y[b].qs[j + kQK / 2];
    }
    sum += static_cast<float>(isum) * (f16_to_f32(x[b].d) * y[b].d);
  }
  return sum;
}

// The 5-bit values of a Q5_0 block, offset to [-16, 15]: element j and element j + 16.
inline void unpack_q5_0(const BlockQ5_0& b, int j, int& lo, int& hi) {
  uint32_t qh;
  std::memcpy(&qh, b.qh, sizeof(qh));
  lo = static_cast<int>((b.qs[j] & 0xF) | (((qh >> j) & 1) << 4)) - 16;
  hi = static_cast<int>((b.qs[j] >> 4) | (((qh >> (j + 16)) & 1) << 4)) - 16;
}

float dot_q5_0(const void* w, const void* a, int64_t n) {
  const BlockQ5_0* x = static_cast<const BlockQ5_0*>(w);
  const ActQ8_0* y = static_cast<const ActQ8_0*>(a);
  float sum = 0;
  for (int64_t b = 0; b < n / kQK; ++b) {
    int isum = 0;
    for (int j = 0; j < kQK / 2; ++j) {
      int lo, hi;
      unpack_q5_0(x[b], j, lo, hi);
      isum += lo * y[b].qs[j] + hi * y[b].qs[j + kQK / 2];
    }
    sum += static_cast<float>(isum) * (f16_to_f32(x[b].d) * y[b].d);
  }
  return sum;
}

// Q4_K and Q5_K: per super-block, sum_q = sum_j sc_j * <q_j, a_j> and
// sum_m = sum_j m_j * (sum of a over sub-block j); result d*da*sum_q - dmin*da*sum_m.
float dot_q4_k(const void* w, const void* a, int64_t n) {
  const BlockQ4_K* x = static_cast<const BlockQ4_K*>(w);
  const ActQ8_K* y = static_cast<const ActQ8_K*>(a);
  float sum = 0;
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    int sum_q = 0, sum_m = 0;
    const uint8_t* q = x[b].qs;
    const int8_t* act = y[b].qs;
    for (int c = 0; c < 4; ++c, q += 32, act += 64) {
      uint8_t sc0, m0, sc1, m1;
      scale_min_k4(2 * c, x[b].scales, sc0, m0);
      scale_min_k4(2 * c + 1, x[b].scales, sc1, m1);
      int s0 = 0, s1 = 0;
      for (int l = 0; l < 32; ++l) {
        s0 += (q[l] & 0xF) * act[l];
        s1 += (q[l] >> 4) * act[l + 32];
      }
      sum_q += sc0 * s0 + sc1 * s1;
      sum_m += m0 * (y[b].bsums[4 * c] + y[b].bsums[4 * c + 1]) +
               m1 * (y[b].bsums[4 * c + 2] + y[b].bsums[4 * c + 3]);
    }
    const float d = f16_to_f32(x[b].d) * y[b].d;
    const float dmin = f16_to_f32(x[b].dmin) * y[b].d;
    sum += d * static_cast<float>(sum_q) - dmin * static_cast<float>(sum_m);
  }
  return sum;
}

float dot_q5_k(const void* w, const void* a, int64_t n) {
  const BlockQ5_K* x = static_cast<const BlockQ5_K*>(w);
  const ActQ8_K* y = static_cast<const ActQ8_K*>(a);
  float sum = 0;
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    int sum_q = 0, sum_m = 0;
    const uint8_t* q = x[b].qs;
    const uint8_t* qh = x[b].qh;
    const int8_t* act = y[b].qs;
    for (int c = 0; c < 4; ++c, q += 32, act += 64) {
      uint8_t sc0, m0, sc1, m1;
      scale_min_k4(2 * c, x[b].scales, sc0, m0);
      scale_min_k4(2 * c + 1, x[b].scales, sc1, m1);
      const uint8_t u0 = 1u << (2 * c), u1 = 2u << (2 * c);
      int s0 = 0, s1 = 0;
      for (int l = 0; l < 32; ++l) {
        s0 += ((q[l] & 0xF) + (qh[l] & u0 ? 16 : 0)) * act[l];
        s1 += ((q[l] >> 4) + (qh[l] & u1 ? 16 : 0)) * act[l + 32];
      }
      sum_q += sc0 * s0 + sc1 * s1;
      sum_m += m0 * (y[b].bsums[4 * c] + y[b].bsums[4 * c + 1]) +
               m1 * (y[b].bsums[4 * c + 2] + y[b].bsums[4 * c + 3]);
    }
    const float d = f16_to_f32(x[b].d) * y[b].d;
    const float dmin = f16_to_f32(x[b].dmin) * y[b].d;
    sum += d * static_cast<float>(sum_q) - dmin * static_cast<float>(sum_m);
  }
  return sum;
}

// Q6_K: values are (6-bit - 32); per 16 weights an int8 scale. The -32 offset is applied
// through the activation sums: sum (q-32)*a = sum q*a - 32 * bsum.
float dot_q6_k(const void* w, const void* a, int64_t n) {
  const BlockQ6_K* x = static_cast<const BlockQ6_K*>(w);
  const ActQ8_K* y = static_cast<const ActQ8_K*>(a);
  float sum = 0;
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    int sub[16] = {};  // sum q*a per 16-weight sub-block (q unsigned 0..63)
    const uint8_t* ql = x[b].ql;
    const uint8_t* qh = x[b].qh;
    const int8_t* act = y[b].qs;
    for (int half = 0; half < 2; ++half, ql += 64, qh += 32, act += 128) {
      int* s = sub + 8 * half;
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        s[is + 0] += ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) * act[l];
        s[is + 2] += ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) * act[l + 32];
        s[is + 4] += ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) * act[l + 64];
        s[is + 6] += ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) * act[l + 96];
      }
    }
    int isum = 0;
    for (int k = 0; k < 16; ++k) isum += x[b].scales[k] * (sub[k] - 32 * y[b].bsums[k]);
    sum += f16_to_f32(x[b].d) * y[b].d * static_cast<float>(isum);
  }
  return sum;
}

// ---- normalization ----------------------------------------------------------------------

// y = x / sqrt(mean(x^2) + eps) * w per row of dim. The squares (float products) add up in
// double, like llama.cpp's, so long rows do not lose precision; in eight chains (element c in
// chain c mod 8, the chains summed ((0 + 4) + (2 + 6)) + ((1 + 5) + (3 + 7))), not llama.cpp's
// one: a chain of dependent double adds was 2.4 % of a batched pass's samples on the bundled
// model, the caller alone while the other threads waited. Here chains (0, 1) (2, 3) (4, 5)
// (6, 7) in four two-lane double vectors (SSE2, NEON); the AVX2 and AVX-512 tables keep chain k
// in lane k of wider vectors, the same additions in the same order: the same sums everywhere.
void rms_norm(const float* x, const float* w, int n, int dim, float eps, float* y) {
  using F64x2 = double __attribute__((vector_size(16)));
  for (int i = 0; i < n; ++i) {
    const float* xr = x + static_cast<size_t>(i) * dim;
    float* yr = y + static_cast<size_t>(i) * dim;
    const auto sq = [&](int c) { return static_cast<double>(xr[c] * xr[c]); };
    F64x2 acc[4] = {};
    int c = 0;
    for (; c + 8 <= dim; c += 8) {
      for (int k = 0; k < 4; ++k) acc[k] += F64x2{sq(c + 2 * k), sq(c + 2 * k + 1)};
    }
    double s[8] = {acc[0][0], acc[0][1], acc[1][0], acc[1][1],
                   acc[2][0], acc[2][1], acc[3][0], acc[3][1]};
    for (int k = 0; c < dim; ++c, ++k) s[k] += sq(c);
    const float scale = rms_scale(s, dim, eps);
    // Eight at a time, loaded before they are stored (y may be x itself): GCC's -O2 vectorizes
    // this where it left the plain loop scalar.
    for (c = 0; c + 8 <= dim; c += 8) {
      float v[8];
      for (int k = 0; k < 8; ++k) v[k] = xr[c + k] * scale;
      if (w) {
        for (int k = 0; k < 8; ++k) v[k] *= w[c + k];
      }
      std::memcpy(yr + c, v, sizeof v);
    }
    for (; c < dim; ++c) yr[c] = w ? (xr[c] * scale) * w[c] : xr[c] * scale;
  }
}

void axpy_f16(float a, const uint16_t* v, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += a * f16_to_f32(v[i]);
}

}  // namespace

const Kernels& kernels_scalar() {
  static const Kernels k = [] {
    Kernels t = {
        Isa::Scalar,
        {quant_f32, quant_f16, quant_bf16, quant_q8_0, quant_q8_k},
        {dot_f32, dot_f16, dot_bf16, dot_q8_0, dot_q4_0, dot_q4_k, dot_q5_k, dot_q6_k, dot_q5_0},
        {gemm_by_dot<dot_f32>, gemm_by_dot<dot_f16>, gemm_by_dot<dot_bf16>, gemm_by_dot<dot_q8_0>,
         gemm_by_dot<dot_q4_0>, gemm_by_dot<dot_q4_k>, gemm_by_dot<dot_q5_k>, gemm_by_dot<dot_q6_k>,
         // Q5_0 in the file layout: the AVX2 table packs Q5_0 (packed_avx2.cpp) and inherits
         // this one only for matrices whose rows do not come in groups of 8.
         gemm_by_dot<dot_q5_0>},
        axpy_f16,
        nullptr,  // attention: the backend's generic loop over dot and axpy_f16
        nullptr,  // silu_mul: the backend's loop with std::exp
        rms_norm,
        {},  // no packed layouts: the scalar kernels read the file's
    };
    scalar::install_lowbit(t);
    return t;
  }();
  return k;
}

}  // namespace leapfrog::cpu
