// CPU kernels: dequantization of hand-built blocks, scalar vs SIMD agreement, matmul against
// a naive reference, RoPE / attention / norms against naive references.
#if defined(__linux__)
#include <malloc.h>  // mallopt (glibc)
#endif
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_kv.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/quant_blocks.h"
#include "format/dequant.h"
#include "format/fp16.h"
#include "host_ptr.h"
#include "test_harness.h"

using namespace leapfrog;
using namespace leapfrog::format;
using namespace leapfrog::cpu;

namespace {

constexpr uint16_t kHalfOne = 0x3C00, kHalfHalf = 0x3800, kHalfTwo = 0x4000;

std::vector<float> deq(GgmlType t, const void* p, int n) {
  std::vector<float> y(n);
  dequantize_row(t, p, y.data(), n);
  return y;
}

// Packs 8 six-bit scales and mins the way Q4_K/Q5_K store them.
void pack_scales(const int sc[8], const int m[8], uint8_t out[12]) {
  for (int j = 0; j < 4; ++j) {
    out[j] = static_cast<uint8_t>((sc[j] & 63) | ((sc[j + 4] >> 4) << 6));
    out[j + 4] = static_cast<uint8_t>((m[j] & 63) | ((m[j + 4] >> 4) << 6));
    out[j + 8] = static_cast<uint8_t>((sc[j + 4] & 0xF) | ((m[j + 4] & 0xF) << 4));
  }
}

// Random bytes with sane f16 scales at the right offsets: a valid block of any type.
std::vector<uint8_t> random_row(GgmlType t, int n, std::mt19937& rng) {
  const size_t bytes = ggml_row_bytes(t, n);
  std::vector<uint8_t> row(bytes);
  for (auto& b : row) b = static_cast<uint8_t>(rng());
  std::uniform_real_distribution<float> u(-1, 1);
  auto put_half = [&](size_t off, float v) {
    uint16_t h = f32_to_f16(v);
    std::memcpy(row.data() + off, &h, 2);
  };
  switch (t) {
    case GgmlType::F32:
      for (int i = 0; i < n; ++i) {
        float v = u(rng);
        std::memcpy(row.data() + 4 * i, &v, 4);
      }
      break;
    case GgmlType::F16:
      for (int i = 0; i < n; ++i) put_half(2 * i, u(rng));
      break;
    case GgmlType::BF16:
      for (int i = 0; i < n; ++i) {
        uint16_t h = f32_to_bf16(u(rng));
        std::memcpy(row.data() + 2 * i, &h, 2);
      }
      break;
    case GgmlType::Q8_0:
      for (int b = 0; b < n / 32; ++b) put_half(34 * b, 0.01f * (1 + b % 3));
      break;
    case GgmlType::Q4_0:
      for (int b = 0; b < n / 32; ++b) put_half(18 * b, 0.1f * (1 + b % 3));
      break;
    case GgmlType::Q5_0:
      for (int b = 0; b < n / 32; ++b) put_half(22 * b, 0.05f * (1 + b % 3));
      break;
    case GgmlType::Q4_K:
      for (int b = 0; b < n / 256; ++b) put_half(144 * b, 0.002f), put_half(144 * b + 2, 0.001f);
      break;
    case GgmlType::Q5_K:
      for (int b = 0; b < n / 256; ++b) put_half(176 * b, 0.001f), put_half(176 * b + 2, 0.001f);
      break;
    case GgmlType::Q6_K:
      for (int b = 0; b < n / 256; ++b) put_half(210 * b + 208, 0.0005f);
      break;
    case GgmlType::Q4_1:
      for (int b = 0; b < n / 32; ++b)
        put_half(20 * b, 0.1f * (1 + b % 3)), put_half(20 * b + 2, -0.5f);
      break;
    case GgmlType::Q5_1:
      for (int b = 0; b < n / 32; ++b)
        put_half(24 * b, 0.05f * (1 + b % 3)), put_half(24 * b + 2, -0.7f);
      break;
    case GgmlType::IQ4_NL:
      for (int b = 0; b < n / 32; ++b) put_half(18 * b, 0.006f * (1 + b % 3));
      break;
    case GgmlType::Q2_K:
      for (int b = 0; b < n / 256; ++b) put_half(84 * b + 80, 0.02f), put_half(84 * b + 82, 0.01f);
      break;
    case GgmlType::Q3_K:
      for (int b = 0; b < n / 256; ++b) put_half(110 * b + 108, 0.005f);
      break;
    case GgmlType::IQ4_XS:
      for (int b = 0; b < n / 256; ++b) put_half(136 * b, 0.0002f);
      break;
    default:
      break;
  }
  return row;
}

const GgmlType kAllTypes[] = {GgmlType::F32,  GgmlType::F16,    GgmlType::BF16,  GgmlType::Q8_0,
                              GgmlType::Q4_0, GgmlType::Q5_0,   GgmlType::Q4_K,  GgmlType::Q5_K,
                              GgmlType::Q6_K, GgmlType::Q4_1,   GgmlType::Q5_1,  GgmlType::Q2_K,
                              GgmlType::Q3_K, GgmlType::IQ4_NL, GgmlType::IQ4_XS};

std::string tname(GgmlType t) { return std::string(ggml_type_traits(uint32_t(t))->name); }

void check_close(const std::vector<float>& got, const std::vector<float>& want, double rel,
                 const std::string& what) {
  double num = 0, den = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    num += (got[i] - want[i]) * double(got[i] - want[i]);
    den += double(want[i]) * want[i];
  }
  const double err = std::sqrt(num / std::max(den, 1e-30));
  if (!(err <= rel)) {
    throw lftest::FailTest{what + ": relative error " + std::to_string(err) + " > " +
                           std::to_string(rel)};
  }
}

}  // namespace

