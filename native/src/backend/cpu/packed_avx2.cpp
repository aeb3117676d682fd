// Packing of Q8_0, Q4_0 and Q5_0 weights into the 8-row interleaved layouts of
// packed_blocks.h, and the AVX2 products over them (maddubs + madd as the int8 step).
#include <cstring>

#include "backend/cpu/avx2_parts.h"
#include "backend/cpu/packed_blocks.h"

namespace leapfrog::cpu::avx2 {

namespace {

using namespace packed;

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

struct MaddStep {
  static __m256i dot(__m256i acc, __m256i aw, __m256i av) {
    const __m256i pairs = _mm256_maddubs_epi16(aw, av);  // no saturation: |w| <= 128, |a| <= 127
    return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
  }
};

}  // namespace

void install_packed(Kernels& t) {
  t.packed[kernel_slot(GgmlType::Q8_0)] = {kRows, pack_q8_0x8, gemm_packed<MaddStep, BlockQ8_0x8>};
  t.packed[kernel_slot(GgmlType::Q4_0)] = {kRows, pack_q4_0x8, gemm_packed<MaddStep, BlockQ4_0x8>};
  t.packed[kernel_slot(GgmlType::Q5_0)] = {kRows, pack_q5_0x8, gemm_packed<MaddStep, BlockQ5_0x8>};
}

}  // namespace leapfrog::cpu::avx2
