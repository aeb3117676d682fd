// Block layouts of GGUF's quantized types: facts of the file format, shared by every
// backend (a GPU backend reads the same structs).
#pragma once
#include <cstdint>

// The format's helpers compile for a GPU too where a CUDA compiler reads this header (the
// CUDA backend's layout code unpacks scales with these same functions).
#ifdef __CUDACC__
#define LF_FORMAT_FN __host__ __device__ inline
#else
#define LF_FORMAT_FN inline
#endif

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

// Q4_1: 32 weights, value = nibble * d + m (nibbles arranged as in Q4_0).
struct BlockQ4_1 {
  uint16_t d;  // f16 scale
  uint16_t m;  // f16 offset (the block's minimum)
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ4_1) == 20);

// Q5_1: 32 weights, value = 5-bit q * d + m; bits arranged as in Q5_0.
struct BlockQ5_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ5_1) == 24);

// IQ4_NL: 32 weights, value = kIq4NlValues[nibble] * d (nibbles arranged as in Q4_0).
struct BlockIQ4_NL {
  uint16_t d;
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockIQ4_NL) == 18);

// The 16 non-linear levels IQ4_NL and IQ4_XS nibbles index (GGUF's kvalues_iq4nl).
inline constexpr int8_t kIq4NlValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                            1,    13,   25,  38,  53,  69,  89,  113};

// Q2_K: 16 sub-blocks of 16 weights, value = d * (scale & 15) * q - dmin * (scale >> 4),
// q the 2-bit code. qs: 128-weight halves of 32 bytes; within one, bits 2k..2k+1 of byte l
// hold weight 32k + l (l < 32), so sub-block 2k + (l >= 16) of the half.
struct BlockQ2_K {
  uint8_t scales[kQK_K / 16];  // low nibble: scale, high nibble: min
  uint8_t qs[kQK_K / 4];
  uint16_t d;     // f16 scale of the scales
  uint16_t dmin;  // f16 scale of the mins
};
static_assert(sizeof(BlockQ2_K) == 84);

// Q3_K: 16 sub-blocks of 16 weights, value = d * (6-bit scale - 32) * (q - 4 * !high), q the
// 2-bit code laid out as Q2_K's and `high` bit k' (the 32-weight run's index 0..7) of
// hmask[l] for weight 32 k' + l. The scales are packed as q3k_scales unpacks them.
struct BlockQ3_K {
  uint8_t hmask[kQK_K / 8];
  uint8_t qs[kQK_K / 4];
  uint8_t scales[12];
  uint16_t d;
};
static_assert(sizeof(BlockQ3_K) == 110);

// IQ4_XS: 8 sub-blocks of 32 weights, value = d * (6-bit scale - 32) * kIq4NlValues[nibble];
// sub-block j's scale keeps its low 4 bits in nibble j % 2 of scales_l[j / 2] and its top 2
// bits in bits 2j..2j+1 of scales_h; each sub-block's 16 bytes of qs are laid out as IQ4_NL's.
struct BlockIQ4_XS {
  uint16_t d;
  uint16_t scales_h;
  uint8_t scales_l[kQK_K / 64];
  uint8_t qs[kQK_K / 2];
};
static_assert(sizeof(BlockIQ4_XS) == 136);

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
LF_FORMAT_FN void scale_min_k4(int j, const uint8_t* q, uint8_t& sc, uint8_t& m) {
  if (j < 4) {
    sc = q[j] & 63;
    m = q[j + 4] & 63;
  } else {
    sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

// The 16 six-bit scales of a Q3_K super-block, still offset by 32: bytes 0..7 hold the low
// 4 bits of scales 0..7 (low nibble) and 8..15 (high nibble); bytes 8..11 the top 2 bits,
// scale j's in bits 2 (j / 4) .. +1 of byte 8 + j % 4.
LF_FORMAT_FN void q3k_scales(const uint8_t* q, int8_t out[16]) {
  for (int j = 0; j < 16; ++j) {
    const int low = j < 8 ? q[j] & 0xF : q[j - 8] >> 4;
    const int high = (q[8 + j % 4] >> (2 * (j / 4))) & 3;
    out[j] = static_cast<int8_t>((low | (high << 4)) - 32);
  }
}

// The j-th (0..7) 6-bit scale of an IQ4_XS super-block, offset by 32.
LF_FORMAT_FN int iq4xs_scale(const BlockIQ4_XS& b, int j) {
  const int low = (b.scales_l[j / 2] >> (4 * (j % 2))) & 0xF;
  const int high = (b.scales_h >> (2 * j)) & 3;
  return (low | (high << 4)) - 32;
}

}  // namespace leapfrog::format