TEST(fp16_conversions_round_trip_and_round_to_nearest_even) {
  CHECK_EQ(f16_to_f32(0x3C00), 1.0f);
  CHECK_EQ(f16_to_f32(0xC000), -2.0f);
  CHECK_EQ(f16_to_f32(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  CHECK_EQ(f16_to_f32(0x7BFF), 65504.0f);
  CHECK(std::isinf(f16_to_f32(0x7C00)));
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7C00) == 0x7C00 && (h & 0x3FF)) continue;  // nan payloads
    CHECK_EQ(f32_to_f16(f16_to_f32(uint16_t(h))), uint16_t(h));
  }
  CHECK_EQ(f32_to_f16(1.0f + std::ldexp(1.0f, -11)), uint16_t(0x3C00));  // tie to even
  CHECK_EQ(f32_to_f16(1.0f + 3 * std::ldexp(1.0f, -11)), uint16_t(0x3C02));
  CHECK_EQ(f32_to_f16(65520.0f), uint16_t(0x7C00));
  CHECK_EQ(bf16_to_f32(0x3F80), 1.0f);
  CHECK_EQ(f32_to_bf16(1.0f), uint16_t(0x3F80));
}

TEST(dequantize_f32_f16_bf16) {
  float f[3] = {1.5f, -2.25f, 0};
  CHECK(deq(GgmlType::F32, f, 3) == std::vector<float>({1.5f, -2.25f, 0}));
  uint16_t h[2] = {0x3E00, 0xBC00};  // 1.5, -1
  CHECK(deq(GgmlType::F16, h, 2) == std::vector<float>({1.5f, -1.0f}));
  uint16_t b[2] = {0x4040, 0xBF00};  // 3, -0.5
  CHECK(deq(GgmlType::BF16, b, 2) == std::vector<float>({3.0f, -0.5f}));
}

TEST(dequantize_q8_0_known_block) {
  BlockQ8_0 blk;
  blk.d = kHalfHalf;
  for (int j = 0; j < 32; ++j) blk.qs[j] = int8_t(j - 16);
  auto y = deq(GgmlType::Q8_0, &blk, 32);
  for (int j = 0; j < 32; ++j) CHECK_EQ(y[j], (j - 16) * 0.5f);
}

TEST(dequantize_q4_0_known_block) {
  BlockQ4_0 blk;
  blk.d = kHalfTwo;
  for (int j = 0; j < 16; ++j) blk.qs[j] = uint8_t(j | ((15 - j) << 4));
  auto y = deq(GgmlType::Q4_0, &blk, 32);
  for (int j = 0; j < 16; ++j) {
    CHECK_EQ(y[j], (j - 8) * 2.0f);              // low nibbles: elements 0..15
    CHECK_EQ(y[j + 16], ((15 - j) - 8) * 2.0f);  // high nibbles: elements 16..31
  }
}

// The low-bit types' layouts, element by element, as ggml-common.h / ggml-quants.c define them
// (the differential suite checks the same against llama.cpp on whole models).
TEST(dequantize_low_bit_known_blocks) {
  BlockQ4_1 q41;  // value = nibble * d + m
  q41.d = kHalfTwo, q41.m = 0xBC00 /* -1 */;
  for (int j = 0; j < 16; ++j) q41.qs[j] = uint8_t(j | ((15 - j) << 4));
  auto y = deq(GgmlType::Q4_1, &q41, 32);
  for (int j = 0; j < 16; ++j) {
    CHECK_EQ(y[j], 2.0f * j - 1);
    CHECK_EQ(y[j + 16], 2.0f * (15 - j) - 1);
  }

  BlockQ5_1 q51;  // the fifth bit of element j in bit j of qh
  q51.d = kHalfOne, q51.m = kHalfHalf;
  for (int j = 0; j < 16; ++j) q51.qs[j] = uint8_t(j | (j << 4));
  const uint32_t qh = 0x80000001u;  // elements 0 and 31
  std::memcpy(q51.qh, &qh, 4);
  y = deq(GgmlType::Q5_1, &q51, 32);
  CHECK_EQ(y[0], 16.5f);
  CHECK_EQ(y[1], 1.5f);
  CHECK_EQ(y[31], 31.5f);
  CHECK_EQ(y[30], 14.5f);

  BlockIQ4_NL nl;  // value = level[nibble] * d
  nl.d = kHalfHalf;
  for (int j = 0; j < 16; ++j) nl.qs[j] = uint8_t(j | ((15 - j) << 4));
  y = deq(GgmlType::IQ4_NL, &nl, 32);
  for (int j = 0; j < 16; ++j) {
    CHECK_EQ(y[j], 0.5f * kIq4NlValues[j]);
    CHECK_EQ(y[j + 16], 0.5f * kIq4NlValues[15 - j]);
  }

  BlockQ2_K q2{};  // element 128h + 32k + l: bits 2k of qs[32h + l]; sub-block scale/min nibbles
  q2.d = kHalfOne, q2.dmin = kHalfHalf;
  for (int s = 0; s < 16; ++s) q2.scales[s] = uint8_t((s % 15 + 1) | ((s % 7) << 4));
  for (int e = 0; e < 256; ++e)
    q2.qs[32 * (e / 128) + e % 32] |= uint8_t((e % 4) << (2 * ((e / 32) % 4)));
  y = deq(GgmlType::Q2_K, &q2, 256);
  for (int e = 0; e < 256; ++e)
    CHECK_EQ(y[e], float((e / 16) % 15 + 1) * (e % 4) - 0.5f * ((e / 16) % 7));

  BlockQ3_K
      q3{};  // 6-bit scales (offset 32) split into 4 + 2 bits; code - 4 where the bit is clear
  q3.d = kHalfOne;
  const int sc3[16] = {0, 1, 31, 32, 33, 63, 17, 48, 5, 40, 62, 7, 30, 34, 16, 47};
  for (int j = 0; j < 16; ++j) {
    q3.scales[j % 8] |= uint8_t((sc3[j] & 0xF) << (j < 8 ? 0 : 4));
    q3.scales[8 + j % 4] |= uint8_t((sc3[j] >> 4) << (2 * (j / 4)));
  }
  for (int e = 0; e < 256; ++e) {
    q3.qs[32 * (e / 128) + e % 32] |= uint8_t((e % 4) << (2 * ((e / 32) % 4)));
    if (e % 3 == 0) q3.hmask[e % 32] |= uint8_t(1u << (e / 32));
  }
  y = deq(GgmlType::Q3_K, &q3, 256);
  for (int e = 0; e < 256; ++e)
    CHECK_EQ(y[e], float(sc3[e / 16] - 32) * ((e % 4) - (e % 3 == 0 ? 0 : 4)));

  BlockIQ4_XS
      xs{};  // sub-block j's scale: low 4 bits in nibble j % 2 of scales_l[j / 2], top 2 at bit 2j
  xs.d = kHalfOne;
  const int sc4[8] = {0, 63, 32, 31, 16, 47, 1, 50};
  for (int j = 0; j < 8; ++j) {
    xs.scales_l[j / 2] |= uint8_t((sc4[j] & 0xF) << (4 * (j % 2)));
    xs.scales_h |= uint16_t((sc4[j] >> 4) << (2 * j));
  }
  for (int i = 0; i < 128; ++i) xs.qs[i] = uint8_t((i % 16) | ((15 - i % 16) << 4));
  y = deq(GgmlType::IQ4_XS, &xs, 256);
  for (int e = 0; e < 256; ++e) {
    const int l = e % 32;
    const int code = l < 16 ? l : 15 - (l - 16);
    CHECK_EQ(y[e], float(sc4[e / 32] - 32) * kIq4NlValues[code]);
  }
}

