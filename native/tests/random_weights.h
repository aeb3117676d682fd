// Random weights of every supported type, with sane f16 scales (random bytes elsewhere), for
// the kernel and backend tests.
#pragma once
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "format/fp16.h"
#include "gguf/ggml_types.h"

namespace lftest {

using leapfrog::GgmlType;

inline constexpr GgmlType kTypes[] = {
    GgmlType::F32,  GgmlType::F16,  GgmlType::BF16, GgmlType::Q8_0,   GgmlType::Q4_0,
    GgmlType::Q5_0, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K,   GgmlType::Q4_1,
    GgmlType::Q5_1, GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::IQ4_NL, GgmlType::IQ4_XS};

inline std::string tname(GgmlType t) {
  return std::string(leapfrog::ggml_type_traits(uint32_t(t))->name);
}

// Random weights with sane f16 scales (random bytes elsewhere).
inline std::vector<uint8_t> random_weights(GgmlType t, int rows, int cols, std::mt19937& rng) {
  const size_t rb = leapfrog::ggml_row_bytes(t, cols);
  std::vector<uint8_t> w(rb * rows);
  for (auto& b : w) b = static_cast<uint8_t>(rng());
  std::uniform_real_distribution<float> u(-1, 1);
  auto half = [&](size_t off, float v) {
    const uint16_t h = leapfrog::format::f32_to_f16(v);
    std::memcpy(w.data() + off, &h, 2);
  };
  for (int r = 0; r < rows; ++r) {
    const size_t o = rb * r;
    switch (t) {
      case GgmlType::F32:
        for (int i = 0; i < cols; ++i) {
          const float v = u(rng);
          std::memcpy(w.data() + o + 4 * i, &v, 4);
        }
        break;
      case GgmlType::F16:
        for (int i = 0; i < cols; ++i) half(o + 2 * i, u(rng));
        break;
      case GgmlType::BF16:
        for (int i = 0; i < cols; ++i) {
          const uint16_t h = leapfrog::format::f32_to_bf16(u(rng));
          std::memcpy(w.data() + o + 2 * i, &h, 2);
        }
        break;
      case GgmlType::Q8_0:
        for (int b = 0; b < cols / 32; ++b) half(o + 34 * b, 0.01f * u(rng));
        break;
      case GgmlType::Q4_0:
        for (int b = 0; b < cols / 32; ++b) half(o + 18 * b, 0.1f * u(rng));
        break;
      case GgmlType::Q5_0:
        for (int b = 0; b < cols / 32; ++b) half(o + 22 * b, 0.05f * u(rng));
        break;
      case GgmlType::Q4_K:
        for (int b = 0; b < cols / 256; ++b)
          half(o + 144 * b, 0.002f), half(o + 144 * b + 2, 0.001f);
        break;
      case GgmlType::Q5_K:
        for (int b = 0; b < cols / 256; ++b)
          half(o + 176 * b, 0.001f), half(o + 176 * b + 2, 0.001f);
        break;
      case GgmlType::Q6_K:
        for (int b = 0; b < cols / 256; ++b) half(o + 210 * b + 208, 0.0005f);
        break;
      case GgmlType::Q4_1:  // codes 0..15 above a negative minimum
        for (int b = 0; b < cols / 32; ++b)
          half(o + 20 * b, 0.1f * u(rng)), half(o + 20 * b + 2, -0.7f * u(rng));
        break;
      case GgmlType::Q5_1:
        for (int b = 0; b < cols / 32; ++b)
          half(o + 24 * b, 0.05f * u(rng)), half(o + 24 * b + 2, -0.7f * u(rng));
        break;
      case GgmlType::IQ4_NL:  // levels up to 127
        for (int b = 0; b < cols / 32; ++b) half(o + 18 * b, 0.006f * u(rng));
        break;
      case GgmlType::Q2_K:  // scales and mins up to 15, codes up to 3
        for (int b = 0; b < cols / 256; ++b)
          half(o + 84 * b + 80, 0.02f), half(o + 84 * b + 82, 0.01f);
        break;
      case GgmlType::Q3_K:  // scales -32..31, codes -4..3
        for (int b = 0; b < cols / 256; ++b) half(o + 110 * b + 108, 0.005f);
        break;
      case GgmlType::IQ4_XS:  // scales -32..31, levels up to 127
        for (int b = 0; b < cols / 256; ++b) half(o + 136 * b, 0.0002f);
        break;
      default:
        break;
    }
  }
  return w;
}

}  // namespace lftest
