// The CPU kernel table: one set of function pointers per instruction set, chosen once at
// run time. Every kernel has a portable scalar version (kernels_scalar.cpp) that defines
// the arithmetic; the x86 tables (kernels_avx2.cpp with kquant_avx2.cpp, packed_avx2.cpp
// and attention_avx2.cpp; kernels_avxvnni.cpp; kernels_avx512.cpp with packed_avx512.cpp)
// and the arm64 ones (kernels_neon*.cpp with attention_neon.cpp) compute the same integer sums and
// differ only in the order of float additions. Each table starts from a copy of the one below it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "backend/cpu/attention_task.h"
#include "gguf/ggml_types.h"

namespace leapfrog::cpu {

// Each architecture orders its own levels upward from Scalar and ranks the other
// architecture's above all of them, so on either one `isa <= detect_isa()` means "runs here"
// and std::min(requested, detect_isa()) never picks a foreign level.
#if defined(__aarch64__)
enum class Isa {
  Scalar = 0,
  Neon = 1,
  NeonDot = 2,
  NeonI8mm = 3,
  Avx2 = 4,
  AvxVnni = 5,
  Avx512 = 6
};
#else
enum class Isa {
  Scalar = 0,
  Avx2 = 1,
  AvxVnni = 2,
  Avx512 = 3,
  Neon = 4,
  NeonDot = 5,
  NeonI8mm = 6
};
#endif

// x86-64 levels: AVX2 (+FMA, F16C); AVX-VNNI (AVX2 plus the 256-bit VEX int8 dot product of
// Intel's client cores since Alder Lake, which lack AVX-512); AVX-512 (F, BW, VL, VNNI).
// arm64 levels: NEON; NeonDot (sdot); NeonI8mm (sdot and the int8 matrix multiply, smmla).
// Best instruction set this CPU supports, lowered by
// LEAPFROG_CPU_ISA=scalar|avx2|avxvnni|avx512 on x86-64 or scalar|neon|neondot|neoni8mm on arm64
// (never raised above what the CPU has, never to a level it lacks).
Isa detect_isa();
const char* isa_name(Isa isa);
// Whether this CPU can run a level's kernels (an AVX-512 CPU may lack AVX-VNNI).
bool cpu_supports(Isa isa);
// The levels this CPU runs (detect_isa() and below on this architecture, where supported),
// lowest first: what the tests iterate over, so the same tests prove AVX2 on x86-64 and NEON
// on arm64.
std::vector<Isa> runnable_isas();

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

// Slots of Kernels::dot, gemm and packed (kernel_slot numbers the weight types).
constexpr int kKernelSlots = 15;

struct Kernels {
  Isa isa;
  // Indexed by ActFormat.
  QuantizeFn quantize[5];
  // Indexed by kernel_slot(type); null when the type is unsupported. dot(w, a) equals the
  // gemm result for that row and activation, bit for bit.
  DotFn dot[kKernelSlots];
  // Indexed like dot; never null where dot is not.
  GemmFn gemm[kKernelSlots];
  // y[0..n) += a * v[0..n), v in f16 (attention's weighted sum of values).
  void (*axpy_f16)(float a, const uint16_t* v, float* y, int64_t n);
  // Softmax attention for one task (head_dim a multiple of 8, at most 256), or null: then the
  // backend runs its generic loop over dot[F16] and axpy_f16. Each (row, head) result must
  // not depend on the other rows and heads of the task (batched passes stay bit-identical).
  void (*attend)(const AttentionTask& t);
  // gate[i] = silu(gate[i]) * up[i] for i < n (SwiGLU), or null: then the backend's scalar
  // loop with std::exp.
  void (*silu_mul)(float* gate, const float* up, size_t n);
  // y = x / sqrt(mean(x^2) + eps) * w over n rows of dim (w may be null; y may be x): every
  // table's the same floats (the scalar table's loop defines them, kernels_scalar.cpp).
  void (*rms_norm)(const float* x, const float* w, int n, int dim, float eps, float* y);
  // Indexed like dot: an interleaved layout of `group` rows this table's fastest product
  // reads, or group == 0 where the file's layout is used as is. pack() rewrites one group
  // of rows (row r at w + r * w_stride) into group * row_bytes bytes at dst; gemm then
  // takes w = the packed groups, w_stride = bytes per group, rows a multiple of group.
  // The packed gemm obeys the tiling rule above (bit-identical whatever n and tile).
  struct Packed {
    int group = 0;
    void (*pack)(const uint8_t* w, size_t w_stride, int64_t cols, uint8_t* dst) = nullptr;
    GemmFn gemm = nullptr;
    // Bytes of one packed group of `cols` inputs, when the layout is not group * row_bytes
    // (a layout may keep unpacked scales beside the quants).
    size_t (*group_bytes)(int64_t cols) = nullptr;
    // Where set, a product of n > 1 activation rows reads them rearranged once per product by
    // tiles() (n rows of a_stride bytes at a, as quantize[] wrote them, into tiles_bytes(n,
    // cols) bytes at dst), and gemm is then called with that buffer and a_stride 0: a layout
    // in which one pointer reaches every row of a tile keeps the tile's addresses in
    // registers. n == 1 always reads the rows as they are.
    void (*tiles)(const uint8_t* a, size_t a_stride, int n, int64_t cols, uint8_t* dst) = nullptr;
    size_t (*tiles_bytes)(int n, int64_t cols) = nullptr;
    // Rows per group of that layout: tiles() of rows [r, n) with r a multiple of tile_rows,
    // written at dst + tiles_bytes(r, cols), is that part of the whole rearrangement (so runs
    // of whole groups can be prepared on different threads). 0: the whole at once only.
    int tile_rows = 0;
  } packed[kKernelSlots];
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
const Kernels* kernels_avx2();       // null when not compiled in (non-x86 builds)
const Kernels* kernels_avx_vnni();   // null when not compiled in
const Kernels* kernels_avx512();     // null when not compiled in
const Kernels* kernels_neon();       // null when not compiled in (non-arm64 builds)
const Kernels* kernels_neon_dot();   // null when not compiled in (non-arm64 builds)
const Kernels* kernels_neon_i8mm();  // null when not compiled in (non-arm64 builds)

}  // namespace leapfrog::cpu
