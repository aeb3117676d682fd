// Q8_0, Q4_0 and Q5_0 weights interleaved by 8 rows, for AVX2 int8 products.
//
// In the file, each row is a run of 32-weight blocks (f16 scale + quants). Packed, the
// blocks of 8 rows that cover the same 32 inputs sit together: their 8 scales, then their
// quants arranged so that one 32-byte vector holds "slice" s (inputs 4s..4s+3) of all 8
// rows, row r in bytes 4r..4r+3. One vector then serves 8 output rows, each 32-bit lane of
// the products belongs to one row, and a block's 8 integer sums come out in one register:
// no horizontal sums, and one float multiply-add per block for 8 rows instead of one per
// row. Each packed layout is exactly as large as the file's.
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
constexpr int kSlices = kQK / 4;  // 4-input slices per block

// Q8_0: slice s of row r at qs[32 s + 4 r].
struct BlockQ8_0x8 {
  uint16_t d[kRows];
  int8_t qs[kRows * kQK];
};
// Q4_0: vector k (k < 4) holds slice k in its low nibbles and slice k + 4 in its high
// nibbles, byte 4 r + e = element e of the slice in row r; value = nibble - 8.
struct BlockQ4_0x8 {
  uint16_t d[kRows];
  uint8_t qs[kRows * kQK / 2];
};
// Q5_0: the nibbles as Q4_0's, and per slice one 32-bit word whose bit j is the fifth bit
// of byte j of the slice vector; value = 5-bit q - 16.
struct BlockQ5_0x8 {
  uint16_t d[kRows];
  uint32_t qh[kSlices];
  uint8_t qs[kRows * kQK / 2];
};
static_assert(sizeof(BlockQ8_0x8) == kRows * sizeof(BlockQ8_0));
static_assert(sizeof(BlockQ4_0x8) == kRows * sizeof(BlockQ4_0));
static_assert(sizeof(BlockQ5_0x8) == kRows * sizeof(BlockQ5_0));

// ---- packing (once, at load) ------------------------------------------------------------

// Element j (0..31) of a file block as its signed value's raw code (Q8: the int8; Q4: the
// nibble; Q5: the 5-bit code).
inline int q4_code(const BlockQ4_0& x, int j) { return j < 16 ? x.qs[j] & 0xF : x.qs[j - 16] >> 4; }
inline int q5_code(const BlockQ5_0& x, int j) {
  uint32_t qh;
  std::memcpy(&qh, x.qh, 4);
  const int lo = j < 16 ? x.qs[j] & 0xF : x.qs[j - 16] >> 4;
  return lo | int((qh >> j) & 1) << 4;
}

void pack_q8_0x8(const uint8_t* w, size_t ws, int64_t cols, uint8_t* dst) {
  BlockQ8_0x8* out = reinterpret_cast<BlockQ8_0x8*>(dst);
  for (int64_t b = 0; b < cols / kQK; ++b) {
    for (int r = 0; r < kRows; ++r) {
      const BlockQ8_0& x = reinterpret_cast<const BlockQ8_0*>(w + r * ws)[b];
      out[b].d[r] = x.d;
      for (int s = 0; s < kSlices; ++s) std::memcpy(out[b].qs + 32 * s + 4 * r, x.qs + 4 * s, 4);
    }
  }
}

// The nibble vectors of Q4_0/Q5_0: code of element e of slice s in row r.
template <class Code>
void pack_nibbles(uint8_t* qs, Code code) {
  std::memset(qs, 0, kRows * kQK / 2);
  for (int s = 0; s < kSlices; ++s) {
    for (int r = 0; r < kRows; ++r) {
      for (int e = 0; e < 4; ++e) {
        const int c = code(r, 4 * s + e) & 0xF;
        qs[32 * (s % 4) + 4 * r + e] |= uint8_t(s < 4 ? c : c << 4);
      }
    }
  }
}

void pack_q4_0x8(const uint8_t* w, size_t ws, int64_t cols, uint8_t* dst) {
  BlockQ4_0x8* out = reinterpret_cast<BlockQ4_0x8*>(dst);
  for (int64_t b = 0; b < cols / kQK; ++b) {
    auto block = [&](int r) -> const BlockQ4_0& {
      return reinterpret_cast<const BlockQ4_0*>(w + r * ws)[b];
    };
    for (int r = 0; r < kRows; ++r) out[b].d[r] = block(r).d;
    pack_nibbles(out[b].qs, [&](int r, int j) { return q4_code(block(r), j); });
  }
}

