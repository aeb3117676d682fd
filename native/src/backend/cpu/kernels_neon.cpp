// arm64 NEON kernels (Isa::Neon; Isa::NeonDot adds the dot-product extension on top, in
// kernels_neon_dotprod.cpp). Covered: the F16, BF16, Q8_0 and Q8_K activation quantizers
// (byte-identical to the scalar ones; F32 is a copy), f32/f16/bf16 dot products, axpy_f16,
// attention (attention_neon.cpp) and dot + tiled gemm for Q8_0, Q4_0, Q5_0, Q4_K, Q5_K and Q6_K
// (kernels_neon_int8.h). Integer sums equal the scalar kernels'; only the order of float additions
// differs. This file and the dotprod one are compiled with -ffp-contract=off (CMakeLists.txt) so
// the float operations are exactly those written, whatever the compiler inlines where: a batched
// gemm row stays bit-identical to dot() and to a one-token product.
#include <arm_neon.h>

#include <cmath>
#include <cstring>

#include "backend/cpu/kernels.h"
#include "backend/cpu/kernels_neon_int8.h"
#include "backend/cpu/neon_f16.h"
#include "backend/cpu/quant_blocks.h"
#include "format/fp16.h"

namespace leapfrog::cpu {

namespace {

// The int8 dot primitive without the dot-product extension: 8x8 -> 16-bit products, pairs
// added (|a*b| <= 128 * 127, so a pair fits int16), then pairs of pairs into 32-bit lanes;
// lane i ends up with bytes 4i..4i+3, as vdotq_s32 would.
struct I8Mull {
  static inline int32x4_t dot(int32x4_t acc, int8x16_t a, int8x16_t b) {
    const int16x8_t lo = vmull_s8(vget_low_s8(a), vget_low_s8(b));
    const int16x8_t hi = vmull_high_s8(a, b);
    return vpadalq_s16(acc, vpaddq_s16(lo, hi));
  }
};

// ---- activation preparation -------------------------------------------------------------

void quant_f16(const float* x, void* dst, int64_t n) {
  uint16_t* y = static_cast<uint16_t*>(dst);
  int64_t i = 0;
  // fcvtn rounds to nearest even like f32_to_f16 (Linux runs with FPCR's default mode).
  for (; i + 4 <= n; i += 4) vst1_u16(y + i, vreinterpret_u16_f16(vcvt_f16_f32(vld1q_f32(x + i))));
  for (; i < n; ++i) y[i] = f32_to_f16(x[i]);
}

void quant_bf16(const float* x, void* dst, int64_t n) {
  uint16_t* y = static_cast<uint16_t*>(dst);
  int64_t i = 0;
  // f32_to_bf16's integer rounding, four at a time: nan stays a quiet nan.
  const uint32x4_t bias = vdupq_n_u32(0x7fff), one = vdupq_n_u32(1);
  const uint32x4_t abs_mask = vdupq_n_u32(0x7fffffff), inf = vdupq_n_u32(0x7f800000);
  for (; i + 4 <= n; i += 4) {
    const uint32x4_t u = vreinterpretq_u32_f32(vld1q_f32(x + i));
    const uint32x4_t r =
        vshrq_n_u32(vaddq_u32(u, vaddq_u32(bias, vandq_u32(vshrq_n_u32(u, 16), one))), 16);
    const uint32x4_t nan = vorrq_u32(vshrq_n_u32(u, 16), vdupq_n_u32(64));
    const uint32x4_t is_nan = vcgtq_u32(vandq_u32(u, abs_mask), inf);
    vst1_u16(y + i, vmovn_u32(vbslq_u32(is_nan, nan, r)));
  }
  for (; i < n; ++i) y[i] = f32_to_bf16(x[i]);
}

// 16 int32 (each within int8 range) -> 16 int8.
inline int8x16_t narrow16(int32x4_t a, int32x4_t b, int32x4_t c, int32x4_t d) {
  const int16x8_t ab = vcombine_s16(vqmovn_s32(a), vqmovn_s32(b));
  const int16x8_t cd = vcombine_s16(vqmovn_s32(c), vqmovn_s32(d));
  return vcombine_s8(vqmovn_s16(ab), vqmovn_s16(cd));
}

// As the scalar quant_q8_0: d = max|x| / 127, q = round(x / d) with ties to even (fcvtns),
// the stored scale rounded through f16.
void quant_q8_0(const float* x, void* dst, int64_t n) {
  ActQ8_0* y = static_cast<ActQ8_0*>(dst);
  for (int64_t b = 0; b < n / kQK; ++b, x += kQK) {
    float32x4_t v[8];
    float32x4_t amax = vdupq_n_f32(0);
    for (int k = 0; k < 8; ++k) {
      v[k] = vld1q_f32(x + 4 * k);
      amax = vmaxq_f32(amax, vabsq_f32(v[k]));
    }
    const float d = vmaxvq_f32(amax) / 127.0f;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    int32x4_t q[8];
    for (int k = 0; k < 8; ++k) q[k] = vcvtnq_s32_f32(vmulq_n_f32(v[k], id));
    vst1q_s8(y[b].qs, narrow16(q[0], q[1], q[2], q[3]));
    vst1q_s8(y[b].qs + 16, narrow16(q[4], q[5], q[6], q[7]));
    y[b].d = f16_to_f32(f32_to_f16(d));
    q8_0_set_sum(y[b]);
  }
}

// As the scalar quant_q8_k: the first value of largest magnitude maps to -127 exactly, the
// others are rounded with ties to even and clamped to 127; plus the sums of each 16.
void quant_q8_k(const float* x, void* dst, int64_t n) {
  ActQ8_K* y = static_cast<ActQ8_K*>(dst);
  for (int64_t b = 0; b < n / kQK_K; ++b, x += kQK_K) {
    float32x4_t vmax = vdupq_n_f32(0);
    for (int j = 0; j < kQK_K; j += 4) vmax = vmaxq_f32(vmax, vabsq_f32(vld1q_f32(x + j)));
    const float amax = vmaxvq_f32(vmax);
    if (amax == 0) {
      q8k_zero(y[b]);
      continue;
    }
    const float iscale = -127.0f / q8k_first_of_magnitude(x, amax);
    const int32x4_t top = vdupq_n_s32(127);
    for (int g = 0; g < kQK_K / 16; ++g) {
      int32x4_t q[4];
      for (int k = 0; k < 4; ++k) {
        q[k] = vminq_s32(vcvtnq_s32_f32(vmulq_n_f32(vld1q_f32(x + 16 * g + 4 * k), iscale)), top);
      }
      const int8x16_t p = narrow16(q[0], q[1], q[2], q[3]);
      vst1q_s8(y[b].qs + 16 * g, p);
      y[b].bsums[g] = vaddlvq_s8(p);
    }
    y[b].d = 1.0f / iscale;
  }
}

// ---- float dot products ------------------------------------------------------------------

float dot_f32(const void* w, const void* a, int64_t n) {
  const float* x = static_cast<const float*>(w);
  const float* y = static_cast<const float*>(a);
  float32x4_t acc[4] = {vdupq_n_f32(0), vdupq_n_f32(0), vdupq_n_f32(0), vdupq_n_f32(0)};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (int k = 0; k < 4; ++k)
      acc[k] = vfmaq_f32(acc[k], vld1q_f32(x + i + 4 * k), vld1q_f32(y + i + 4 * k));
  }
  for (; i + 4 <= n; i += 4) acc[0] = vfmaq_f32(acc[0], vld1q_f32(x + i), vld1q_f32(y + i));
  float s = vaddvq_f32(vaddq_f32(vaddq_f32(acc[0], acc[1]), vaddq_f32(acc[2], acc[3])));
  for (; i < n; ++i) s += x[i] * y[i];
  return s;
}

// Eight 16-bit values widened to two f32 vectors.
struct F16x8 {
  static inline float32x4x2_t load(const uint16_t* p) { return load_f16x8(p); }
  static float scalar(uint16_t h) { return f16_to_f32(h); }
};
struct BF16x8 {
  static inline float32x4x2_t load(const uint16_t* p) {
    const uint16x8_t h = vld1q_u16(p);
    return {vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(h), 16)),
            vreinterpretq_f32_u32(vshll_high_n_u16(h, 16))};
  }
  static float scalar(uint16_t h) { return bf16_to_f32(h); }
};