namespace {
const int kSc[8] = {1, 2, 3, 4, 17, 33, 50, 63};  // > 15 exercises the packed high bits
const int kMin[8] = {0, 5, 10, 15, 20, 40, 60, 63};
int q4_of(int e) { return (e * 7 + 3) % 16; }
int q5_of(int e) { return (e * 11 + 5) % 32; }
int q6_of(int e) { return (e * 13 + 7) % 64; }
}  // namespace

TEST(dequantize_q4_k_known_block) {
  BlockQ4_K blk{};
  blk.d = kHalfOne;
  blk.dmin = kHalfHalf;
  pack_scales(kSc, kMin, blk.scales);
  // Element 64c + l: low nibble of qs[32c + l]; element 64c + 32 + l: its high nibble.
  for (int c = 0; c < 4; ++c) {
    for (int l = 0; l < 32; ++l) {
      blk.qs[32 * c + l] = uint8_t(q4_of(64 * c + l) | (q4_of(64 * c + 32 + l) << 4));
    }
  }
  auto y = deq(GgmlType::Q4_K, &blk, 256);
  for (int e = 0; e < 256; ++e) {
    const int sb = e / 32;
    CHECK_EQ(y[e], 1.0f * kSc[sb] * q4_of(e) - 0.5f * kMin[sb]);
  }
}

TEST(dequantize_q5_k_known_block) {
  BlockQ5_K blk{};
  blk.d = kHalfOne;
  blk.dmin = kHalfHalf;
  pack_scales(kSc, kMin, blk.scales);
  for (int c = 0; c < 4; ++c) {
    for (int l = 0; l < 32; ++l) {
      const int lo = q5_of(64 * c + l), hi = q5_of(64 * c + 32 + l);
      blk.qs[32 * c + l] = uint8_t((lo & 0xF) | ((hi & 0xF) << 4));
      // Fifth bits: bit 2c of qh[l] for the first sub-block, bit 2c+1 for the second.
      blk.qh[l] |= uint8_t(((lo >> 4) << (2 * c)) | ((hi >> 4) << (2 * c + 1)));
    }
  }
  auto y = deq(GgmlType::Q5_K, &blk, 256);
  for (int e = 0; e < 256; ++e) {
    const int sb = e / 32;
    CHECK_EQ(y[e], 1.0f * kSc[sb] * q5_of(e) - 0.5f * kMin[sb]);
  }
}

TEST(dequantize_q6_k_known_block) {
  BlockQ6_K blk{};
  blk.d = kHalfHalf;
  for (int k = 0; k < 16; ++k) blk.scales[k] = int8_t(k % 2 ? -(k + 1) : k + 1);
  // Per 128-weight half h: element 32r + l (r = 0..3, l < 32) takes its low 4 bits from
  // ql[64h + l + 32*(r&1)] (low nibble for r < 2, high for r >= 2) and its top 2 bits from
  // bits 2r..2r+1 of qh[32h + l].
  for (int h = 0; h < 2; ++h) {
    for (int r = 0; r < 4; ++r) {
      for (int l = 0; l < 32; ++l) {
        const int q = q6_of(128 * h + 32 * r + l);
        uint8_t& lo = blk.ql[64 * h + l + 32 * (r & 1)];
        lo |= uint8_t(r < 2 ? (q & 0xF) : (q & 0xF) << 4);
        blk.qh[32 * h + l] |= uint8_t((q >> 4) << (2 * r));
      }
    }
  }
  auto y = deq(GgmlType::Q6_K, &blk, 256);
  for (int e = 0; e < 256; ++e) {
    CHECK_EQ(y[e], 0.5f * blk.scales[e / 16] * (q6_of(e) - 32));
  }
}

// Every faster path this CPU runs (AVX2 on x86-64, NEON with and without the dot-product
// extension on arm64) against the scalar definitions.
namespace {
std::vector<Isa> simd_isas() {
  std::vector<Isa> v = runnable_isas();
  v.erase(v.begin());  // Scalar, always first
  if (v.empty()) SKIP("only the scalar path runs here (or LEAPFROG_CPU_ISA=scalar)");
  return v;
}
}  // namespace

