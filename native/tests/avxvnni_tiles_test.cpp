// The AVX-VNNI table's packed products on machines without AVX-VNNI: its tiles built with the
// EVEX form of vpdpbusd / vpdpwssd (avxvnni_tiles_test_avx512.cpp, the same table template as
// the product's VEX one: avxvnni_table.h) must give the AVX2 table's packed products bit for
// bit, for every packed type and batch size. Runs on AVX-512 CPUs (a Zen 4); where the CPU has
// AVX-VNNI itself, matmul_batch_test compares the real level too.
#include <cstring>
#include <random>
#include <vector>

#include "backend/cpu/kernels.h"
#include "random_weights.h"
#include "test_harness.h"

using leapfrog::ggml_row_bytes;
using leapfrog::GgmlType;
using leapfrog::cpu::Isa;
using leapfrog::cpu::Kernels;
using lftest::random_weights;
using lftest::tname;

#if defined(__x86_64__)
namespace lftest {
const Kernels& avxvnni_table_evex();
}

TEST(avxvnni_tiles_equal_avx2_bit_for_bit) {
  using namespace leapfrog::cpu;
  if (!cpu_supports(Isa::Avx512)) SKIP("no AVX-512 VNNI here to run the EVEX form of the tiles");
  const Kernels& vnni = lftest::avxvnni_table_evex();
  const Kernels& avx2 = *kernels_avx2();
  std::mt19937 rng(31);
  std::normal_distribution<float> nd(0, 1);
  const int rows = 64, cols = 512;
  for (GgmlType t : {GgmlType::Q8_0, GgmlType::Q4_0, GgmlType::Q5_0, GgmlType::Q4_1, GgmlType::Q5_1,
                     GgmlType::IQ4_NL, GgmlType::IQ4_XS, GgmlType::Q4_K, GgmlType::Q6_K}) {
    const int slot = kernel_slot(t);
    const Kernels::Packed& pv = vnni.packed[slot];
    const Kernels::Packed& pa = avx2.packed[slot];
    // One layout (packed_layouts.h), packed here by the AVX2 table for both.
    CHECK(pv.group == 8 && pa.group == 8 && pv.gemm != pa.gemm);
    auto wb = random_weights(t, rows, cols, rng);
    const size_t rb = ggml_row_bytes(t, cols);
    const size_t gb = pa.group_bytes ? pa.group_bytes(cols) : rb * pa.group;
    std::vector<uint8_t> packed(gb * (rows / pa.group));
    for (int g = 0; g < rows / pa.group; ++g)
      pa.pack(wb.data() + g * pa.group * rb, rb, cols, packed.data() + g * gb);
    const ActFormat fmt = act_format_for(t);
    const size_t arb = act_row_bytes(fmt, cols);
    // Normal activations, then every activation at +max or -max code (each row's sign its
    // own): the largest integer sums, where a quad or lane that overflowed would show.
    struct Case {
      int n;
      bool extreme;
    };
    for (const auto [n, extreme] :
         {Case{1, false}, Case{2, false}, Case{3, false}, Case{5, false}, Case{8, false},
          Case{16, false}, Case{33, false}, Case{70, false}, Case{1, true}, Case{16, true}}) {
      std::vector<float> x(size_t(n) * cols);
      for (int i = 0; i < n; ++i) {
        for (int k = 0; k < cols; ++k) x[i * cols + k] = extreme ? (i % 2 ? -1.f : 1.f) : nd(rng);
      }
      std::vector<uint8_t> act(arb * n);
      for (int i = 0; i < n; ++i)
        avx2.quantize[int(fmt)](x.data() + i * cols, act.data() + i * arb, cols);
      std::vector<float> yv(size_t(n) * rows), ya(yv.size());
      pv.gemm(packed.data(), gb, rows, act.data(), arb, n, yv.data(), rows, cols);
      pa.gemm(packed.data(), gb, rows, act.data(), arb, n, ya.data(), rows, cols);
      if (std::memcmp(yv.data(), ya.data(), yv.size() * sizeof(float)) != 0) {
        size_t k = 0;  // the first value whose bits differ
        while (std::memcmp(&yv[k], &ya[k], sizeof(float)) == 0) ++k;
        throw lftest::FailTest{tname(t) + (extreme ? " extreme" : "") + " n=" + std::to_string(n) +
                               " [" + std::to_string(k) + "]: AVX-VNNI (EVEX) " +
                               std::to_string(yv[k]) + " vs AVX2 " + std::to_string(ya[k])};
      }
    }
  }
}
#else
TEST(avxvnni_tiles_equal_avx2_bit_for_bit) { SKIP("x86-64 tiles: not built on this architecture"); }
#endif

TEST_MAIN()
