// The CPU backend's ops for the architectures beyond llama/qwen (backend.h lists them).
// Each follows ggml's CPU arithmetic, so both engines round alike.
#include <array>
#include <cmath>
#include <cstdint>

#include "backend/cpu/cpu_backend.h"
#include "format/fp16.h"

namespace leapfrog {

namespace {

using format::f16_to_f32;
using format::f32_to_f16;

float gelu_tanh(float x) {
  constexpr float kSqrt2OverPi = 0.79788456080286535587989211986876f;
  constexpr float kCoef = 0.044715f;
  return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * x * (1.0f + kCoef * x * x)));
}

// ggml's CPU GELU reads a table over every f16 input (its GGML_GELU_FP16 default): x is
// rounded to f16 and the result too. Below -10 it is 0, above 10 the identity.
struct GeluTable {
  std::array<uint16_t, 1 << 16> y;
  GeluTable() {
    for (uint32_t i = 0; i < y.size(); ++i) y[i] = f32_to_f16(gelu_tanh(f16_to_f32(i)));
  }
};

float gelu_f16_table(float x) {
  static const GeluTable table;  // 128 KiB, built on first use
  if (x <= -10.0f) return 0.0f;
  if (x >= 10.0f) return x;
  return f16_to_f32(table.y[f32_to_f16(x)]);
}

}  // namespace

void CpuBackend::layer_norm(DevicePtr<const float> x_d, DevicePtr<const float> w_d,
                            DevicePtr<const float> b_d, int n, int dim, float eps,
                            DevicePtr<float> y_d) {
  const float *x = x_d.get(), *w = w_d.get(), *b = b_d.get();
  float* y = y_d.get();
  for (int i = 0; i < n; ++i) {
    const float* xr = x + static_cast<size_t>(i) * dim;
    float* yr = y + static_cast<size_t>(i) * dim;
    double sum = 0;
    for (int c = 0; c < dim; ++c) sum += xr[c];
    const float mean = static_cast<float>(sum / dim);
    double var = 0;  // double, as ggml sums the squared deviations
    for (int c = 0; c < dim; ++c) {
      const float d = xr[c] - mean;
      yr[c] = d;
      var += static_cast<double>(d * d);
    }
    const float scale = 1.0f / std::sqrt(static_cast<float>(var / dim) + eps);
    for (int c = 0; c < dim; ++c) {
      float v = yr[c] * scale;
      if (w) v *= w[c];
      if (b) v += b[c];
      yr[c] = v;
    }
  }
}

void CpuBackend::gelu(DevicePtr<float> x_d, size_t count) {
  float* x = x_d.get();
  for (size_t i = 0; i < count; ++i) x[i] = gelu_f16_table(x[i]);
}

void CpuBackend::geglu(DevicePtr<float> gate_d, DevicePtr<const float> up_d, int n, int dim) {
  float* gate = gate_d.get();
  const float* up = up_d.get();
  const size_t count = static_cast<size_t>(n) * dim;
  for (size_t i = 0; i < count; ++i) gate[i] = gelu_f16_table(gate[i]) * up[i];
}

void CpuBackend::scale(DevicePtr<float> x_d, size_t count, float s) {
  float* x = x_d.get();
  for (size_t i = 0; i < count; ++i) x[i] *= s;
}

void CpuBackend::softcap(DevicePtr<float> x_d, size_t count, float cap) {
  float* x = x_d.get();
  const float inv = 1.0f / cap;  // ggml scales by 1/cap, then tanh, then by cap
  for (size_t i = 0; i < count; ++i) x[i] = std::tanh(x[i] * inv) * cap;
}

}  // namespace leapfrog