TEST(activation_quantizers_identical_to_scalar_on_every_isa) {
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0, 3);
  std::vector<float> x(1024 + 7);
  for (auto& v : x) v = nd(rng);
  x[100] = 0, x[101] = -0.0f, x[102] = 1e-6f, x[103] = 7e-8f, x[104] = 65519.0f;  // f16 edges
  for (Isa isa : simd_isas()) {
    const Kernels& k = kernels(isa);
    for (int f = 0; f < 5; ++f) {
      // f16/bf16 also over a tail that is not a multiple of any vector width.
      const int n = f == int(ActFormat::F16) || f == int(ActFormat::BF16) ? 1024 + 7 : 1024;
      const size_t bytes = act_row_bytes(ActFormat(f), n);
      std::vector<uint8_t> a(bytes), b(bytes);
      kernels_scalar().quantize[f](x.data(), a.data(), n);
      k.quantize[f](x.data(), b.data(), n);
      if (a != b) {
        throw lftest::FailTest{std::string(isa_name(isa)) + ": quantizer " + std::to_string(f) +
                               " differs from scalar"};
      }
    }
    // A Q8_0 block of zeros (scale 0), then one whose largest magnitude is negative.
    std::vector<float> t(64, 0.0f);
    for (int i = 32; i < 64; ++i) t[i] = (i - 48) * 0.5f;
    std::vector<uint8_t> qa(act_row_bytes(ActFormat::Q8_0, 64)), qb(qa.size());
    kernels_scalar().quantize[int(ActFormat::Q8_0)](t.data(), qa.data(), 64);
    k.quantize[int(ActFormat::Q8_0)](t.data(), qb.data(), 64);
    CHECK(qa == qb);
    // Q8_K blocks whose largest magnitude is negative and appears twice with both signs, and
    // an all-zero block after it.
    std::vector<float> z(512, 0.0f);
    std::fill(z.begin(), z.begin() + 256, 0.25f);
    z[3] = -2.0f, z[9] = 2.0f;
    std::vector<uint8_t> a(act_row_bytes(ActFormat::Q8_K, 512), 0xAB), b(a.size(), 0xAB);
    kernels_scalar().quantize[int(ActFormat::Q8_K)](z.data(), a.data(), 512);
    k.quantize[int(ActFormat::Q8_K)](z.data(), b.data(), 512);
    CHECK(a == b);
  }
}

TEST(dot_kernels_agree_with_scalar_on_every_isa) {
  const Kernels& sc = kernels_scalar();
  for (Isa isa : simd_isas()) {
    const Kernels& k = kernels(isa);
    std::mt19937 rng(11);
    std::normal_distribution<float> nd(0, 1);
    const int n = 1024;
    std::vector<float> x(n);
    for (auto& v : x) v = nd(rng);
    for (GgmlType t : kAllTypes) {
      const int slot = kernel_slot(t);
      const ActFormat f = act_format_for(t);
      std::vector<uint8_t> act(act_row_bytes(f, n));
      sc.quantize[int(f)](x.data(), act.data(), n);
      for (int trial = 0; trial < 20; ++trial) {
        auto w = random_row(t, n, rng);
        const float a = sc.dot[slot](w.data(), act.data(), n);
        const float b = k.dot[slot](w.data(), act.data(), n);
        if (std::fabs(a - b) > 1e-4f * (1 + std::fabs(a))) {
          throw lftest::FailTest{tname(t) + ": scalar " + std::to_string(a) + " vs " +
                                 isa_name(isa) + " " + std::to_string(b)};
        }
      }
    }
    // axpy_f16
    std::vector<uint16_t> v(37);
    for (auto& h : v) h = f32_to_f16(nd(rng));
    std::vector<float> y1(37, 1.0f), y2(37, 1.0f);
    sc.axpy_f16(0.3f, v.data(), y1.data(), 37);
    k.axpy_f16(0.3f, v.data(), y2.data(), 37);
    for (int i = 0; i < 37; ++i) CHECK(std::fabs(y1[i] - y2[i]) < 1e-6f);
  }
}

// Integer sums equal the scalar kernels' exactly: with every scale 1 and small activation
// quants, each float in either chain is an integer below 2^24, so a SIMD result must equal
// the scalar one bit for bit whatever its order of float additions.
TEST(integer_sums_equal_scalar_on_every_isa) {
  const Kernels& sc = kernels_scalar();
  for (Isa isa : simd_isas()) {
    const Kernels& k = kernels(isa);
    std::mt19937 rng(17);
    std::uniform_int_distribution<int> small(-20, 20);
    const int n = 768;
    for (GgmlType t : kAllTypes) {
      const ActFormat f = act_format_for(t);
      if (f != ActFormat::Q8_0 && f != ActFormat::Q8_K) continue;
      std::vector<uint8_t> act(act_row_bytes(f, n));
      if (f == ActFormat::Q8_0) {
        ActQ8_0* y = reinterpret_cast<ActQ8_0*>(act.data());
        for (int b = 0; b < n / kQK; ++b) {
          y[b].d = 1;
          for (auto& v : y[b].qs) v = int8_t(small(rng));
        }
      } else {
        ActQ8_K* y = reinterpret_cast<ActQ8_K*>(act.data());
        for (int b = 0; b < n / kQK_K; ++b) {
          y[b].d = 1;
          for (auto& v : y[b].qs) v = int8_t(small(rng));
          for (int g = 0; g < kQK_K / 16; ++g) {
            int s = 0;
            for (int j = 0; j < 16; ++j) s += y[b].qs[16 * g + j];
            y[b].bsums[g] = int16_t(s);
          }
        }
      }
      // Where random_row puts each block's f16 scales (and Q4_K/Q5_K mins).
      const int blk = int(ggml_type_traits(uint32_t(t))->block_size);
      const size_t bb = ggml_row_bytes(t, blk);
      const size_t off = t == GgmlType::Q6_K   ? 208
                         : t == GgmlType::Q2_K ? 80
                         : t == GgmlType::Q3_K ? 108
                                               : 0;
      const bool has_min = t == GgmlType::Q4_K || t == GgmlType::Q5_K || t == GgmlType::Q2_K ||
                           t == GgmlType::Q4_1 || t == GgmlType::Q5_1;
      for (int trial = 0; trial < 10; ++trial) {
        auto w = random_row(t, n, rng);
        for (int b = 0; b < n / blk; ++b) {
          std::memcpy(w.data() + b * bb + off, &kHalfOne, 2);
          if (has_min) std::memcpy(w.data() + b * bb + off + 2, &kHalfOne, 2);
        }
        const float a = sc.dot[kernel_slot(t)](w.data(), act.data(), n);
        const float b = k.dot[kernel_slot(t)](w.data(), act.data(), n);
        if (a != b) {
          throw lftest::FailTest{tname(t) + ": scalar " + std::to_string(a) + " vs " +
                                 isa_name(isa) + " " + std::to_string(b)};
        }
      }
    }
  }
}

