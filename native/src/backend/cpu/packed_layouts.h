// Q8_0, Q4_0, Q5_0, Q4_1, Q5_1, IQ4_NL, IQ4_XS, Q4_K and Q6_K weights interleaved by 8 rows: the
// packed block layouts and their packing, shared by every instruction set that reads them (the AVX2
// and AVX-VNNI tables, packed_blocks.h; the NEON tables, packed_neon.h). Portable code, no
// intrinsics.
//
// In the file, each row is a run of 32-weight blocks (f16 scale + quants). Packed, the
// blocks of 8 rows that cover the same 32 inputs sit together: their 8 scales, then their
// quants arranged so that one 32-byte vector (two 16-byte ones on arm64) holds "slice" s
// (inputs 4s..4s+3) of all 8 rows, row r in bytes 4r..4r+3. One vector then serves 8 (or 4)
// output rows, each 32-bit lane of the products belongs to one row, and a block's integer sums
// come out in whole registers: no horizontal sums, and one float multiply-add per block for
// 8 rows. Each packed layout is exactly as large as the file's.
//
// For each (row, activation) pair the float work is the same whatever the batch, tile or
// instruction set: acc = 0; per block, acc = fma(float(integer sum), d_w * d_a, acc), then for
// Q4_1/Q5_1 acc = fma(m_w, s_a, acc) with s_a the activation block's total (q8_block_total,
// quant_blocks.h: the definition's per-block terms, kernels_scalar_lowbit.cpp); the
// integer sums are exact, so every table that reads these layouts gives the same results,
// and batched products equal one-row products bit for bit.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "backend/cpu/kernels.h"
#include "backend/cpu/quant_blocks.h"

