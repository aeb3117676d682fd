// Batched matrix products must give, row for row, bit-identical results to one-token
// products: speculative decoding verifies a draft in one batched pass and accepts tokens
// by exact match against what one-token decoding would have produced. Checked for every
// weight type, every instruction set this CPU runs, 1..3 threads, batch sizes that hit
// every tile shape and remainder, and for matmul_multi against separate matmul calls.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/kernels.h"
#include "format/fp16.h"
#include "host_ptr.h"
#include "random_weights.h"
#include "test_harness.h"

using namespace leapfrog;
using namespace leapfrog::format;
using namespace leapfrog::cpu;
using lftest::kTypes;
using lftest::random_weights;
using lftest::tname;

namespace {

// The first row of the batched product y (n rows) that differs in any bit from the
// one-row product of the same input, or -1.
int first_row_unlike_single(CpuBackend& be, const WeightView& w, const std::vector<float>& x, int n,
                            const std::vector<float>& y) {
  std::vector<float> y1(w.rows);
  for (int i = 0; i < n; ++i) {
    be.matmul(w, x.data() + size_t(i) * w.cols, 1, y1.data());
    if (std::memcmp(y1.data(), y.data() + size_t(i) * w.rows, w.rows * sizeof(float)) != 0) {
      return i;
    }
  }
  return -1;
}

}  // namespace

TEST(batched_rows_bit_identical_to_single_rows) {
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0, 1);
  const int rows = 43, cols = 768;  // rows not a multiple of any tile
  for (Isa isa : runnable_isas()) {
    for (int threads : {1, 3}) {
      CpuBackend be({.threads = threads, .isa = isa});
      for (GgmlType t : kTypes) {
        auto wb = random_weights(t, rows, cols, rng);
        WeightView w{t, wb.data(), rows, cols, ggml_row_bytes(t, cols)};
        for (int n : {2, 3, 4, 5, 7, 8, 16, 17, 33, 64, 70}) {
          std::vector<float> x(size_t(n) * cols), y(size_t(n) * rows);
          for (auto& v : x) v = nd(rng);
          be.matmul(w, x.data(), n, y.data());
          if (const int i = first_row_unlike_single(be, w, x, n, y); i >= 0) {
            throw lftest::FailTest{
                tname(t) + " " + isa_name(isa) + " threads=" + std::to_string(threads) +
                " n=" + std::to_string(n) + " row " + std::to_string(i) + " differs from n=1"};
          }
        }
      }
    }
  }
}

TEST(dot_equals_gemm_bit_for_bit) {
  std::mt19937 rng(9);
  std::normal_distribution<float> nd(0, 1);
  const int cols = 512;
  for (Isa isa : runnable_isas()) {
    const Kernels& k = kernels(isa);
    for (GgmlType t : kTypes) {
      const int slot = kernel_slot(t);
      auto wb = random_weights(t, 5, cols, rng);
      const ActFormat f = act_format_for(t);
      const size_t arb = act_row_bytes(f, cols);
      std::vector<float> x(cols);
      for (auto& v : x) v = nd(rng);
      std::vector<uint8_t> act(arb);
      k.quantize[int(f)](x.data(), act.data(), cols);
      float y[5];
      k.gemm[slot](wb.data(), ggml_row_bytes(t, cols), 5, act.data(), arb, 1, y, 5, cols);
      for (int r = 0; r < 5; ++r) {
        const float d = k.dot[slot](wb.data() + r * ggml_row_bytes(t, cols), act.data(), cols);
        if (std::memcmp(&d, &y[r], 4) != 0) {
          throw lftest::FailTest{tname(t) + " " + isa_name(isa) + ": dot and gemm differ"};
        }
      }
    }
  }
}