TEST(matmul_matches_naive_reference_all_types_isas_batches) {
  std::mt19937 rng(3);
  std::normal_distribution<float> nd(0, 1);
  const int rows = 37, cols = 512;
  for (Isa isa : runnable_isas()) {
    for (int threads : {1, 2}) {
      CpuBackend be({.threads = threads, .isa = isa});
      for (GgmlType t : kAllTypes) {
        std::vector<uint8_t> wbytes;
        for (int r = 0; r < rows; ++r) {
          auto row = random_row(t, cols, rng);
          wbytes.insert(wbytes.end(), row.begin(), row.end());
        }
        WeightView w{t, wbytes.data(), rows, cols, ggml_row_bytes(t, cols)};
        for (int n : {1, 3, 16, 64}) {
          std::vector<float> x(size_t(n) * cols), y(size_t(n) * rows), ref(size_t(n) * rows);
          for (auto& v : x) v = nd(rng);
          be.matmul(w, x.data(), n, y.data());
          std::vector<float> wr(cols);
          for (int r = 0; r < rows; ++r) {
            dequantize_row(t, w.row(r), wr.data(), cols);
            for (int i = 0; i < n; ++i) {
              double s = 0;
              for (int c = 0; c < cols; ++c) s += double(wr[c]) * x[size_t(i) * cols + c];
              ref[size_t(i) * rows + r] = float(s);
            }
          }
          const double tol = t == GgmlType::F32    ? 1e-5
                             : t == GgmlType::F16  ? 2e-3
                             : t == GgmlType::BF16 ? 1e-2
                                                   : 2e-2;
          check_close(y, ref, tol,
                      tname(t) + " " + isa_name(isa) + " n=" + std::to_string(n) +
                          " threads=" + std::to_string(threads));
        }
      }
    }
  }
}

// Memory from alloc() is resident before any pass writes it: a pass that first touched its
// scratch paid the page faults mid-generation (the bundled model's first 8-row verification,
// whose logits reached a new 2 MiB page, took 7 ms instead of 2 on the 2-core VM). Both the
// mapped path (4 MiB and up) and the heap path; mincore reports which pages are resident.
// glibc raises its mmap threshold after large frees, and a heap block reused from earlier tests
// would be resident whatever alloc() did: a fixed threshold gives the 3 MiB buffer fresh pages.
TEST(cpu_buffers_are_resident_when_allocated) {
#if defined(__GLIBC__)
  CHECK(mallopt(M_MMAP_THRESHOLD, 1 << 20) == 1);
#endif
  CpuBackend be;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  for (size_t bytes : {size_t(9) << 20, size_t(3) << 20}) {
    auto buf = be.alloc(bytes);
    uint8_t* p = buf->as<uint8_t>().get();
    // mincore wants a page-aligned start: the whole pages inside the buffer.
    uint8_t* lo =
        reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(p) + page - 1) / page * page);
    uint8_t* hi = reinterpret_cast<uint8_t*>(reinterpret_cast<uintptr_t>(p + bytes) / page * page);
    std::vector<unsigned char> resident((hi - lo) / page);
    CHECK(mincore(lo, hi - lo, resident.data()) == 0);
    size_t missing = 0;
    for (unsigned char r : resident) missing += (r & 1) ? 0 : 1;
    if (missing != 0) {
      throw lftest::FailTest{std::to_string(missing) + " of " + std::to_string(resident.size()) +
                             " pages of a " + std::to_string(bytes >> 20) +
                             " MiB buffer not resident"};
    }
  }
}

// Consecutive calls differ in one parameter or one position at a time: the backend keeps each
// pass's angles (cpu_backend.cpp, rope_angles), and a table reused for other parameters or
// positions must show here.
TEST(rope_normal_and_neox_match_naive) {
  CpuBackend be;
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0, 1);
  const int n = 3, heads = 2, hd = 16;
  for (RopeStyle style : {RopeStyle::Normal, RopeStyle::NeoX}) {
    for (int n_dims : {16, 8}) {
      for (float base : {10000.0f, 1e6f}) {
        for (float scale : {0.5f, 1.0f}) {
          // Three position sets, each one position away from the one before.
          for (const auto& pset : {std::array<int32_t, 3>{0, 7, 300}, {1, 7, 300}, {1, 7, 301}}) {
            RopeParams p{style, n_dims, base, scale};
            std::vector<float> x(n * heads * hd);
            for (auto& v : x) v = nd(rng);
            std::vector<float> y = x;
            int32_t pos[3] = {pset[0], pset[1], pset[2]};
            be.rope(dev(y.data()), n, heads, hd, dev(pos), p);
            for (int i = 0; i < n; ++i) {
              for (int h = 0; h < heads; ++h) {
                const float* a = x.data() + (i * heads + h) * hd;
                const float* b = y.data() + (i * heads + h) * hd;
                for (int k = 0; k < n_dims / 2; ++k) {
                  const double theta =
                      double(scale) * pos[i] * std::pow(double(base), -2.0 * k / n_dims);
                  const int i0 = style == RopeStyle::Normal ? 2 * k : k;
                  const int i1 = style == RopeStyle::Normal ? 2 * k + 1 : k + n_dims / 2;
                  const double e0 = a[i0] * std::cos(theta) - a[i1] * std::sin(theta);
                  const double e1 = a[i0] * std::sin(theta) + a[i1] * std::cos(theta);
                  CHECK(std::fabs(b[i0] - e0) < 1e-3 && std::fabs(b[i1] - e1) < 1e-3);
                }
                for (int d = n_dims; d < hd; ++d) CHECK_EQ(b[d], a[d]);  // unrotated tail
              }
            }
          }
        }
      }
    }
  }
}

TEST(rms_norm_softmax_swiglu_match_naive) {
  CpuBackend be;
  std::vector<float> x = {1, -2, 3, 0.5f}, w = {1, 2, 0.5f, -1}, y(4);
  be.rms_norm(dev(x.data()), dev(w.data()), 1, 4, 1e-5f, dev(y.data()));
  const double rms = std::sqrt((1 + 4 + 9 + 0.25) / 4 + 1e-5);
  for (int i = 0; i < 4; ++i) CHECK(std::fabs(y[i] - x[i] / rms * w[i]) < 1e-6);
  std::vector<float> s = {1, 2, 3};
  CpuBackend::softmax(s.data(), 1, 3);
  const double z = std::exp(1) + std::exp(2) + std::exp(3);
  for (int i = 0; i < 3; ++i) CHECK(std::fabs(s[i] - std::exp(i + 1) / z) < 1e-6);
  std::vector<float> g = {-1, 0, 2}, u = {2, 3, 4};
  be.swiglu(dev(g.data()), dev(u.data()), 1, 3);
  for (int i = 0; i < 3; ++i) {
    const double gv = std::vector<double>{-1, 0, 2}[i];
    CHECK(std::fabs(g[i] - gv / (1 + std::exp(-gv)) * std::vector<double>{2, 3, 4}[i]) < 1e-5);
  }
}

