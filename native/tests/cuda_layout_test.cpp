// The CUDA backend's weight layout (backend/cuda/wlayout.h), checked on the host, on every
// machine (no GPU needed): every weight of every quantized type, repacked and read back
// through the same fragment and scale decoding the kernels use, equals the reference
// dequantization (format/dequant.h) bit for bit; padding rows and inputs read as zeros.
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backend/cuda/wlayout.h"
#include "format/dequant.h"
#include "random_weights.h"
#include "test_harness.h"

using namespace leapfrog;
using namespace leapfrog::cuda;

namespace {

uint32_t word_at(const uint8_t* p) {
  uint32_t w;
  std::memcpy(&w, p, 4);
  return w;
}

template <QKind K>
void check_kind(GgmlType t, int rows, int cols) {
  std::mt19937 rng(11 + int(t) + rows + cols);
  const auto bytes = lftest::random_weights(t, rows, cols, rng);
  const size_t rb = ggml_row_bytes(t, cols);
  QLayout L;
  const auto packed = repack_host(K, bytes.data(), rows, cols, rb, &L);
  CHECK_EQ(L.tiles, (rows + 15) / 16);
  CHECK_EQ(L.groups, (cols + 255) / 256);

  std::vector<float> ref(size_t(rows) * cols);
  for (int r = 0; r < rows; ++r)
    format::dequantize_row(t, bytes.data() + r * rb, &ref[size_t(r) * cols], cols);

  const PlaneSizes ps = plane_sizes(K);
  size_t checked = 0;
  for (int64_t tile = 0; tile < L.tiles; ++tile) {
    for (int64_t g = 0; g < L.groups; ++g) {
      const size_t c = size_t(tile * L.groups + g);
      for (int lane = 0; lane < 32; ++lane) {
        const int gid = lane / 4, tq = lane % 4;
        uint32_t q8[32] = {}, q4[16] = {}, h1[4] = {}, h2[8] = {};
        for (int i = 0; i < 32 && ps.q8; ++i)
          q8[i] = word_at(packed.data() + L.off_q8 + c * ps.q8 + lane * 128 + 4 * i);
        for (int i = 0; i < 16 && ps.q4; ++i)
          q4[i] = word_at(packed.data() + L.off_q4 + c * ps.q4 + lane * 64 + 4 * i);
        for (int i = 0; i < 4 && ps.hi1; ++i)
          h1[i] = word_at(packed.data() + L.off_hi1 + c * ps.hi1 + lane * 16 + 4 * i);
        for (int i = 0; i < 8 && ps.hi2; ++i)
          h2[i] = word_at(packed.data() + L.off_hi2 + c * ps.hi2 + lane * 32 + 4 * i);
        // Scales of the lane's two rows.
        float dsc[2][16], dm[2][16];
        for (int half = 0; half < 2; ++half) {
          const int rloc = gid + 8 * half;
          uint32_t sc[4];
          for (int i = 0; i < 4; ++i)
            sc[i] = word_at(packed.data() + L.off_sc + c * ps.sc + rloc * 16 + 4 * i);
          // The row's d-plane bytes (ps.d / 16 of them), as little-endian words.
          uint8_t dbytes[16] = {};
          const size_t per_row = ps.d / 16;
          std::memcpy(dbytes, packed.data() + L.off_d + c * ps.d + rloc * per_row, per_row);
          uint32_t dp[4];
          for (int i = 0; i < 4; ++i) dp[i] = word_at(dbytes + 4 * i);
          step_scales<K>(sc, dp, dsc[half], dm[half]);
        }
        for (int s = 0; s < kSteps; ++s) {
          for (int i = 0; i < 4; ++i) {
            const uint32_t w = frag_word<K>(q8, q4, h1, h2, s, i);
            const int half = i & 1;
            const int64_t row = tile * 16 + gid + 8 * half;
            for (int b = 0; b < 4; ++b) {
              const int64_t k = g * 256 + 32 * s + 16 * (i >> 1) + 4 * tq + b;
              const int8_t code = static_cast<int8_t>((w >> (8 * b)) & 0xFF);
              float v;
              const int j16 = k % 256 / 16;
              if constexpr (K == QKind::Q4_K || K == QKind::Q5_K) {
                v = dsc[half][s] * code - dm[half][s];
              } else if constexpr (K == QKind::Q2_K) {
                v = dsc[half][j16] * code - dm[half][j16];
              } else if constexpr (K == QKind::Q4_1 || K == QKind::Q5_1) {
                v = code * dsc[half][s] + dm[half][s];
              } else if constexpr (K == QKind::Q6_K || K == QKind::Q3_K) {
                v = dsc[half][j16] * code;
              } else {
                v = code * dsc[half][s];
              }
              // Kinds whose zero code is not the value 0 (an offset or a level table).
              constexpr bool kOffsetCodes = K == QKind::Q4_0 || K == QKind::Q5_0 ||
                                            K == QKind::Q6_K || K == QKind::Q3_K ||
                                            K == QKind::IQ4_NL || K == QKind::IQ4_XS;
              if (row >= rows || k >= cols) {
                if (code != 0 && !kOffsetCodes) {
                  throw lftest::FailTest{"padding code not zero"};
                }
                if (v != 0) throw lftest::FailTest{"padding value not zero"};
                continue;
              }
              const float want = ref[size_t(row) * cols + k];
              if (std::memcmp(&v, &want, 4) != 0 && !(v == 0 && want == 0)) {
                throw lftest::FailTest{lftest::tname(t) + ": row " + std::to_string(row) +
                                       " input " + std::to_string(k) + ": " + std::to_string(v) +
                                       " vs " + std::to_string(want)};
              }
              ++checked;
            }
          }
        }
      }
    }
  }
  CHECK_EQ(checked, size_t(rows) * cols);
}

}  // namespace

TEST(q8_0_layout_round_trip) { check_kind<QKind::Q8_0>(GgmlType::Q8_0, 40, 352); }
TEST(q4_0_layout_round_trip) { check_kind<QKind::Q4_0>(GgmlType::Q4_0, 40, 352); }
TEST(q5_0_layout_round_trip) { check_kind<QKind::Q5_0>(GgmlType::Q5_0, 33, 896); }
TEST(q4_k_layout_round_trip) { check_kind<QKind::Q4_K>(GgmlType::Q4_K, 40, 512); }
TEST(q5_k_layout_round_trip) { check_kind<QKind::Q5_K>(GgmlType::Q5_K, 17, 768); }
TEST(q6_k_layout_round_trip) { check_kind<QKind::Q6_K>(GgmlType::Q6_K, 48, 512); }
TEST(q4_1_layout_round_trip) { check_kind<QKind::Q4_1>(GgmlType::Q4_1, 40, 352); }
TEST(q5_1_layout_round_trip) { check_kind<QKind::Q5_1>(GgmlType::Q5_1, 33, 896); }
TEST(iq4_nl_layout_round_trip) { check_kind<QKind::IQ4_NL>(GgmlType::IQ4_NL, 40, 352); }
TEST(q2_k_layout_round_trip) { check_kind<QKind::Q2_K>(GgmlType::Q2_K, 40, 512); }
TEST(q3_k_layout_round_trip) { check_kind<QKind::Q3_K>(GgmlType::Q3_K, 17, 768); }
TEST(iq4_xs_layout_round_trip) { check_kind<QKind::IQ4_XS>(GgmlType::IQ4_XS, 48, 512); }

TEST_MAIN()
