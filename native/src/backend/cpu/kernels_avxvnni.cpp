// The AVX-VNNI table: AVX2 plus the 256-bit VEX int8 dot product (vpdpbusd) that Intel's
// client cores have had since Alder Lake, most of which lack AVX-512. It is the AVX2 table
// with the packed Q8_0/Q4_0/Q5_0/Q4_1/Q5_1/IQ4_NL/IQ4_XS products (packed_blocks.h) taking
// vpdpbusd as their int8 step: one instruction instead of maddubs + madd + add, and for the
// signed types the weights as unsigned codes w + 128, the offset taken off through the
// activations' sums (no sign moves; IQ4_XS keeps them). The integer sums are exact, so the
// results equal the AVX2 packed results bit for bit. The K-quant products stay AVX2's,
// packed Q4_K included (its tile adds a sub-block's maddubs in int16 lanes and scales them
// with one madd: no step of the instruction set's own).
#include "backend/cpu/kernels.h"
#include "backend/cpu/packed_blocks.h"

namespace leapfrog::cpu {

namespace {

using namespace packed;

struct AvxVnniStep {
  static constexpr bool kOffsetCodes = true;  // vpdpbusd does not saturate (packed_blocks.h)
  static __m256i dot(__m256i acc, __m256i aw, __m256i av) {
    return _mm256_dpbusd_avx_epi32(acc, aw, av);
  }
};

}  // namespace

const Kernels* kernels_avx_vnni() {
  static const Kernels k = [] {
    Kernels t = *kernels_avx2();
    t.isa = Isa::AvxVnni;
    set_packed_8row<PackedTile<AvxVnniStep>>(t);
    return t;
  }();
  return &k;
}

}  // namespace leapfrog::cpu
