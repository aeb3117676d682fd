// f16 widening for the arm64 kernels (kernels_neon.cpp's dot products and axpy,
// attention_neon.cpp's keys and values). Plain NEON: any arm64 file may include it.
#pragma once
#include <arm_neon.h>

#include <cstdint>

namespace leapfrog::cpu {
namespace {

// Eight f16 values widened to two f32 vectors.
inline float32x4x2_t load_f16x8(const uint16_t* p) {
  const float16x8_t h = vreinterpretq_f16_u16(vld1q_u16(p));
  return {vcvt_f32_f16(vget_low_f16(h)), vcvt_high_f32_f16(h)};
}

}  // namespace
}  // namespace leapfrog::cpu