namespace leapfrog::cpu::packed {

// Internal linkage: files built for different instruction sets include this, and one
// shared copy of a function could carry the wrong set's instructions.
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
// IQ4_NL: Q4_0's nibbles; value = kIq4NlValues[nibble] (a lookup when read).
struct BlockIQ4_NLx8 {
  uint16_t d[kRows];
  uint8_t qs[kRows * kQK / 2];
};
// Q4_1 / Q5_1: Q4_0's / Q5_0's layout with the 8 rows' f16 mins beside their scales; value =
// code (4 or 5 bits, no offset) * d + m.
struct BlockQ4_1x8 {
  uint16_t d[kRows], m[kRows];
  uint8_t qs[kRows * kQK / 2];
};
struct BlockQ5_1x8 {
  uint16_t d[kRows], m[kRows];
  uint32_t qh[kSlices];
  uint8_t qs[kRows * kQK / 2];
};
// IQ4_XS, per 256-input super-block: the 8 rows' f16 scales, their signed sub-block scales
// (scale - 32) unpacked to bytes, sc[j][r], and each 32-input sub-block's nibbles as
// BlockIQ4_NLx8's: 1104 bytes, the file's 1088 plus the unpacked scales (1.5 %). Per
// super-block: the integer total sum_j sc_j * sum(level * a) over sub-block j, exact as the
// definition's, then acc = fma(float(total), d_w * d_a, acc) — the AVX-512 layout's rule too.
struct BlockIQ4_XSx8 {
  static constexpr int kValues = kQK_K;
  uint16_t d[kRows];
  int8_t sc[8][kRows];
  uint8_t qs[8][kRows * kQK / 2];
};
// Q4_K, per 256-input super-block (the AVX2/AVX-VNNI and NEON tables): the 8 rows' f16 scales
// and mins, their eight 6-bit sub-block scales and mins unpacked to bytes (sc[j][r], m[j][r]),
// and the quants as the file keeps them — chunk c holds sub-block 2c in its low nibbles and
// 2c + 1 in its high ones — with slice s of the 8 rows in one 32-byte vector (row r at 4 r).
// 1184 bytes: the file's 1152 plus the unpacked scales (2.8 %), as the AVX-512 16-row layout.
// The codes are unsigned (0..15): the tile needs no sign moves. Per super-block the exact
// integers tot = sum_j sc_j * sum(q * a) and msum = sum_j m_j * (activation sum of sub-block
// j), then acc += (d_a d) tot - (d_a dmin) msum, llama.cpp's order (the AVX-512 layout's rule).
struct BlockQ4_Kx8 {
  static constexpr int kValues = kQK_K;
  uint16_t d[kRows], dmin[kRows];
  uint8_t sc[8][kRows], m[8][kRows];
  uint8_t qs[4][kSlices][kRows * 4];
};
static_assert(sizeof(BlockQ4_Kx8) == 1184);
// Q6_K, per 256-input super-block, as the AVX-512 16-row layout: the 8 rows'
// f16 scales; the sixteen int8 sub-block scales in pairs (sc[k][r] = scales 2k and 2k + 1 of
// row r: one sign extension gives madd's int16 pairs); per 16-input sub-block j (four slices)
// the 6-bit codes in three vectors: qs[j][t] holds slice t (t < 3) in the low 6 bits of each
// byte and bits 2t, 2t + 1 of slice 3 in the top two. As compact as the file (210 bytes a row).
// Per super-block the exact integer total = sum_j sc_j * sum(q * a) - 32 sum_j sc_j * (activation
// sum of sub-block j), then acc = fma(float(total), d_w * d_a, acc).
struct BlockQ6_Kx8 {
  static constexpr int kValues = kQK_K;
  uint16_t d[kRows];
  int8_t sc[8][kRows][2];
  uint8_t qs[16][3][kRows * 4];
};
static_assert(sizeof(BlockQ6_Kx8) == kRows * sizeof(BlockQ6_K));
static_assert(sizeof(BlockQ8_0x8) == kRows * sizeof(BlockQ8_0));
static_assert(sizeof(BlockIQ4_NLx8) == kRows * sizeof(BlockIQ4_NL));
static_assert(sizeof(BlockQ4_1x8) == kRows * sizeof(BlockQ4_1));
static_assert(sizeof(BlockQ5_1x8) == kRows * sizeof(BlockQ5_1));
static_assert(sizeof(BlockQ4_0x8) == kRows * sizeof(BlockQ4_0));
static_assert(sizeof(BlockQ5_0x8) == kRows * sizeof(BlockQ5_0));

// ---- packing (once, at load) ------------------------------------------------------------

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

// The 4-bit part of codes[r][j] (row r, element j) as the packed nibble vectors (Q4_0 and
// Q5_0 alike).
void pack_nibbles(const uint8_t (&codes)[kRows][kQK], uint8_t* qs) {
  for (int k = 0; k < 4; ++k) {  // vector k: slice k low, slice k + 4 high
    for (int r = 0; r < kRows; ++r) {
      for (int e = 0; e < 4; ++e) {
        const int lo = codes[r][4 * k + e] & 0xF, hi = codes[r][4 * (k + 4) + e] & 0xF;
        qs[32 * k + 4 * r + e] = uint8_t(lo | hi << 4);
      }
    }
  }
}

// The nibble types (Out = BlockQ4_0x8, BlockQ5_0x8, ...): scales (and mins), nibble vectors
// and, for the 5-bit types, the per-slice words of fifth bits.
template <class In, class Out, void (*Codes)(const In&, uint8_t*)>
void pack_nibble_type(const uint8_t* w, size_t ws, int64_t cols, uint8_t* dst) {
  Out* out = reinterpret_cast<Out*>(dst);
  uint8_t codes[kRows][kQK];
  for (int64_t b = 0; b < cols / kQK; ++b) {
    for (int r = 0; r < kRows; ++r) {
      const In& x = reinterpret_cast<const In*>(w + r * ws)[b];
      out[b].d[r] = x.d;
      if constexpr (kHasMin<Out>) out[b].m[r] = x.m;
      Codes(x, codes[r]);
    }
    pack_nibbles(codes, out[b].qs);
    if constexpr (requires { out[b].qh; }) {
      for (int s = 0; s < kSlices; ++s) {
        uint32_t bits = 0;  // bit 4r + e: the fifth bit of element 4s + e of row r
        for (int r = 0; r < kRows; ++r) {
          for (int e = 0; e < 4; ++e) bits |= uint32_t(codes[r][4 * s + e] >> 4) << (4 * r + e);
        }
        out[b].qh[s] = bits;
      }
    }
  }
}

inline size_t iq4_xs8_group_bytes(int64_t cols) {
  return size_t(cols / kQK_K) * sizeof(BlockIQ4_XSx8);
}

inline void pack_iq4_xs8(const uint8_t* w, size_t ws, int64_t cols, uint8_t* dst) {
  BlockIQ4_XSx8* out = reinterpret_cast<BlockIQ4_XSx8*>(dst);
  uint8_t codes[kRows][kQK];
  for (int64_t b = 0; b < cols / kQK_K; ++b) {
    const auto row = [&](int r) -> const BlockIQ4_XS& {
      return reinterpret_cast<const BlockIQ4_XS*>(w + r * ws)[b];
    };
    for (int r = 0; r < kRows; ++r) {
      out[b].d[r] = row(r).d;
      for (int j = 0; j < 8; ++j) out[b].sc[j][r] = static_cast<int8_t>(iq4xs_scale(row(r), j));
    }
    for (int j = 0; j < 8; ++j) {
      for (int r = 0; r < kRows; ++r) nibble_codes(row(r).qs + 16 * j, codes[r]);
      pack_nibbles(codes, out[b].qs[j]);
    }
  }
}

inline size_t q4_k8_group_bytes(int64_t cols) { return size_t(cols / kQK_K) * sizeof(BlockQ4_Kx8); }

inline void pack_q4_k8(const uint8_t* w, size_t ws, int64_t cols, uint8_t* dst) {
  pack_q4_k_rows<BlockQ4_Kx8, kRows>(w, ws, cols, dst);
}

inline size_t q6_k8_group_bytes(int64_t cols) { return size_t(cols / kQK_K) * sizeof(BlockQ6_Kx8); }

inline void pack_q6_k8(const uint8_t* w, size_t ws, int64_t cols, uint8_t* dst) {
  pack_q6_k_rows<BlockQ6_Kx8, kRows>(w, ws, cols, dst);
}

// Inputs per packed block: 32, or Block::kValues where a layout says (super-blocks).
template <class Block>
constexpr int kBlockValues = [] {
  if constexpr (requires { Block::kValues; }) {
    return Block::kValues;
  } else {
    return kQK;
  }
}();

// ---- the walk of a product over the packed groups ------------------------------------------
//
// Tile::template run<C>(x, a, as, y, ldy, b0, b1): one group x 8 rows x C activation rows over
// blocks [b0, b1), float sums starting at 0 for b0 == 0 and otherwise taken from y (8 floats
// per activation row at y + c * ldy), where they are left. Up to 4 activation rows stream each
// group's weights once, straight into y. More rows walk each group's inputs chunk by chunk
// (512 inputs: 16 blocks, 4.3 KiB of Q8_0), every tile of activation rows passing over a chunk
// while it is in L1 — the weights come from memory once whatever n is — the sums carried in a
// contiguous scratch (y's rows lie a whole output apart and alias in L1) and copied to y once per
// group. The float operations per (row, activation) are the same either way.
constexpr int64_t kWalkChunkValues = 16 * kQK;
constexpr int kWalkScratchRows = 64;

// Activation rows a tile takes at once: 4, or 8 where Tile::kEightRows<Block> says so (a
// tile whose running sums fit the registers eight rows wide shares each weight vector's
// unpacking among twice the rows).
template <class Tile, class Block>
constexpr bool kTakesEightRows = [] {
  if constexpr (requires { Tile::template kEightRows<Block>; }) {
    return Tile::template kEightRows<Block>;
  } else {
    return false;
  }
}();

template <class Tile, class Block>
void walk_columns(const Block* x, const uint8_t* a, size_t as, int n, float* y, size_t ldy,
                  int64_t b0, int64_t b1) {
  int i = 0;
  if constexpr (kTakesEightRows<Tile, Block>) {
    for (; i + 8 <= n; i += 8) Tile::template run<8>(x, a + i * as, as, y + i * ldy, ldy, b0, b1);
  }
  for (; i + 4 <= n; i += 4) Tile::template run<4>(x, a + i * as, as, y + i * ldy, ldy, b0, b1);
  if (n - i >= 2) {
    Tile::template run<2>(x, a + i * as, as, y + i * ldy, ldy, b0, b1);
    i += 2;
  }
  if (i < n) Tile::template run<1>(x, a + i * as, as, y + i * ldy, ldy, b0, b1);
}

template <class Tile, class Block>
void walk_packed(const uint8_t* w, size_t ws, int64_t rows, const uint8_t* a, size_t as, int n,
                 float* y, size_t ldy, int64_t cols) {
  constexpr int64_t kChunkBlocks = kWalkChunkValues / kBlockValues<Block>;
  const int64_t nb = cols / kBlockValues<Block>;
  alignas(64) thread_local float acc[kWalkScratchRows * kRows];
  for (int64_t r = 0; r < rows; r += kRows) {
    const Block* x = reinterpret_cast<const Block*>(w + (r / kRows) * ws);
    if (n <= 4) {
      walk_columns<Tile>(x, a, as, n, y + r, ldy, 0, nb);
      continue;
    }
    for (int i0 = 0; i0 < n; i0 += kWalkScratchRows) {
      const int m = n - i0 < kWalkScratchRows ? n - i0 : kWalkScratchRows;
      for (int64_t b0 = 0; b0 < nb; b0 += kChunkBlocks) {
        const int64_t b1 = b0 + kChunkBlocks < nb ? b0 + kChunkBlocks : nb;
        walk_columns<Tile>(x, a + i0 * as, as, m, acc, kRows, b0, b1);
      }
      for (int i = 0; i < m; ++i)
        std::memcpy(y + (i0 + i) * ldy + r, acc + i * kRows, kRows * sizeof(float));
    }
  }
}

// The 8-row layouts in t, every instruction set's (AVX2, AVX-VNNI, NEON): how each type is
// packed, and its products as walk_packed over Tile (that instruction set's tiles:
// Tile::run<C, Block>).
template <class Tile>
void set_packed_8row(Kernels& t) {
  const auto set = [&](GgmlType type, Kernels::Packed p) { t.packed[kernel_slot(type)] = p; };
  set(GgmlType::Q8_0, {kRows, pack_q8_0x8, walk_packed<Tile, BlockQ8_0x8>});
  set(GgmlType::Q4_0, {kRows, pack_nibble_type<BlockQ4_0, BlockQ4_0x8, file_codes_4bit>,
                       walk_packed<Tile, BlockQ4_0x8>});
  set(GgmlType::Q5_0, {kRows, pack_nibble_type<BlockQ5_0, BlockQ5_0x8, file_codes_5bit>,
                       walk_packed<Tile, BlockQ5_0x8>});
  set(GgmlType::Q4_1, {kRows, pack_nibble_type<BlockQ4_1, BlockQ4_1x8, file_codes_4bit>,
                       walk_packed<Tile, BlockQ4_1x8>});
  set(GgmlType::Q5_1, {kRows, pack_nibble_type<BlockQ5_1, BlockQ5_1x8, file_codes_5bit>,
                       walk_packed<Tile, BlockQ5_1x8>});
  set(GgmlType::IQ4_NL, {kRows, pack_nibble_type<BlockIQ4_NL, BlockIQ4_NLx8, file_codes_4bit>,
                         walk_packed<Tile, BlockIQ4_NLx8>});
  set(GgmlType::IQ4_XS,
      {kRows, pack_iq4_xs8, walk_packed<Tile, BlockIQ4_XSx8>, iq4_xs8_group_bytes});
}

// Q4_K and Q6_K's 8-row layouts in t, on top of set_packed_8row (every table but AVX-512's,
// which packs them 16 rows).
template <class Tile>
void set_packed_kquant_8row(Kernels& t) {
  t.packed[kernel_slot(GgmlType::Q4_K)] = {kRows, pack_q4_k8, walk_packed<Tile, BlockQ4_Kx8>,
                                           q4_k8_group_bytes};
  t.packed[kernel_slot(GgmlType::Q6_K)] = {kRows, pack_q6_k8, walk_packed<Tile, BlockQ6_Kx8>,
                                           q6_k8_group_bytes};
}

}  // namespace

}  // namespace leapfrog::cpu::packed
