// The AVX2 table's Q8_0, Q4_0, Q5_0, Q4_1, Q5_1, IQ4_NL, IQ4_XS and Q4_K products over the 8-row
// interleaved layouts (packed_layouts.h), with maddubs + madd as the int8 step.
#include "backend/cpu/avx2_parts.h"
#include "backend/cpu/packed_blocks.h"

namespace leapfrog::cpu::avx2 {

namespace {

using namespace packed;

struct MaddStep {
  static __m256i dot(__m256i acc, __m256i aw, __m256i av) {
    const __m256i pairs = _mm256_maddubs_epi16(aw, av);  // no saturation: |w| <= 128, |a| <= 127
    return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
  }
  // The same with each 4-input sum times the int16 in both halves of its lane of sc16 (|w|,
  // |a| <= 127: a pair is at most 32258, times |sc| <= 32 it stays within int32).
  static __m256i dot_scaled(__m256i acc, __m256i aw, __m256i av, __m256i sc16) {
    return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(aw, av), sc16));
  }
};

}  // namespace

void install_packed(Kernels& t) {
  set_packed_8row<PackedTile<MaddStep>>(t);
  set_packed_kquant_8row<PackedTile<MaddStep>>(t);
}

}  // namespace leapfrog::cpu::avx2
