// Packing of Q8_0, Q4_0 and Q5_0 weights into the 8-row interleaved layouts of
// packed_blocks.h, and the AVX2 products over them (maddubs + madd as the int8 step).
#include <cstring>
#include <type_traits>

#include "backend/cpu/avx2_parts.h"
#include "backend/cpu/packed_blocks.h"

namespace leapfrog::cpu::avx2 {

namespace {

using namespace packed;

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

// Q4_0 / Q5_0 (Out = BlockQ4_0x8 / BlockQ5_0x8): scales, nibble vectors and, for Q5_0, the
// per-slice words of fifth bits.
template <class In, class Out, void (*Codes)(const In&, uint8_t*)>
void pack_nibble_type(const uint8_t* w, size_t ws, int64_t cols, uint8_t* dst) {
  Out* out = reinterpret_cast<Out*>(dst);
  uint8_t codes[kRows][kQK];
  for (int64_t b = 0; b < cols / kQK; ++b) {
    for (int r = 0; r < kRows; ++r) {
      const In& x = reinterpret_cast<const In*>(w + r * ws)[b];
      out[b].d[r] = x.d;
      Codes(x, codes[r]);
    }
    pack_nibbles(codes, out[b].qs);
    if constexpr (std::is_same_v<Out, BlockQ5_0x8>) {
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

struct MaddStep {
  static __m256i dot(__m256i acc, __m256i aw, __m256i av) {
    const __m256i pairs = _mm256_maddubs_epi16(aw, av);  // no saturation: |w| <= 128, |a| <= 127
    return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
  }
};

}  // namespace

void install_packed(Kernels& t) {
  t.packed[kernel_slot(GgmlType::Q8_0)] = {kRows, pack_q8_0x8, nullptr};
  t.packed[kernel_slot(GgmlType::Q4_0)] = {
      kRows, pack_nibble_type<BlockQ4_0, BlockQ4_0x8, file_codes_q4_0>, nullptr};
  t.packed[kernel_slot(GgmlType::Q5_0)] = {
      kRows, pack_nibble_type<BlockQ5_0, BlockQ5_0x8, file_codes_q5_0>, nullptr};
  set_packed_products<MaddStep>(t);
}

}  // namespace leapfrog::cpu::avx2
