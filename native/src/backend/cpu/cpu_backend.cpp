#include "backend/cpu/cpu_backend.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "backend/cpu/cpu_kv.h"
#include "backend/cpu/dequant.h"
#include "backend/cpu/fp16.h"

namespace leapfrog {

using cpu::ActFormat;

namespace {

// Prepared activations live in a per-thread buffer so two sessions on different threads
// can share one backend (their pool jobs are serialized, their buffers are not shared).
std::vector<uint8_t>& act_buffer() {
  thread_local std::vector<uint8_t> buf;
  return buf;
}

}  // namespace

CpuBackend::CpuBackend(const CpuBackendOptions& opts)
    : k_(&cpu::kernels(opts.isa ? std::min(*opts.isa, cpu::detect_isa()) : cpu::detect_isa())),
      reference_(opts.reference_matmul),
      pool_(opts.threads > 0 ? opts.threads : cpu::ThreadPool::physical_cores()) {}

CpuBackend::~CpuBackend() = default;

std::string CpuBackend::name() const {
  return std::string("cpu-") + cpu::isa_name(k_->isa) + (reference_ ? "-reference" : "");
}

void CpuBackend::matmul(const WeightView& w, const float* x, int n, float* y) {
  if (reference_) return matmul_reference(w, x, n, y);
  const int slot = cpu::kernel_slot(w.type);
  if (slot < 0 || !k_->dot[slot]) throw std::invalid_argument("matmul: unsupported weight type");
  const cpu::DotFn dot = k_->dot[slot];
  const cpu::Dot4Fn dot4 = k_->dot4[slot];
  const ActFormat fmt = cpu::act_format_for(w.type);
  const size_t arb = cpu::act_row_bytes(fmt, w.cols);
  const cpu::QuantizeFn quant = k_->quantize[static_cast<int>(fmt)];

  std::vector<uint8_t>& buf = act_buffer();
  if (buf.size() < arb * n) buf.resize(arb * n);
  uint8_t* act = buf.data();
  const int64_t cols = w.cols, rows = w.rows;
  if (n == 1) {
    quant(x, act, cols);
  } else {
    pool_.run_sized(n, double(n) * cols * 8,
                    [&](int i, int) { quant(x + i * cols, act + i * arb, cols); });
  }

  // Split output rows into a few chunks per thread (dynamic hand-out evens out stragglers).
  // Each weight row is read once from memory and reused for all n activation rows.
  const int64_t n_chunks = std::min<int64_t>(rows, pool_.size() * 8);
  pool_.run_sized(static_cast<int>(n_chunks), double(rows) * cols * n, [&](int t, int) {
    const int64_t r0 = rows * t / n_chunks, r1 = rows * (t + 1) / n_chunks;
    for (int64_t r = r0; r < r1; ++r) {
      const uint8_t* wr = w.row(r);
      int i = 0;
      if (dot4) {
        float out[4];
        for (; i + 4 <= n; i += 4) {
          dot4(wr, act + i * arb, arb, out, cols);
          for (int k = 0; k < 4; ++k) y[(i + k) * rows + r] = out[k];
        }
      }
      for (; i < n; ++i) y[i * rows + r] = dot(wr, act + i * arb, cols);
    }
  });
}

void CpuBackend::matmul_reference(const WeightView& w, const float* x, int n, float* y) {
  const int64_t n_chunks = std::min<int64_t>(w.rows, pool_.size() * 4);
  pool_.run(static_cast<int>(n_chunks), [&](int t, int) {
    std::vector<float> row(w.cols);
    const int64_t r0 = w.rows * t / n_chunks, r1 = w.rows * (t + 1) / n_chunks;
    for (int64_t r = r0; r < r1; ++r) {
      cpu::dequantize_row(w.type, w.row(r), row.data(), w.cols);
      for (int i = 0; i < n; ++i) {
        double s = 0;
        for (int64_t c = 0; c < w.cols; ++c) s += static_cast<double>(row[c]) * x[i * w.cols + c];
        y[i * w.rows + r] = static_cast<float>(s);
      }
    }
  });
}

void CpuBackend::get_rows(const WeightView& table, const int32_t* ids, int n, float* out) {
  for (int i = 0; i < n; ++i) {
    if (ids[i] < 0 || ids[i] >= table.rows) {
      throw std::out_of_range("token id " + std::to_string(ids[i]) + " outside the vocabulary");
    }
    cpu::dequantize_row(table.type, table.row(ids[i]), out + i * table.cols, table.cols);
  }
}

void CpuBackend::rms_norm(const float* x, const float* w, int n, int dim, float eps, float* y) {
  for (int i = 0; i < n; ++i) {
    const float* xr = x + static_cast<size_t>(i) * dim;
    float* yr = y + static_cast<size_t>(i) * dim;
    double sum = 0;  // double, like llama.cpp, so long rows do not lose precision
    for (int c = 0; c < dim; ++c) sum += static_cast<double>(xr[c] * xr[c]);
    const float mean = static_cast<float>(sum / dim);
    const float scale = 1.0f / std::sqrt(mean + eps);
    if (w) {
      for (int c = 0; c < dim; ++c) yr[c] = (xr[c] * scale) * w[c];
    } else {
      for (int c = 0; c < dim; ++c) yr[c] = xr[c] * scale;
    }
  }
}

void CpuBackend::rope(float* x, int n, int n_heads, int head_dim, const int32_t* pos,
                      const RopeParams& p) {
  const int n_dims = p.n_dims;
  const float theta_scale = std::pow(p.freq_base, -2.0f / n_dims);
  std::vector<float> cs(n_dims);  // cos, sin per rotated pair for this position
  for (int i = 0; i < n; ++i) {
    // Angles by repeated multiplication in float, as llama.cpp computes them.
    float theta = static_cast<float>(pos[i]);
    for (int d = 0; d < n_dims; d += 2) {
      const float t = p.freq_scale * theta;
      cs[d] = std::cos(t);
      cs[d + 1] = std::sin(t);
      theta *= theta_scale;
    }
    for (int h = 0; h < n_heads; ++h) {
      float* v = x + (static_cast<size_t>(i) * n_heads + h) * head_dim;
      for (int d = 0; d < n_dims; d += 2) {
        const float c = cs[d], s = cs[d + 1];
        const int a = p.style == RopeStyle::Normal ? d : d / 2;
        const int b = p.style == RopeStyle::Normal ? d + 1 : d / 2 + n_dims / 2;
        const float x0 = v[a], x1 = v[b];
        v[a] = x0 * c - x1 * s;
        v[b] = x0 * s + x1 * c;
      }
    }
  }
}

void CpuBackend::swiglu(float* gate, const float* up, int n, int dim) {
  const size_t count = static_cast<size_t>(n) * dim;
  for (size_t i = 0; i < count; ++i) {
    const float g = gate[i];
    gate[i] = g / (1.0f + std::exp(-g)) * up[i];
  }
}

void CpuBackend::add_bias(float* x, const float* b, int n, int dim) {
  for (int i = 0; i < n; ++i) {
    for (int c = 0; c < dim; ++c) x[static_cast<size_t>(i) * dim + c] += b[c];
  }
}

void CpuBackend::add(float* x, const float* y, size_t count) {
  for (size_t i = 0; i < count; ++i) x[i] += y[i];
}

void CpuBackend::softmax(float* x, int n, int dim) {
  for (int i = 0; i < n; ++i) {
    float* r = x + static_cast<size_t>(i) * dim;
    float mx = -INFINITY;
    for (int c = 0; c < dim; ++c) mx = std::max(mx, r[c]);
    double sum = 0;
    for (int c = 0; c < dim; ++c) {
      r[c] = std::exp(r[c] - mx);
      sum += r[c];
    }
    const float inv = static_cast<float>(1.0 / sum);
    for (int c = 0; c < dim; ++c) r[c] *= inv;
  }
}

std::unique_ptr<KvStorage> CpuBackend::create_kv(const KvLayout& layout) {
  return std::make_unique<cpu::CpuKvStorage>(layout);
}

void CpuBackend::attention(KvStorage& kv_base, const AttentionArgs& a) {
  auto& kv = static_cast<cpu::CpuKvStorage&>(kv_base);
  const KvLayout& L = kv.layout();
  const int hd = L.head_dim;
  const int group = a.n_heads / L.n_kv_heads;  // query heads per KV head (GQA)
  const int q_dim = a.n_heads * hd;
  const cpu::DotFn dot16 = k_->dot[cpu::kernel_slot(GgmlType::F16)];
  const cpu::QuantizeFn to_f16 = k_->quantize[static_cast<int>(ActFormat::F16)];

  const double work = double(a.n) * a.n_heads * hd * 2 * (a.kv_len);
  pool_.run_sized(a.n * a.n_heads, work, [&](int task, int) {
    const int i = task / a.n_heads, h = task % a.n_heads;
    const int kvh = h / group;
    // Thread-local: small jobs run on the caller, which may be any session's thread.
    thread_local std::vector<float> scratch;
    scratch.resize(a.kv_len + hd);
    float* scores = scratch.data();
    // The query is rounded to f16 to meet the f16 keys, as llama.cpp's f16 cache does.
    uint16_t q16[1024];
    to_f16(a.q + static_cast<size_t>(i) * q_dim + h * hd, q16, hd);
    const uint8_t* mask = a.mask ? a.mask + static_cast<size_t>(i) * a.kv_len : nullptr;
    const int limit = mask ? a.kv_len : std::min(a.kv_len, a.q_pos[i] + 1);

    float mx = -INFINITY;
    for (int j = 0; j < limit; ++j) {
      if (mask && !mask[j]) {
        scores[j] = -INFINITY;
        continue;
      }
      scores[j] = dot16(kv.k(a.layer, j) + kvh * hd, q16, hd) * a.scale;
      mx = std::max(mx, scores[j]);
    }
    float* out = a.out + static_cast<size_t>(i) * q_dim + h * hd;
    std::fill(out, out + hd, 0.0f);
    if (mx == -INFINITY) return;  // nothing visible: zero output
    double sum = 0;
    for (int j = 0; j < limit; ++j) {
      scores[j] = scores[j] == -INFINITY ? 0.0f : std::exp(scores[j] - mx);
      sum += scores[j];
    }
    const float inv = static_cast<float>(1.0 / sum);
    for (int j = 0; j < limit; ++j) {
      if (scores[j] != 0) k_->axpy_f16(scores[j] * inv, kv.v(a.layer, j) + kvh * hd, out, hd);
    }
  });
}

}  // namespace leapfrog
