// arm64 kernels with the dot-product extension (Isa::NeonDot): the NEON table with its
// integer kernels rebuilt on vdotq_s32. This file alone is compiled with +dotprod
// (CMakeLists.txt), and only runs where the CPU reports it (detect_isa()).
#include <arm_neon.h>

#include "backend/cpu/kernels.h"
#include "backend/cpu/kernels_neon_int8.h"

namespace leapfrog::cpu {

namespace {

// sdot: lane i of acc += a[4i..4i+3] . b[4i..4i+3], as I8Mull in kernels_neon.cpp.
struct I8Sdot {
  static inline int32x4_t dot(int32x4_t acc, int8x16_t a, int8x16_t b) {
    return vdotq_s32(acc, a, b);
  }
};

}  // namespace

const Kernels* kernels_neon_dot() {
  static const Kernels k = [] {
    Kernels t = *kernels_neon();
    t.isa = Isa::NeonDot;
    set_int8_kernels<I8Sdot>(t);
    return t;
  }();
  return &k;
}

}  // namespace leapfrog::cpu