TEST(matmul_multi_equals_separate_matmuls) {
  std::mt19937 rng(13);
  std::normal_distribution<float> nd(0, 1);
  const int cols = 512;
  for (Isa isa : runnable_isas()) {
    CpuBackend be({.threads = 2, .isa = isa});
    // Same input format (Q/K/V of one type), and mixed formats (falls back per weight).
    const std::vector<std::vector<GgmlType>> sets = {
        {GgmlType::Q8_0, GgmlType::Q8_0, GgmlType::Q4_0},
        {GgmlType::Q4_K, GgmlType::Q6_K},
        {GgmlType::Q4_K, GgmlType::Q8_0, GgmlType::F16},
        {GgmlType::Q4_1, GgmlType::Q5_1, GgmlType::IQ4_NL}};
    for (const auto& set : sets) {
      const int rows[3] = {64, 19, 37};
      std::vector<std::vector<uint8_t>> bytes;
      std::vector<WeightView> ws;
      for (size_t j = 0; j < set.size(); ++j) {
        bytes.push_back(random_weights(set[j], rows[j], cols, rng));
      }
      for (size_t j = 0; j < set.size(); ++j) {
        ws.push_back({set[j], bytes[j].data(), rows[j], cols, ggml_row_bytes(set[j], cols)});
      }
      for (int n : {1, 6, 32}) {
        std::vector<float> x(size_t(n) * cols);
        for (auto& v : x) v = nd(rng);
        std::vector<std::vector<float>> y(set.size()), ref(set.size());
        std::vector<const WeightView*> wp;
        std::vector<DevicePtr<float>> yp;
        for (size_t j = 0; j < set.size(); ++j) {
          y[j].resize(size_t(n) * rows[j]);
          ref[j].resize(size_t(n) * rows[j]);
          be.matmul(ws[j], x.data(), n, ref[j].data());
          wp.push_back(&ws[j]);
          yp.push_back(dev(y[j].data()));
        }
        be.matmul_multi(wp.data(), yp.data(), int(set.size()), dev(x.data()), n);
        for (size_t j = 0; j < set.size(); ++j) CHECK(y[j] == ref[j]);
      }
    }
  }
}

// Weights the backend rearranges for its kernels (Backend::pack_weight) give the same
// products as the file's layout up to float rounding order, and batched rows stay
// bit-identical to one-row products.
TEST(packed_weights_match_file_layout_and_batches) {
  std::mt19937 rng(17);
  std::normal_distribution<float> nd(0, 1);
  // cols: five K-quant super-blocks, so the walk over the inputs takes more than one chunk.
  const int rows = 48, cols = 1280;
  int packed_types = 0;
  for (Isa isa : runnable_isas()) {
    for (int threads : {1, 3}) {
      CpuBackend be({.threads = threads, .isa = isa});
      for (GgmlType t : kTypes) {
        auto wb = random_weights(t, rows, cols, rng);
        WeightView plain{t, wb.data(), rows, cols, ggml_row_bytes(t, cols)};
        auto packed_mem = be.pack_weight(plain);
        if (!packed_mem) continue;
        ++packed_types;
        WeightView packed = plain;
        packed.packed = packed_mem->as<uint8_t>().get();
        const std::string what =
            tname(t) + " " + isa_name(isa) + " threads=" + std::to_string(threads);
        for (int n : {1, 2, 3, 4, 5, 8, 16, 17, 33, 64, 70}) {
          std::vector<float> x(size_t(n) * cols), y(size_t(n) * rows), ref(y);
          for (auto& v : x) v = nd(rng);
          be.matmul(packed, x.data(), n, y.data());
          be.matmul(plain, x.data(), n, ref.data());
          float scale = 0;
          for (float v : ref) scale = std::max(scale, std::fabs(v));
          for (size_t k = 0; k < y.size(); ++k) {
            if (!(std::fabs(y[k] - ref[k]) <= 1e-5f * scale)) {
              throw lftest::FailTest{what + " n=" + std::to_string(n) + ": packed " +
                                     std::to_string(y[k]) + " vs file layout " +
                                     std::to_string(ref[k])};
            }
          }
          if (const int i = first_row_unlike_single(be, packed, x, n, y); i >= 0) {
            throw lftest::FailTest{what + " n=" + std::to_string(n) + " row " + std::to_string(i) +
                                   " differs from n=1 (packed)"};
          }
        }
      }
    }
  }
  if (packed_types == 0) SKIP("no instruction set here packs any weight type");
}

