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
// A block of a matrix product: for weight rows r < rows (row r at w + r * w_stride) and
// activation rows i < n (prepared rows at a + i * a_stride), y[i * ldy + r] = dot(row r,
// activation i) over `cols` inputs. Kernels tile this (several weight rows x several
// activation rows per inner loop, so each loaded weight block serves several tokens and each
// activation block several rows), but every single (r, i) result is computed with the same
// sequence of operations whatever n, rows or the tile it falls in: a batched pass gives
// bit-identical rows to one-token passes (greedy speculative decoding depends on it).
using GemmFn = void (*)(const uint8_t* w, size_t w_stride, int64_t rows, const uint8_t* a,
                        size_t a_stride, int n, float* y, size_t ldy, int64_t cols);

struct Kernels {
  Isa isa;
  // Indexed by ActFormat.
  QuantizeFn quantize[5];
  // Indexed by kernel_slot(type); null when the type is unsupported. dot(w, a) equals the
  // gemm result for that row and activation, bit for bit.
  DotFn dot[9];
  // Indexed like dot; never null where dot is not.
  GemmFn gemm[9];
  // y[0..n) += a * v[0..n), v in f16 (attention's weighted sum of values).
  void (*axpy_f16)(float a, const uint16_t* v, float* y, int64_t n);
};

// A gemm made of dot calls (the scalar path, and types without a tiled kernel).
template <DotFn Dot>
void gemm_by_dot(const uint8_t* w, size_t w_stride, int64_t rows, const uint8_t* a, size_t a_stride,
                 int n, float* y, size_t ldy, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int i = 0; i < n; ++i) y[i * ldy + r] = Dot(w + r * w_stride, a + i * a_stride, cols);
  }
}

// Slot of a weight type in Kernels::dot, or -1.
int kernel_slot(GgmlType t);

const Kernels& kernels(Isa isa);
const Kernels& kernels_scalar();
const Kernels* kernels_avx2();    // null when not compiled in (non-x86 builds)
const Kernels* kernels_avx512();  // null when not compiled in

}  // namespace leapfrog::cpu
