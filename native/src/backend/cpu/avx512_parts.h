// Pieces of the AVX-512 kernel table that live in their own files; each fills its slots.
#pragma once
#include "backend/cpu/kernels.h"

namespace leapfrog::cpu {

// Q8_0, Q4_0, Q5_0, Q4_1, Q5_1, IQ4_NL packed 16 rows at a time, and their VNNI products
// (packed_avx512.cpp).
void install_packed_vnni(Kernels& t);
// Q4_K, Q6_K and IQ4_XS packed 16 rows per super-block group (packed_kquant_avx512.cpp).
void install_packed_kquant_vnni(Kernels& t);
// Grouped-query attention (attention_avx512.cpp).
void install_attention_avx512(Kernels& t);
// SwiGLU's silu(gate) * up (activation_avx512.cpp).
void install_activation_avx512(Kernels& t);

}  // namespace leapfrog::cpu
