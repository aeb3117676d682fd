// Q8_0 weights interleaved by 8 rows, for AVX2 int8 products.
//
// In the file, each row is a run of 34-byte blocks (f16 scale + 32 quants). Packed, the
// blocks of 8 rows that cover the same 32 inputs sit together: their 8 scales, then their
// quants in 4-byte slices, slice s of rows 0..7 in one 32-byte vector. One vector load then
// serves 8 output rows, each 32-bit lane of the products belongs to one row, and a block's
// 8 integer sums come out in one register: no horizontal sums, and one float multiply-add
// per block for 8 rows instead of one per row. The packed size equals the file's.
//
// For each (row, activation) pair the float work is the same whatever the batch or tile:
// acc = 0; per block, acc = fma(float(integer sum), d_w * d_a, acc); so batched products
// equal one-row products bit for bit.
#include <cstring>

#include "backend/cpu/avx2_common.h"
#include "backend/cpu/avx2_parts.h"
#include "backend/cpu/quant_blocks.h"

namespace leapfrog::cpu::avx2 {

namespace {

constexpr int kRows = 8;

struct BlockQ8_0x8 {
  uint16_t d[kRows];       // f16 scales of rows 0..7
  int8_t qs[kRows * kQK];  // slice s (inputs 4s..4s+3) of row r at 32 * s + 4 * r
};
static_assert(sizeof(BlockQ8_0x8) == kRows * sizeof(BlockQ8_0));

void pack_q8_0x8(const uint8_t* w, size_t ws, int64_t cols, uint8_t* dst) {
  BlockQ8_0x8* out = reinterpret_cast<BlockQ8_0x8*>(dst);
  for (int64_t b = 0; b < cols / kQK; ++b) {
    for (int r = 0; r < kRows; ++r) {
      const BlockQ8_0& x = reinterpret_cast<const BlockQ8_0*>(w + r * ws)[b];
      out[b].d[r] = x.d;
      for (int s = 0; s < kQK / 4; ++s) std::memcpy(out[b].qs + 32 * s + 4 * r, x.qs + 4 * s, 4);
    }
  }
}

// 8 packed rows x C activation rows.
template <int C>
void tile_q8_0x8(const BlockQ8_0x8* x, const uint8_t* a, size_t as, float* y, size_t ldy,
                 int64_t nb) {
  __m256 facc[C];
#pragma GCC unroll 8
  for (int c = 0; c < C; ++c) facc[c] = _mm256_setzero_ps();
  const __m256i ones = _mm256_set1_epi16(1);
  for (int64_t b = 0; b < nb; ++b) {
    __m256i acc[C];
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c) acc[c] = _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int s = 0; s < kQK / 4; ++s) {
      const __m256i wv = load256(x[b].qs + 32 * s);
      const __m256i aw = _mm256_sign_epi8(wv, wv);  // |w| as unsigned (-128 -> 128)
#pragma GCC unroll 8
      for (int c = 0; c < C; ++c) {
        int32_t slice;
        std::memcpy(&slice, reinterpret_cast<const ActQ8_0*>(a + c * as)[b].qs + 4 * s, 4);
        const __m256i av = _mm256_sign_epi8(_mm256_set1_epi32(slice), wv);
        acc[c] = _mm256_add_epi32(acc[c], _mm256_madd_epi16(_mm256_maddubs_epi16(aw, av), ones));
      }
    }
    const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x[b].d)));
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c) {
      const __m256 da = _mm256_broadcast_ss(&reinterpret_cast<const ActQ8_0*>(a + c * as)[b].d);
      facc[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(acc[c]), _mm256_mul_ps(dw, da), facc[c]);
    }
  }
#pragma GCC unroll 8
  for (int c = 0; c < C; ++c) _mm256_storeu_ps(y + c * ldy, facc[c]);
}

void gemm_q8_0x8(const uint8_t* w, size_t ws, int64_t rows, const uint8_t* a, size_t as, int n,
                 float* y, size_t ldy, int64_t cols) {
  const int64_t nb = cols / kQK;
  for (int64_t r = 0; r < rows; r += kRows) {
    const BlockQ8_0x8* x = reinterpret_cast<const BlockQ8_0x8*>(w + (r / kRows) * ws);
    float* yr = y + r;
    int i = 0;
    for (; i + 4 <= n; i += 4) tile_q8_0x8<4>(x, a + i * as, as, yr + i * ldy, ldy, nb);
    if (n - i >= 2) {
      tile_q8_0x8<2>(x, a + i * as, as, yr + i * ldy, ldy, nb);
      i += 2;
    }
    if (i < n) tile_q8_0x8<1>(x, a + i * as, as, yr + i * ldy, ldy, nb);
  }
}

}  // namespace

void install_packed_q8_0(Kernels& t) {
  t.packed[kernel_slot(GgmlType::Q8_0)] = {kRows, pack_q8_0x8, gemm_q8_0x8};
}

}  // namespace leapfrog::cpu::avx2