TEST(silu_mul_matches_double_reference_on_every_isa) {
  // Wide inputs (both exponential tails, zeros of both signs) over a tail that is not a
  // multiple of a vector; within a few float ulps of silu(g) * u in double.
  std::mt19937 rng(11);
  std::normal_distribution<float> nd(0, 6);
  std::vector<float> g0(4096 + 13), u(g0.size());
  for (auto& v : g0) v = nd(rng);
  for (auto& v : u) v = nd(rng);
  g0[0] = 0, g0[1] = -0.0f, g0[2] = -100, g0[3] = 100, g0[4] = -87.5f, g0[5] = 88.0f;
  g0[6] = -20, g0[7] = 1e-8f;
  for (Isa isa : simd_isas()) {
    const Kernels& k = kernels(isa);
    if (!k.silu_mul) continue;
    std::vector<float> g = g0;
    k.silu_mul(g.data(), u.data(), g.size());
    for (size_t i = 0; i < g.size(); ++i) {
      const double x = g0[i], want = x / (1 + std::exp(-x)) * u[i];
      const double err = std::fabs(g[i] - want), tol = 4e-7 * std::fabs(want) + 1e-30;
      if (!(err <= tol)) {
        throw lftest::FailTest{std::string(isa_name(isa)) + ": silu_mul(" + std::to_string(x) +
                               ") * " + std::to_string(u[i]) + " = " + std::to_string(g[i]) +
                               ", want " + std::to_string(want)};
      }
    }
  }
}

TEST(rms_norm_equals_the_scalar_table_on_every_isa) {
  // Every table's rows bit for bit as the portable loop's, for sizes with and without a tail,
  // with and without a weight, in place. (A reordering of the double sums mostly vanishes in
  // the float scale; what this catches is a lost, doubled or misplaced element or weight.)
  std::mt19937 rng(12);
  std::normal_distribution<float> nd(0, 3);
  const int rows = 3;
  for (int dim : {1, 7, 8, 13, 64, 517, 896, 1536}) {
    std::vector<float> x(size_t(rows) * dim), w(dim);
    for (auto& v : x) v = nd(rng);
    for (auto& v : w) v = nd(rng);
    for (bool weighted : {false, true}) {
      std::vector<float> want(x.size());
      kernels_scalar().rms_norm(x.data(), weighted ? w.data() : nullptr, rows, dim, 1e-6f,
                                want.data());
      // A plain double-precision RMS norm: the definition the chains only reorder.
      for (int r = 0; r < rows; ++r) {
        double ss = 0;
        for (int c = 0; c < dim; ++c) ss += double(x[r * dim + c]) * x[r * dim + c];
        const double scale = 1 / std::sqrt(ss / dim + 1e-6);
        for (int c = 0; c < dim; ++c) {
          const double ref = x[r * dim + c] * scale * (weighted ? w[c] : 1);
          CHECK(std::fabs(want[r * dim + c] - ref) <= 1e-5 * std::fabs(ref) + 1e-30);
        }
      }
      for (Isa isa : simd_isas()) {
        std::vector<float> got = x;  // in place
        kernels(isa).rms_norm(got.data(), weighted ? w.data() : nullptr, rows, dim, 1e-6f,
                              got.data());
        if (std::memcmp(got.data(), want.data(), want.size() * sizeof(float)) != 0) {
          throw lftest::FailTest{std::string(isa_name(isa)) +
                                 ": rms_norm differs from the scalar " + "table at dim " +
                                 std::to_string(dim)};
        }
      }
    }
  }
}

// Attention over an f16 cache with GQA, causal and explicit masks, against a naive version
// computed from the same f16-rounded keys and values.
namespace {
struct AttnShape {
  int heads, kv_heads, hd, kv_len;
};
// Tiny heads; Qwen2.5-0.5B's (14/2 heads of 64) and -1.5B's (12/2 of 128); the bundled draft
// model's (4/2 of 64: a one-row task reads its f16 values directly), over contexts that are not
// whole blocks of 8 positions.
const AttnShape kAttnShapes[] = {{4, 2, 8, 12}, {14, 2, 64, 37}, {12, 2, 128, 21}, {4, 2, 64, 29}};
}  // namespace

