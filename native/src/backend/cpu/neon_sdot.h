// The dot-product extension's int8 step (sdot) for the arm64 kernels' I8 parameter
// (kernels_neon_int8.h, packed_neon.h). Include only from files built with +dotprod.
#pragma once
#include <arm_neon.h>

namespace leapfrog::cpu {
namespace {

// sdot: lane i of acc += a[4i..4i+3] . b[4i..4i+3], as I8Mull in kernels_neon.cpp.
struct I8Sdot {
  static inline int32x4_t dot(int32x4_t acc, int8x16_t a, int8x16_t b) {
    return vdotq_s32(acc, a, b);
  }
};

}  // namespace
}  // namespace leapfrog::cpu
