// The AVX2 kernel table is assembled from several files, one per family of weight types;
// each fills its slots of the table.
#pragma once
#include "backend/cpu/kernels.h"

namespace leapfrog::cpu::avx2 {

void install_attention(Kernels& t);   // grouped-query attention (attention_avx2.cpp)
void install_activation(Kernels& t);  // SwiGLU's silu(gate) * up (activation_avx2.cpp)
void install_kquant(Kernels& t);      // Q4_K, Q5_K, Q6_K (kquant_avx2.cpp)
void install_lowbit(Kernels& t);      // Q4_1, Q5_1, IQ4_NL, Q2_K, Q3_K, IQ4_XS (lowbit_avx2.cpp)
// Q8_0, Q4_0, Q5_0, Q4_1, Q5_1, IQ4_NL, IQ4_XS interleaved by 8 rows (packed_avx2.cpp)
void install_packed(Kernels& t);

}  // namespace leapfrog::cpu::avx2