TEST(attention_matches_naive_causal_and_masked) {
  std::mt19937 rng(9);
  std::normal_distribution<float> nd(0, 1);
  for (const AttnShape& shape : kAttnShapes)
    for (Isa isa : runnable_isas()) {
      const int heads = shape.heads, kv_heads = shape.kv_heads, hd = shape.hd;
      const int kv_len = shape.kv_len, ctx = kv_len + 8, n = 3;
      CpuBackend be({.isa = isa});
      KvLayout lay{1, ctx, kv_heads, hd};
      auto kv = be.create_kv(lay);
      std::vector<float> k(kv_len * kv_heads * hd), v(k.size());
      for (auto& a : k) a = f16_to_f32(f32_to_f16(nd(rng)));
      for (auto& a : v) a = f16_to_f32(f32_to_f16(nd(rng)));
      kv->store(0, 0, kv_len, dev(k.data()), dev(v.data()));
      std::vector<float> q(n * heads * hd);
      for (auto& a : q) a = f16_to_f32(f32_to_f16(nd(rng)));
      int32_t qpos[n] = {kv_len - 3, kv_len - 2, kv_len - 1};
      std::vector<uint8_t> mask(n * kv_len);
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < kv_len; ++j) mask[i * kv_len + j] = (j % 3 != 1) && j <= qpos[i];
      for (bool use_mask : {false, true}) {
        std::vector<float> out(q.size());
        AttentionArgs a;
        a.q = dev(q.data());
        a.n = n;
        a.n_heads = heads;
        a.kv_len = kv_len;
        a.q_pos = dev(qpos);
        a.mask = use_mask ? dev(mask.data()) : DevicePtr<const uint8_t>();
        a.scale = 1.0f / std::sqrt(float(hd));
        a.out = dev(out.data());
        be.attention(*kv, a);
        for (int i = 0; i < n; ++i) {
          for (int h = 0; h < heads; ++h) {
            const int g = h / (heads / kv_heads);
            std::vector<double> s(kv_len, -INFINITY);
            double mx = -INFINITY;
            for (int j = 0; j < kv_len; ++j) {
              const bool vis = use_mask ? mask[i * kv_len + j] : j <= qpos[i];
              if (!vis) continue;
              double d = 0;
              for (int c = 0; c < hd; ++c)
                d += q[(i * heads + h) * hd + c] * k[(j * kv_heads + g) * hd + c];
              s[j] = d * a.scale;
              mx = std::max(mx, s[j]);
            }
            double z = 0;
            for (auto& e : s) z += (e = std::exp(e - mx));
            for (int c = 0; c < hd; ++c) {
              double o2 = 0;
              for (int j = 0; j < kv_len; ++j) o2 += s[j] / z * v[(j * kv_heads + g) * hd + c];
              CHECK(std::fabs(out[(i * heads + h) * hd + c] - o2) < 1e-4);
            }
          }
        }
      }
    }
}

// A row's attention output does not depend on the rows batched with it (causal, or with a
// tree mask): batched verification must reproduce one-token decoding bit for bit.
TEST(attention_rows_bit_identical_to_single_rows) {
  std::mt19937 rng(21);
  std::normal_distribution<float> nd(0, 1);
  for (const AttnShape& shape : kAttnShapes) {
    for (Isa isa : runnable_isas()) {
      CpuBackend be({.threads = 3, .isa = isa});
      const int n = 6, kv_len = shape.kv_len + n, q_dim = shape.heads * shape.hd;
      KvLayout lay{1, kv_len, shape.kv_heads, shape.hd};
      auto kv = be.create_kv(lay);
      std::vector<float> k(size_t(kv_len) * shape.kv_heads * shape.hd), v(k.size());
      for (auto& x : k) x = nd(rng);
      for (auto& x : v) x = nd(rng);
      kv->store(0, 0, kv_len, dev(k.data()), dev(v.data()));
      std::vector<float> q(size_t(n) * q_dim);
      for (auto& x : q) x = nd(rng);
      std::vector<int32_t> pos(n);
      std::vector<uint8_t> mask(size_t(n) * kv_len);
      for (int i = 0; i < n; ++i) {
        pos[i] = shape.kv_len + i;
        // A tree: the context, then every other earlier draft position, then itself.
        for (int j = 0; j < kv_len; ++j) {
          mask[i * kv_len + j] = j < shape.kv_len || j == pos[i] || (j < pos[i] && j % 2 == 0);
        }
      }
      for (bool use_mask : {false, true}) {
        AttentionArgs a;
        a.n_heads = shape.heads;
        a.scale = 0.125f;
        std::vector<float> all(q.size()), one(q_dim);
        a.q = dev(q.data());
        a.n = n;
        a.kv_len = kv_len;
        a.q_pos = dev(pos.data());
        a.mask = use_mask ? dev(mask.data()) : DevicePtr<const uint8_t>();
        a.out = dev(all.data());
        be.attention(*kv, a);
        for (int i = 0; i < n; ++i) {
          a.q = dev(q.data() + size_t(i) * q_dim);
          a.n = 1;
          a.kv_len = use_mask ? kv_len : pos[i] + 1;
          a.q_pos = dev(&pos[i]);
          a.mask = use_mask ? dev(mask.data() + size_t(i) * kv_len) : DevicePtr<const uint8_t>();
          a.out = dev(one.data());
          be.attention(*kv, a);
          if (std::memcmp(one.data(), all.data() + size_t(i) * q_dim, q_dim * sizeof(float)) != 0) {
            throw lftest::FailTest{std::string(isa_name(isa)) + " hd=" + std::to_string(shape.hd) +
                                   (use_mask ? " masked" : " causal") + " row " +
                                   std::to_string(i) + " differs from the row alone"};
          }
        }
      }
    }
  }
}

// scripts/test-arm64.sh runs this binary on emulated CPUs with and without the dot-product
// extension and names, in LEAPFROG_EXPECT_ISA, the level each must detect.
TEST(detected_isa_is_the_best_runnable_and_as_expected) {
  const Isa best = detect_isa();
  CHECK(runnable_isas().back() == best);
  if (const char* want = std::getenv("LEAPFROG_EXPECT_ISA")) {
    CHECK_EQ(std::string(isa_name(best)), std::string(want));
  }
}

TEST(isa_env_override_only_lowers) {
  const char* prev = std::getenv("LEAPFROG_CPU_ISA");
  const std::string saved = prev ? prev : "";
  unsetenv("LEAPFROG_CPU_ISA");
  const Isa best = detect_isa();
  setenv("LEAPFROG_CPU_ISA", "scalar", 1);
  CHECK(detect_isa() == Isa::Scalar);
  for (const char* name : {"avx2", "avxvnni", "avx512", "neon", "neondot", "neoni8mm", "bogus"}) {
    setenv("LEAPFROG_CPU_ISA", name, 1);
    CHECK(detect_isa() <= best);
  }
  // Each level this CPU runs can be forced by its name (what the arm64 suite does).
  unsetenv("LEAPFROG_CPU_ISA");
  for (Isa isa : runnable_isas()) {
    setenv("LEAPFROG_CPU_ISA", isa_name(isa), 1);
    CHECK(detect_isa() == isa);
    CHECK(kernels(isa).isa == isa);
  }
  unsetenv("LEAPFROG_CPU_ISA");
  CHECK(detect_isa() == best);
  if (prev) setenv("LEAPFROG_CPU_ISA", saved.c_str(), 1);
}

