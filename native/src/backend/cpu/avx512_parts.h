// Pieces of the AVX-512 kernel table that live in their own files; each fills its slots.
#pragma once
#include "backend/cpu/kernels.h"

namespace leapfrog::cpu {

// Q8_0, Q4_0, Q5_0 over the 8-row packed layouts, VNNI step (packed_avx512.cpp).
void install_packed_vnni(Kernels& t);

}  // namespace leapfrog::cpu
