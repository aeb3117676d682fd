// The AVX-512 VNNI product over the 8-row packed layouts of packed_blocks.h: the same tile
// as AVX2's with vpdpbusd (on 256-bit registers, AVX512VL) as the int8 step, one
// instruction instead of maddubs + madd + add. Integer sums are exact either way, so this
// gives the AVX2 packed results bit for bit; the packing itself is AVX2's.
#include "backend/cpu/avx512_parts.h"
#include "backend/cpu/packed_blocks.h"

namespace leapfrog::cpu {

namespace {

using namespace packed;

struct VnniStep {
  static __m256i dot(__m256i acc, __m256i aw, __m256i av) {
    return _mm256_dpbusd_epi32(acc, aw, av);
  }
};

}  // namespace

void install_packed_vnni(Kernels& t) { set_packed_products<VnniStep>(t); }

}  // namespace leapfrog::cpu
