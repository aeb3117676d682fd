// The 8-bit activation blocks the CPU's integer dot products consume, and helpers over the
// file's blocks (format/blocks.h) that the instruction-set files share.
#pragma once
#include <cstdint>
#include <cstring>

#include "format/blocks.h"
#include "format/fp16.h"

namespace leapfrog::cpu {

using namespace leapfrog::format;

// Activations quantized per 32 values, for Q8_0 and Q4_0 weights. The scale is rounded
// through f16 like llama.cpp's block_q8_0, so both engines see the same activations.
struct ActQ8_0 {
  float d;
  int32_t sum;  // of qs: products over weights stored with an offset take it off (AVX-512)
  int8_t qs[kQK];
};

// Activations quantized per 256 values, for K-quant weights (llama.cpp's Q8_K), with the
// sums of each 16 values so the weights' min terms cost one multiply per sub-block. The
// quants come first and the block is padded to 32 bytes so vector loads stay aligned.
struct alignas(32) ActQ8_K {
  int8_t qs[kQK_K];
  int16_t bsums[kQK_K / 16];
  float d;
};
static_assert(sizeof(ActQ8_K) == 320);

// Pieces of the block rules that every instruction set's kernels share. Internal linkage:
// files built for different instruction sets include this.
namespace {

// The raw codes (4-bit: nibble; 5-bit: the code with its fifth bit) of a file block's 32
// elements, in order: what the packers (packed_layouts.h, packed_avx512.cpp) rearrange.
// 4-bit: Q4_0, Q4_1, IQ4_NL; 5-bit: Q5_0, Q5_1 (the same quants and bits, beside other scales).
// (nibble_codes: the 16 bytes of any 32-value run in that layout, IQ4_XS's sub-blocks too.)
inline void nibble_codes(const uint8_t* qs, uint8_t* c) {
  for (int j = 0; j < 16; ++j) c[j] = qs[j] & 0xF, c[j + 16] = qs[j] >> 4;
}
template <class Block>
inline void file_codes_4bit(const Block& x, uint8_t* c) {
  nibble_codes(x.qs, c);
}
template <class Block>
inline void file_codes_5bit(const Block& x, uint8_t* c) {
  uint32_t qh;
  std::memcpy(&qh, x.qh, 4);
  file_codes_4bit(x, c);
  for (int j = 0; j < kQK; ++j) c[j] |= uint8_t((qh >> j) & 1) << 4;
}

// The 6-bit codes (0..63) of a Q6_K file super-block's 256 elements, in order (what the
// packers of packed_layouts.h and packed_kquant_avx512.cpp rearrange).
inline void codes_q6_k(const BlockQ6_K& x, uint8_t* q) {
  for (int h = 0; h < 2; ++h) {
    const uint8_t* ql = x.ql + 64 * h;
    const uint8_t* qh = x.qh + 32 * h;
    uint8_t* o = q + 128 * h;
    for (int l = 0; l < 32; ++l) {
      o[l] = uint8_t((ql[l] & 0xF) | (qh[l] & 3) << 4);
      o[l + 32] = uint8_t((ql[l + 32] & 0xF) | (qh[l] >> 2 & 3) << 4);
      o[l + 64] = uint8_t((ql[l] >> 4) | (qh[l] >> 4 & 3) << 4);
      o[l + 96] = uint8_t((ql[l + 32] >> 4) | (qh[l] >> 6 & 3) << 4);
    }
  }
}

// The x86 K-quant packers (packed_layouts.h: 8 rows; packed_kquant_avx512.cpp: 16), one
// group of Rows rows (row r at w + r * ws) at a time. Q4_K: per super-block the rows' f16
// scales and mins, the 6-bit sub-block scales and mins as bytes (sc[j][r], m[j][r]), and the
// file's quant chunks with slice s (4 inputs) of every row side by side (qs[c][s][4 r]). Q6_K:
// the scales, the int8 sub-block scales in pairs (sc[k][r][0..1] = scales 2k, 2k + 1), and
// per 16-input sub-block j three vectors: qs[j][t] holds slice t (t < 3) in the low 6 bits of
// each byte and bits 2t, 2t + 1 of slice 3 in the top two.
template <class Block, int Rows>
void pack_q4_k_rows(const uint8_t* w, size_t ws, int64_t cols, uint8_t* dst) {
  Block* out = reinterpret_cast<Block*>(dst);
  for (int64_t b = 0; b < cols / kQK_K; ++b) {
    Block& o = out[b];
    for (int r = 0; r < Rows; ++r) {
      const BlockQ4_K& x = reinterpret_cast<const BlockQ4_K*>(w + r * ws)[b];
      o.d[r] = x.d;
      o.dmin[r] = x.dmin;
      for (int j = 0; j < 8; ++j) format::scale_min_k4(j, x.scales, o.sc[j][r], o.m[j][r]);
      for (int c = 0; c < 4; ++c) {
        for (int s = 0; s < kQK / 4; ++s) std::memcpy(&o.qs[c][s][4 * r], x.qs + 32 * c + 4 * s, 4);
      }
    }
  }
}

template <class Block, int Rows>
void pack_q6_k_rows(const uint8_t* w, size_t ws, int64_t cols, uint8_t* dst) {
  Block* out = reinterpret_cast<Block*>(dst);
  uint8_t q[kQK_K];
  for (int64_t b = 0; b < cols / kQK_K; ++b) {
    Block& o = out[b];
    for (int r = 0; r < Rows; ++r) {
      const BlockQ6_K& x = reinterpret_cast<const BlockQ6_K*>(w + r * ws)[b];
      o.d[r] = x.d;
      for (int j = 0; j < 16; ++j) o.sc[j / 2][r][j % 2] = x.scales[j];
      codes_q6_k(x, q);
      for (int j = 0; j < 16; ++j) {
        for (int t = 0; t < 3; ++t) {
          for (int e = 0; e < 4; ++e) {
            const int s3 = q[16 * j + 12 + e] >> (2 * t) & 3;
            o.qs[j][t][4 * r + e] = uint8_t(q[16 * j + 4 * t + e] | s3 << 6);
          }
        }
      }
    }
  }
}

// Q4_1/Q5_1's min term needs the activation block's total: llama.cpp's Q8_1 activations carry
// s = d * sum(a) in f16, so it is formed from the Q8_0 block's scale and sum, rounded the same
// way (round to nearest even, as F16C's conversion), wherever a product uses it.
inline float q8_block_total(const ActQ8_0& a) {
  return f16_to_f32(f32_to_f16(a.d * static_cast<float>(a.sum)));
}

// Packed blocks (packed_layouts.h, packed_avx512.cpp) of the types with a min term (Q4_1,
// Q5_1: value = d q + m).
template <class Block>
constexpr bool kHasMin = requires(const Block& b) {
  b.m;
};

// Sets b.sum from b.qs (every Q8_0 quantizer ends with it).
inline void q8_0_set_sum(ActQ8_0& b) {
  int32_t s = 0;
  for (int j = 0; j < kQK; ++j) s += b.qs[j];
  b.sum = s;
}

// An all-zero block: scale, quants and sums zero.
inline void q8k_zero(ActQ8_K& y) {
  y.d = 0;
  for (int8_t& q : y.qs) q = 0;
  for (int16_t& s : y.bsums) s = 0;
}

// The fields Q4_K and Q5_K super-blocks share (b-th super-block of a row; kQ5: Q5_K).
struct K4Fields {
  const uint8_t* scales;
  const uint8_t* qs;
  uint16_t d, dmin;
};
template <bool kQ5>
inline K4Fields k4_fields(const uint8_t* row, int64_t b) {
  if constexpr (kQ5) {
    const BlockQ5_K& x = reinterpret_cast<const BlockQ5_K*>(row)[b];
    return {x.scales, x.qs, x.d, x.dmin};
  } else {
    const BlockQ4_K& x = reinterpret_cast<const BlockQ4_K*>(row)[b];
    return {x.scales, x.qs, x.d, x.dmin};
  }
}

// All 8 six-bit scales and 8 mins of a Q4_K/Q5_K super-block at once, as the bytes of
// out[0..2) (scales 0..7) and out[2..4) (mins 0..7): scale_min_k4 in word operations.
inline void k4_scales_mins(const uint8_t* scales, uint32_t out[4]) {
  uint32_t u[3];
  for (int i = 0; i < 3; ++i) {
    u[i] = uint32_t(scales[4 * i]) | uint32_t(scales[4 * i + 1]) << 8 |
           uint32_t(scales[4 * i + 2]) << 16 | uint32_t(scales[4 * i + 3]) << 24;
  }
  out[0] = u[0] & 0x3f3f3f3f;
  out[1] = (u[2] & 0x0f0f0f0f) | ((u[0] >> 2) & 0x30303030);
  out[2] = u[1] & 0x3f3f3f3f;
  out[3] = ((u[2] >> 4) & 0x0f0f0f0f) | ((u[1] >> 2) & 0x30303030);
}

// The first of x[0..256) whose magnitude is amax (> 0): it maps to -127, so ties between
// +m and -m go to whichever comes first, as in llama.cpp.
inline float q8k_first_of_magnitude(const float* x, float amax) {
  for (int j = 0; j < kQK_K; ++j) {
    if (x[j] == amax || x[j] == -amax) return x[j];
  }
  return amax;  // not reached for amax taken from x
}

}  // namespace

}  // namespace leapfrog::cpu