template <class L>
float dot_16bit(const void* w, const void* a, int64_t n) {
  const uint16_t* x = static_cast<const uint16_t*>(w);
  const uint16_t* y = static_cast<const uint16_t*>(a);
  float32x4_t acc0 = vdupq_n_f32(0), acc1 = vdupq_n_f32(0);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const float32x4x2_t u = L::load(x + i), v = L::load(y + i);
    acc0 = vfmaq_f32(acc0, u.val[0], v.val[0]);
    acc1 = vfmaq_f32(acc1, u.val[1], v.val[1]);
  }
  float s = vaddvq_f32(vaddq_f32(acc0, acc1));
  for (; i < n; ++i) s += L::scalar(x[i]) * L::scalar(y[i]);
  return s;
}

void axpy_f16(float a, const uint16_t* v, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const float32x4x2_t u = F16x8::load(v + i);
    vst1q_f32(y + i, vfmaq_n_f32(vld1q_f32(y + i), u.val[0], a));
    vst1q_f32(y + i + 4, vfmaq_n_f32(vld1q_f32(y + i + 4), u.val[1], a));
  }
  for (; i < n; ++i) y[i] += a * f16_to_f32(v[i]);
}

}  // namespace

void install_attention_neon(Kernels& t);  // attention_neon.cpp

const Kernels* kernels_neon() {
  static const Kernels k = [] {
    Kernels t = kernels_scalar();  // the f32 "quantizer" (a copy) stays scalar
    t.isa = Isa::Neon;
    t.quantize[static_cast<int>(ActFormat::F16)] = quant_f16;
    t.quantize[static_cast<int>(ActFormat::BF16)] = quant_bf16;
    t.quantize[static_cast<int>(ActFormat::Q8_0)] = quant_q8_0;
    t.quantize[static_cast<int>(ActFormat::Q8_K)] = quant_q8_k;
    t.dot[0] = dot_f32;
    t.dot[1] = dot_16bit<F16x8>;
    t.dot[2] = dot_16bit<BF16x8>;
    t.gemm[0] = gemm_by_dot<dot_f32>;
    t.gemm[1] = gemm_by_dot<dot_16bit<F16x8>>;
    t.gemm[2] = gemm_by_dot<dot_16bit<BF16x8>>;
    set_int8_kernels<I8Mull>(t);
    t.axpy_f16 = axpy_f16;
    install_attention_neon(t);
    return t;
  }();
  return &k;
}

}  // namespace leapfrog::cpu
