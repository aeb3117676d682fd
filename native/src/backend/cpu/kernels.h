// The CPU kernel table: one set of function pointers per instruction set, chosen once at
// run time. Every kernel has a portable scalar version (kernels_scalar.cpp) that defines
// the arithmetic; the AVX2 versions (kernels_avx2.cpp) compute the same integer sums and
// differ only in the order of float additions.
#pragma once
#include <cstddef>
#include <cstdint>

#include "gguf/ggml_types.h"

namespace leapfrog::cpu {

enum class Isa { Scalar = 0, Avx2 = 1, Avx512 = 2 };

// Best instruction set this CPU supports, lowered by LEAPFROG_CPU_ISA=scalar|avx2|avx512
// (never raised above what the CPU has). AVX-512 kernels are not written yet, so Avx512
// currently runs the AVX2 table.
Isa detect_isa();
const char* isa_name(Isa isa);

// How activations are prepared for a weight type's dot product. Quantized weights take
// 8-bit activations (integer dot products); f16/bf16 weights take activations rounded to
// their type, as llama.cpp does, so both engines multiply the same numbers.
enum class ActFormat { F32, F16, BF16, Q8_0, Q8_K };
ActFormat act_format_for(GgmlType weight_type);
size_t act_row_bytes(ActFormat f, int64_t n);

using DotFn = float (*)(const void* w, const void* a, int64_t n);
using QuantizeFn = void (*)(const float* x, void* dst, int64_t n);
// One weight row against 4 activation rows (a, a + a_stride, ...): out[0..4). The weight
// row is loaded and unpacked once for all four, which is what makes batched passes
// (prompt chunks, draft verification) cheaper per token than single-token decoding.
using Dot4Fn = void (*)(const void* w, const uint8_t* a, size_t a_stride, float* out, int64_t n);

struct Kernels {
  Isa isa;
  // Indexed by ActFormat.
  QuantizeFn quantize[5];
  // Indexed by kernel_slot(type); null when the type is unsupported.
  DotFn dot[8];
  // Indexed like dot; null where no 4-row kernel exists (matmul then calls dot 4 times).
  Dot4Fn dot4[8];
  // y[0..n) += a * v[0..n), v in f16 (attention's weighted sum of values).
  void (*axpy_f16)(float a, const uint16_t* v, float* y, int64_t n);
};

// Slot of a weight type in Kernels::dot, or -1.
int kernel_slot(GgmlType t);

const Kernels& kernels(Isa isa);
const Kernels& kernels_scalar();
const Kernels* kernels_avx2();  // null when not compiled in (non-x86 builds)

}  // namespace leapfrog::cpu