// The loops over runnable_isas() cover only the levels this CPU has: name the others, so a
// run on a machine without them says what it did not prove.
// Every instruction set's packed product gives the same bits (exact integer sums, the same
// float steps), whatever its layout (8 rows on AVX2, 16 on AVX-512). Q6_K's AVX-512 tile
// scales its sub-blocks in floats, the 8-row tiles (AVX2, AVX-VNNI) in exact integers: its
// 8-row levels are compared with each other only.
TEST(packed_products_identical_across_instruction_sets) {
  std::mt19937 rng(23);
  std::normal_distribution<float> nd(0, 1);
  const int rows = 64, cols = 512;
  int packing_levels = 0;
  for (Isa isa : runnable_isas()) {
    CpuBackend be({.threads = 1, .isa = isa});
    std::vector<uint8_t> one(ggml_row_bytes(GgmlType::Q8_0, cols) * rows);
    if (be.pack_weight(
            {GgmlType::Q8_0, one.data(), rows, cols, ggml_row_bytes(GgmlType::Q8_0, cols)}))
      ++packing_levels;
  }
  // With one packing level there is nothing to compare: say so rather than pass.
  if (packing_levels < 2) SKIP("fewer than two instruction sets with packed products here");
  for (GgmlType t : {GgmlType::Q8_0, GgmlType::Q4_0, GgmlType::Q5_0, GgmlType::Q4_1, GgmlType::Q5_1,
                     GgmlType::IQ4_NL, GgmlType::IQ4_XS, GgmlType::Q4_K, GgmlType::Q6_K}) {
    auto wb = random_weights(t, rows, cols, rng);
    const WeightView plain{t, wb.data(), rows, cols, ggml_row_bytes(t, cols)};
    for (int n : {1, 3, 16, 33}) {
      std::vector<float> x(size_t(n) * cols);
      for (auto& v : x) v = nd(rng);
      std::vector<float> first;
      std::string first_isa;
      for (Isa isa : runnable_isas()) {
        if (t == GgmlType::Q6_K && isa == Isa::Avx512) continue;
        CpuBackend be({.threads = 2, .isa = isa});
        auto mem = be.pack_weight(plain);
        if (!mem) continue;
        WeightView w = plain;
        w.packed = mem->as<uint8_t>().get();
        std::vector<float> y(size_t(n) * rows);
        be.matmul(w, x.data(), n, y.data());
        if (first.empty()) {
          first = y, first_isa = isa_name(isa);
        } else if (std::memcmp(first.data(), y.data(), y.size() * sizeof(float)) != 0) {
          throw lftest::FailTest{tname(t) + " n=" + std::to_string(n) + ": " + isa_name(isa) +
                                 " differs from " + first_isa};
        }
      }
    }
  }
}

TEST(instruction_sets_exercised_here) {
#if defined(__aarch64__)
  const Isa levels[] = {Isa::Neon, Isa::NeonDot, Isa::NeonI8mm};
#else
  const Isa levels[] = {Isa::Avx2, Isa::AvxVnni, Isa::Avx512};
#endif
  const std::vector<Isa> run = runnable_isas();
  std::string missing;
  for (Isa isa : levels) {
    if (std::find(run.begin(), run.end(), isa) == run.end()) {
      missing += std::string(missing.empty() ? "" : ", ") + isa_name(isa);
    } else {
      CHECK(kernels(isa).isa == isa);
    }
  }
  if (!missing.empty()) {
    SKIP("not run on this CPU (or lowered by LEAPFROG_CPU_ISA): " + missing + " kernels");
  }
}

TEST_MAIN()
