// arm64 kernels with the dot-product extension (Isa::NeonDot): the NEON table with its
// integer kernels rebuilt on vdotq_s32. This file alone is compiled with +dotprod
// (CMakeLists.txt), and only runs where the CPU reports it (detect_isa()).
#include "backend/cpu/kernels.h"
#include "backend/cpu/kernels_neon_int8.h"
#include "backend/cpu/neon_sdot.h"

namespace leapfrog::cpu {

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