void pack_q5_0x8(const uint8_t* w, size_t ws, int64_t cols, uint8_t* dst) {
  BlockQ5_0x8* out = reinterpret_cast<BlockQ5_0x8*>(dst);
  for (int64_t b = 0; b < cols / kQK; ++b) {
    auto block = [&](int r) -> const BlockQ5_0& {
      return reinterpret_cast<const BlockQ5_0*>(w + r * ws)[b];
    };
    for (int r = 0; r < kRows; ++r) out[b].d[r] = block(r).d;
    pack_nibbles(out[b].qs, [&](int r, int j) { return q5_code(block(r), j); });
    for (int s = 0; s < kSlices; ++s) {
      uint32_t bits = 0;
      for (int r = 0; r < kRows; ++r) {
        for (int e = 0; e < 4; ++e)
          bits |= uint32_t(q5_code(block(r), 4 * s + e) >> 4) << (4 * r + e);
      }
      out[b].qh[s] = bits;
    }
  }
}

// ---- products ---------------------------------------------------------------------------

// Signed weights of slice s (8 rows x 4 inputs) of a packed block.
inline __m256i slice(const BlockQ8_0x8& x, int s) { return load256(x.qs + 32 * s); }

inline __m256i nibbles(const uint8_t* qs, int s) {
  const __m256i v = load256(qs + 32 * (s % 4));
  return _mm256_and_si256(s < 4 ? v : _mm256_srli_epi16(v, 4), _mm256_set1_epi8(0xF));
}

inline __m256i slice(const BlockQ4_0x8& x, int s) {
  return _mm256_sub_epi8(nibbles(x.qs, s), _mm256_set1_epi8(8));
}

inline __m256i slice(const BlockQ5_0x8& x, int s) {
  // Byte j takes bit j of the slice's word: spread the word's bytes 8 times each, keep
  // one bit per byte, and turn set bits into 16.
  const __m256i word = _mm256_set1_epi32(static_cast<int>(x.qh[s]));
  const __m256i spread = _mm256_shuffle_epi8(
      word,
      _mm256_setr_epi64x(0, 0x0101010101010101LL, 0x0202020202020202LL, 0x0303030303030303LL));
  const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ULL));
  const __m256i high =
      _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit), _mm256_set1_epi8(16));
  return _mm256_sub_epi8(_mm256_or_si256(nibbles(x.qs, s), high), _mm256_set1_epi8(16));
}

// 8 packed rows x C activation rows.
template <class Block, int C>
void tile(const Block* x, const uint8_t* a, size_t as, float* y, size_t ldy, int64_t nb) {
  __m256 facc[C];
#pragma GCC unroll 8
  for (int c = 0; c < C; ++c) facc[c] = _mm256_setzero_ps();
  const __m256i ones = _mm256_set1_epi16(1);
  for (int64_t b = 0; b < nb; ++b) {
    __m256i acc[C];
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c) acc[c] = _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int s = 0; s < kSlices; ++s) {
      const __m256i wv = slice(x[b], s);
      const __m256i aw = _mm256_sign_epi8(wv, wv);  // |w| as unsigned (-128 -> 128)
#pragma GCC unroll 8
      for (int c = 0; c < C; ++c) {
        int32_t four;
        std::memcpy(&four, reinterpret_cast<const ActQ8_0*>(a + c * as)[b].qs + 4 * s, 4);
        const __m256i av = _mm256_sign_epi8(_mm256_set1_epi32(four), wv);
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

template <class Block>
void gemm_packed(const uint8_t* w, size_t ws, int64_t rows, const uint8_t* a, size_t as, int n,
                 float* y, size_t ldy, int64_t cols) {
  const int64_t nb = cols / kQK;
  for (int64_t r = 0; r < rows; r += kRows) {
    const Block* x = reinterpret_cast<const Block*>(w + (r / kRows) * ws);
    float* yr = y + r;
    int i = 0;
    for (; i + 4 <= n; i += 4) tile<Block, 4>(x, a + i * as, as, yr + i * ldy, ldy, nb);
    if (n - i >= 2) {
      tile<Block, 2>(x, a + i * as, as, yr + i * ldy, ldy, nb);
      i += 2;
    }
    if (i < n) tile<Block, 1>(x, a + i * as, as, yr + i * ldy, ldy, nb);
  }
}

}  // namespace

void install_packed(Kernels& t) {
  t.packed[kernel_slot(GgmlType::Q8_0)] = {kRows, pack_q8_0x8, gemm_packed<BlockQ8_0x8>};
  t.packed[kernel_slot(GgmlType::Q4_0)] = {kRows, pack_q4_0x8, gemm_packed<BlockQ4_0x8>};
  t.packed[kernel_slot(GgmlType::Q5_0)] = {kRows, pack_q5_0x8, gemm_packed<BlockQ5_0x8>};
}

}  // namespace leapfrog::cpu::avx2
