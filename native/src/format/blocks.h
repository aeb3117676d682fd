// Block layouts of GGUF's quantized types: facts of the file format, shared by every
// backend (a GPU backend reads the same structs).
#pragma once
#include <cstdint>

namespace leapfrog::format {

constexpr int kQK = 32;     // weights per Q8_0 / Q4_0 block
constexpr int kQK_K = 256;  // weights per K-quant super-block

struct BlockQ8_0 {
  uint16_t d;  // f16 scale
  int8_t qs[kQK];
};
static_assert(sizeof(BlockQ8_0) == 34);

// Q5_0: 32 weights, value = (5-bit q - 16) * d; the low 4 bits as in Q4_0 (element j low
// nibble, element j+16 high nibble of qs[j]), the fifth bit of element j in bit j of qh.
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ5_0) == 22);

struct BlockQ4_0 {
  uint16_t d;           // f16 scale; value = (nibble - 8) * d
  uint8_t qs[kQK / 2];  // element j in the low nibble of qs[j], element j+16 in the high one
};
static_assert(sizeof(BlockQ4_0) == 18);

struct BlockQ4_K {
  uint16_t d;             // f16 scale of the 6-bit sub-block scales
  uint16_t dmin;          // f16 scale of the 6-bit sub-block mins
  uint8_t scales[12];     // 8 scales + 8 mins, 6 bits each, packed (see scale_min_k4)
  uint8_t qs[kQK_K / 2];  // 64-weight chunks: low nibbles = sub-block 2c, high = 2c+1
};
static_assert(sizeof(BlockQ4_K) == 144);

struct BlockQ5_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qh[kQK_K / 8];  // fifth bit: bit 2c of qh[l] for sub-block 2c, bit 2c+1 for 2c+1
  uint8_t qs[kQK_K / 2];
};
static_assert(sizeof(BlockQ5_K) == 176);

struct BlockQ6_K {
  uint8_t ql[kQK_K / 2];      // low 4 bits
  uint8_t qh[kQK_K / 4];      // high 2 bits
  int8_t scales[kQK_K / 16];  // one int8 scale per 16 weights
  uint16_t d;                 // f16 super-block scale
};
static_assert(sizeof(BlockQ6_K) == 210);

// The j-th (0..7) 6-bit scale and min of a Q4_K/Q5_K super-block. Bytes 0..3 hold scales
// 0..3 in their low 6 bits, bytes 4..7 mins 0..3; scales/mins 4..7 keep their low 4 bits in
// bytes 8..11 and their top 2 bits in the spare top bits of bytes 0..7.
inline void scale_min_k4(int j, const uint8_t* q, uint8_t& sc, uint8_t& m) {
  if (j < 4) {
    sc = q[j] & 63;
    m = q[j + 4] & 63;
  } else {
    sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

}  // namespace leapfrog::format
