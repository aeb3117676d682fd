// The AVX-VNNI table: AVX2 plus the 256-bit VEX int8 dot product (vpdpbusd) that Intel's
// client cores have had since Alder Lake, most of which lack AVX-512. It is the AVX2 table
// with the packed Q8_0/Q4_0/Q5_0/Q4_1/Q5_1/IQ4_NL/IQ4_XS products (packed_blocks.h) taking
// vpdpbusd as their int8 step: one instruction instead of maddubs + madd + add, and for the
// signed types the weights as unsigned codes w + 128, the offset taken off through the
// activations' sums (no sign moves; IQ4_XS keeps them). The packed Q4_K and Q6_K tiles scale
// their sub-block sums with the 16-bit vpdpwssd (and Q4_K adds its quads by vpdpbusd, not
// maddubs in int16 lanes). The integer sums are exact, so the results equal the AVX2 packed
// results bit for bit. Q5_K, and K-quant matrices whose rows are not whole packed groups, stay
// AVX2's. The table itself is built in avxvnni_table.h, shared with a test that runs it in
// the instructions' EVEX form.
#include "backend/cpu/avxvnni_table.h"

namespace leapfrog::cpu {

namespace {

struct VexEncoding {
  static __m256i dpbusd(__m256i acc, __m256i u8, __m256i s8) {
    return _mm256_dpbusd_avx_epi32(acc, u8, s8);
  }
  static __m256i dpwssd(__m256i acc, __m256i a, __m256i b) {
    return _mm256_dpwssd_avx_epi32(acc, a, b);
  }
};

}  // namespace

const Kernels* kernels_avx_vnni() {
  static const Kernels k = avxvnni_table<VexEncoding>();
  return &k;
}

}  // namespace leapfrog::cpu
