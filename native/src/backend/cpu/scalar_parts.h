// Parts of the portable kernel table that live in their own files.
#pragma once
#include "backend/cpu/kernels.h"

namespace leapfrog::cpu::scalar {

// Q4_1, Q5_1, IQ4_NL, Q2_K, Q3_K and IQ4_XS (kernels_scalar_lowbit.cpp): the reference
// products every level inherits until it has its own.
void install_lowbit(Kernels& t);

}  // namespace leapfrog::cpu::scalar
