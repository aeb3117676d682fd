// The AVX-VNNI table, built for an encoding of its two instructions: vpdpbusd (int8, 4 products
// per 32-bit lane) and vpdpwssd (int16, 2 per lane) on 256-bit vectors. The product encodes
// them with VEX (kernels_avxvnni.cpp: AVX-VNNI, Intel's client cores since Alder Lake); the
// same instructions in EVEX form (AVX512-VNNI with VL) compute the same lanes, which lets a
// test run this table's tiles on AVX-512 CPUs that lack the VEX forms (a Zen 4: every CI
// machine seen), tests/avxvnni_tiles_test.cpp. Include only from files built with AVX2 and
// one of the two encodings.
#pragma once
#include "backend/cpu/kernels.h"
#include "backend/cpu/packed_blocks.h"

namespace leapfrog::cpu {

namespace {

// Enc::dpbusd(acc, u8, s8) and Enc::dpwssd(acc, s16, s16).
template <class Enc>
struct VnniStep {
  static constexpr bool kOffsetCodes = true;  // vpdpbusd does not saturate (packed_blocks.h)
  static __m256i dot(__m256i acc, __m256i aw, __m256i av) { return Enc::dpbusd(acc, aw, av); }
  // acc + the 16-bit pairs of a times those of b, per 32-bit lane (packed_blocks.h: word_dot).
  static __m256i dot_words(__m256i acc, __m256i a, __m256i b) { return Enc::dpwssd(acc, a, b); }
};

// The AVX2 table with the packed products (Q8_0, Q4_0, Q5_0, Q4_1, Q5_1, IQ4_NL, IQ4_XS; Q4_K,
// Q6_K) on the VNNI step.
template <class Enc>
Kernels avxvnni_table() {
  Kernels t = *kernels_avx2();
  t.isa = Isa::AvxVnni;
  packed::set_packed_8row<packed::PackedTile<VnniStep<Enc>>>(t);
  packed::set_packed_kquant_8row<packed::PackedTile<VnniStep<Enc>>>(t);
  return t;
}

}  // namespace

}  // namespace leapfrog::cpu
