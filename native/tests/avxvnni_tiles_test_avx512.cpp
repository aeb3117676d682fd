// Built with AVX-512 (F, BW, VL, VNNI) for avxvnni_tiles_test: the AVX-VNNI table's tiles with
// vpdpbusd / vpdpwssd in their EVEX form, which AVX-512 CPUs without AVX-VNNI's VEX form run.
// Nothing here may be shared with the test's portable code (no templates of its own outside
// the anonymous namespaces it includes; checked by cmake/check_isa_objects.cmake).
#include <immintrin.h>

#include "backend/cpu/avxvnni_table.h"

namespace lftest {

namespace {

struct EvexEncoding {
  static __m256i dpbusd(__m256i acc, __m256i u8, __m256i s8) {
    return _mm256_dpbusd_epi32(acc, u8, s8);
  }
  static __m256i dpwssd(__m256i acc, __m256i a, __m256i b) {
    return _mm256_dpwssd_epi32(acc, a, b);
  }
};

}  // namespace

const leapfrog::cpu::Kernels& avxvnni_table_evex() {
  static const leapfrog::cpu::Kernels k = leapfrog::cpu::avxvnni_table<EvexEncoding>();
  return k;
}

}  // namespace lftest