// The element-wise ops the calling thread runs between products (vectorized by hand, the
// KV store through the level's f16 conversion) against their scalar definitions, bit for
// bit, on every level: rows with tails no vector width divides, NeoX rope with a rotated
// half both a multiple of four and not, and the normal (adjacent pairs) style.
TEST(cpu_elementwise_ops_equal_their_scalar_definitions) {
  std::mt19937 rng(21);
  std::normal_distribution<float> nd(0, 2);
  const auto randv = [&](size_t n) {
    std::vector<float> v(n);
    for (auto& x : v) x = nd(rng);
    return v;
  };
  const int n = 5, dim = 389, heads = 3, hd = 64;
  const auto x = randv(size_t(n) * dim), w = randv(dim), y = randv(size_t(n) * dim);
  const auto q = randv(size_t(n) * heads * hd);
  std::vector<int32_t> pos = {0, 7, 300, 1999, 42};
  const auto fail = [](Isa isa, const std::string& op) {
    throw lftest::FailTest{std::string(isa_name(isa)) + ": " + op + " differs from its definition"};
  };
  for (Isa isa : runnable_isas()) {
    CpuBackend be({.threads = 2, .isa = isa});
    // rms_norm: the sum of squares in double in eight chains (element c in chain c mod 8),
    // summed ((0 + 4) + (2 + 6)) + ((1 + 5) + (3 + 7)).
    std::vector<float> got(x.size()), want(x.size());
    be.rms_norm(dev(x.data()), dev(w.data()), n, dim, 1e-6f, dev(got.data()));
    for (int i = 0; i < n; ++i) {
      const float* xr = x.data() + size_t(i) * dim;
      double s[8] = {};
      for (int c = 0; c < dim; ++c) s[c % 8] += static_cast<double>(xr[c] * xr[c]);
      const double sum = ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]));
      const float scale = 1.0f / std::sqrt(static_cast<float>(sum / dim) + 1e-6f);
      for (int c = 0; c < dim; ++c) want[size_t(i) * dim + c] = (xr[c] * scale) * w[c];
    }
    if (got != want) fail(isa, "rms_norm");
    // add and add_bias.
    got = x;
    be.add(dev(got.data()), dev(y.data()), got.size());
    for (size_t i = 0; i < x.size(); ++i) want[i] = x[i] + y[i];
    if (got != want) fail(isa, "add");
    got = x;
    be.add_bias(dev(got.data()), dev(w.data()), n, dim);
    for (size_t i = 0; i < x.size(); ++i) want[i] = x[i] + w[i % dim];
    if (got != want) fail(isa, "add_bias");
    // rope: angles by repeated multiplication in float (llama.cpp's recipe).
    for (const auto& [style, n_dims] :
         {std::pair{RopeStyle::NeoX, hd}, std::pair{RopeStyle::NeoX, 36},
          std::pair{RopeStyle::Normal, hd}}) {
      const RopeParams p{style, n_dims, 10000, 1};
      std::vector<float> r = q, ref = q;
      be.rope(dev(r.data()), n, heads, hd, dev(pos.data()), p);
      const float theta_scale = std::pow(p.freq_base, -2.0f / n_dims);
      for (int i = 0; i < n; ++i) {
        for (int h = 0; h < heads; ++h) {
          float* v = ref.data() + (size_t(i) * heads + h) * hd;
          float theta = static_cast<float>(pos[i]);
          for (int d = 0; d < n_dims; d += 2, theta *= theta_scale) {
            const float c = std::cos(theta), sn = std::sin(theta);
            const int a = style == RopeStyle::NeoX ? d / 2 : d;
            const int b = style == RopeStyle::NeoX ? d / 2 + n_dims / 2 : d + 1;
            const float x0 = v[a], x1 = v[b];
            v[a] = x0 * c - x1 * sn;
            v[b] = x0 * sn + x1 * c;
          }
        }
      }
      // Bit for bit where the compiler fuses no multiply-add (x86-64's baseline); arm64's
      // compiler may contract this file's scalar loop and the backend's differently.
      for (size_t e = 0; e < r.size(); ++e) {
#if defined(__x86_64__)
        const bool same = r[e] == ref[e];
#else
        const bool same = std::fabs(r[e] - ref[e]) <= 1e-5f * (1.0f + std::fabs(ref[e]));
#endif
        if (!same) fail(isa, "rope " + std::to_string(n_dims));
      }
    }
    // KV store: every value rounded to f16 as f32_to_f16 rounds it.
    const KvLayout lay{2, 8, 2, 44};  // kv_dim 88: a tail after the vectors
    auto kv = be.create_kv(lay);
    const auto k = randv(3 * 88), v = randv(3 * 88);
    kv->store(1, 4, 3, dev(k.data()), dev(v.data()));
    const auto& cpu_kv = static_cast<const CpuKvStorage&>(*kv);
    for (int i = 0; i < 3 * 88; ++i) {
      if (cpu_kv.key(1, 4 + i / 88, i % 88) != f32_to_f16(k[i]) ||
          cpu_kv.value(1, 4 + i / 88, i % 88) != f32_to_f16(v[i])) {
        fail(isa, "KV store");
      }
    }
    // Keys lie in blocks of positions (cpu_kv.h): a store and a move across a block's edge.
    const KvLayout wide{2, 40, 2, 44};
    auto kv2 = be.create_kv(wide);
    kv2->store(1, kKeyBlock - 1, 3, dev(k.data()), dev(v.data()));
    kv2->move(kKeyBlock, 2 * kKeyBlock + 3);
    const auto& cpu_kv2 = static_cast<const CpuKvStorage&>(*kv2);
    for (int c = 0; c < 88; ++c) {
      for (int i = 0; i < 3; ++i) {
        if (cpu_kv2.key(1, kKeyBlock - 1 + i, c) != f32_to_f16(k[i * 88 + c]))
          fail(isa, "KV store across a key block");
      }
      if (cpu_kv2.key(1, 2 * kKeyBlock + 3, c) != f32_to_f16(k[88 + c]) ||
          cpu_kv2.value(1, 2 * kKeyBlock + 3, c) != f32_to_f16(v[88 + c]) ||
          cpu_kv2.key(0, 2 * kKeyBlock + 3, c) != 0) {
        fail(isa, "KV move across key blocks");
      }
    }
  }
}

TEST_MAIN()
