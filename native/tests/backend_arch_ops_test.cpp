// The Backend ops of the architectures beyond llama/qwen (layer_norm, gelu, geglu, scale,
// softcap; attention with soft-capped scores and a sliding window), on every backend that
// offers them, against definitions written out here in double precision. The differential
// suite checks the same ops inside whole models against llama.cpp.
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backend/registry.h"
#include "backend_tensors.h"
#include "format/fp16.h"
#include "test_harness.h"

using namespace leapfrog;
using lftest::randn;
using lftest::to_backend;
using lftest::to_host;

namespace {

double max_abs_diff(const std::vector<float>& a, const std::vector<double>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(double(a[i]) - b[i]));
  return m;
}

void check(const std::string& what, double err, double tol) {
  if (!(err <= tol)) {
    throw lftest::FailTest{what + ": error " + std::to_string(err) + " > " + std::to_string(tol)};
  }
}

double gelu_tanh(double x) {
  return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * x * (1 + 0.044715 * x * x)));
}

// Every backend that implements the ops (the others are refused these models at load).
template <class Fn>
void for_each_arch_backend(Fn fn) {
  int ran = 0;
  for (const BackendEntry& e : available_backends(3)) {
    auto be = e.create();
    if (!be->supports_arch_ops()) {
      std::printf("# not run on %s: no arch ops (models needing them are refused)\n",
                  e.name.c_str());
      continue;
    }
    fn(*be, e.name);
    ++ran;
  }
  if (ran == 0) SKIP("no backend implements the arch ops");
}

}  // namespace

TEST(layer_norm_with_and_without_weight_and_bias) {
  std::mt19937 rng(11);
  for_each_arch_backend([&](Backend& be, const std::string& name) {
    for (int n : {1, 5}) {
      const int dim = 320;
      auto x = randn(size_t(n) * dim, rng, 3);
      for (float& v : x) v += 2;  // a mean to remove
      const auto w = randn(dim, rng), b = randn(dim, rng);
      for (bool affine : {false, true}) {
        auto xt = to_backend(be, x), wt = to_backend(be, w), bt = to_backend(be, b);
        be.layer_norm(xt.ptr(),
                      affine ? DevicePtr<const float>(wt.ptr()) : DevicePtr<const float>(),
                      affine ? DevicePtr<const float>(bt.ptr()) : DevicePtr<const float>(), n, dim,
                      1e-5f, xt.ptr());
        std::vector<double> want(x.size());
        for (int i = 0; i < n; ++i) {
          const float* r = x.data() + size_t(i) * dim;
          double mean = 0, var = 0;
          for (int c = 0; c < dim; ++c) mean += r[c];
          mean /= dim;
          for (int c = 0; c < dim; ++c) var += (r[c] - mean) * (r[c] - mean);
          const double inv = 1 / std::sqrt(var / dim + 1e-5);
          for (int c = 0; c < dim; ++c) {
            want[size_t(i) * dim + c] =
                (r[c] - mean) * inv * (affine ? w[c] : 1) + (affine ? b[c] : 0);
          }
        }
        check(name + " layer_norm n=" + std::to_string(n) + (affine ? " w,b" : ""),
              max_abs_diff(to_host(be, xt), want), 1e-4);
      }
    }
  });
}

// GELU through f16 as ggml computes it: within f16 rounding of the exact tanh form, 0 at
// and below -10, the identity at and above 10.
TEST(gelu_and_geglu_follow_the_tanh_form) {
  std::mt19937 rng(12);
  for_each_arch_backend([&](Backend& be, const std::string& name) {
    auto x = randn(4096, rng, 4);
    x.insert(x.end(), {-10.0f, -12.5f, 10.0f, 11.0f, 0.0f, -0.0f, 9.99f, -9.99f});
    const auto up = randn(x.size(), rng);
    auto xt = to_backend(be, x);
    be.gelu(xt.ptr(), x.size());
    const auto got = to_host(be, xt);
    auto gt = to_backend(be, x), ut = to_backend(be, up);
    be.geglu(gt.ptr(), ut.ptr(), 1, int(x.size()));
    const auto got_glu = to_host(be, gt);
    for (size_t i = 0; i < x.size(); ++i) {
      const double want = x[i] <= -10 ? 0 : x[i] >= 10 ? x[i] : gelu_tanh(x[i]);
      // The input and the result are each rounded to f16 (11 significant bits).
      const double tol = 2e-3 * std::fabs(want) + 2e-3 * std::fabs(x[i]) + 1e-6;
      check(name + " gelu(" + std::to_string(x[i]) + ")", std::fabs(got[i] - want), tol);
      check(name + " geglu(" + std::to_string(x[i]) + ")",
            std::fabs(got_glu[i] - double(got[i]) * up[i]), 1e-6 * std::fabs(want * up[i]) + 1e-12);
    }
  });
}

TEST(scale_and_softcap) {
  std::mt19937 rng(13);
  for_each_arch_backend([&](Backend& be, const std::string& name) {
    const auto x = randn(1000, rng, 40);
    auto st = to_backend(be, x), ct = to_backend(be, x);
    be.scale(st.ptr(), x.size(), -0.375f);
    be.softcap(ct.ptr(), x.size(), 30.0f);
    std::vector<double> ws(x.size()), wc(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      ws[i] = -0.375 * x[i];
      wc[i] = 30 * std::tanh(x[i] / 30.0);
    }
    check(name + " scale", max_abs_diff(to_host(be, st), ws), 1e-5);
    check(name + " softcap", max_abs_diff(to_host(be, ct), wc), 1e-4);
  });
}

// Attention whose scores are soft-capped and whose keys are limited to the last `window`
// positions, against softmax written out in double over the same f16-rounded cache and query.
TEST(attention_softcap_and_sliding_window) {
  std::mt19937 rng(14);
  using format::f16_to_f32;
  using format::f32_to_f16;
  const auto r16 = [](float v) { return double(f16_to_f32(f32_to_f16(v))); };
  for_each_arch_backend([&](Backend& be, const std::string& name) {
    const int heads = 4, kv_heads = 2, hd = 64, past = 40, n = 7;
    const int kv_len = past + n, kv_dim = kv_heads * hd, q_dim = heads * hd;
    const auto k = randn(size_t(kv_len) * kv_dim, rng), v = randn(size_t(kv_len) * kv_dim, rng);
    const auto q = randn(size_t(n) * q_dim, rng, 2);
    std::vector<int32_t> pos(n);
    for (int i = 0; i < n; ++i) pos[i] = past + i;
    struct Case {
      float softcap;
      int window;
    };
    for (const Case c : {Case{0, 16}, Case{2.0f, 0}, Case{3.0f, 5}, Case{1.5f, 1000}}) {
      auto kv = be.create_kv(KvLayout{1, kv_len, kv_heads, hd});
      auto kt = to_backend(be, k), vt = to_backend(be, v);
      kv->store(0, 0, kv_len, kt.ptr(), vt.ptr());
      auto qt = to_backend(be, q);
      auto pt = to_backend(be, pos);
      auto out = to_backend(be, std::vector<float>(size_t(n) * q_dim));
      AttentionArgs a;
      a.q = qt.ptr();
      a.n = n;
      a.n_heads = heads;
      a.kv_len = kv_len;
      a.q_pos = pt.ptr();
      a.scale = 0.25f;
      a.softcap = c.softcap;
      a.window = c.window;
      a.out = out.ptr();
      be.attention(*kv, a);
      std::vector<double> want(size_t(n) * q_dim, 0.0);
      for (int i = 0; i < n; ++i) {
        for (int h = 0; h < heads; ++h) {
          const int kvh = h / (heads / kv_heads);
          std::vector<double> s;
          std::vector<int> at;
          for (int j = 0; j <= pos[i]; ++j) {
            if (c.window > 0 && pos[i] - j >= c.window) continue;
            double d = 0;
            for (int e = 0; e < hd; ++e) {
              d += r16(q[size_t(i) * q_dim + h * hd + e]) *
                   r16(k[size_t(j) * kv_dim + kvh * hd + e]);
            }
            d *= 0.25;
            if (c.softcap > 0) d = c.softcap * std::tanh(d / c.softcap);
            s.push_back(d);
            at.push_back(j);
          }
          double mx = -INFINITY, sum = 0;
          for (double x : s) mx = std::max(mx, x);
          for (double& x : s) sum += (x = std::exp(x - mx));
          for (size_t t = 0; t < s.size(); ++t) {
            for (int e = 0; e < hd; ++e) {
              want[size_t(i) * q_dim + h * hd + e] +=
                  s[t] / sum * r16(v[size_t(at[t]) * kv_dim + kvh * hd + e]);
            }
          }
        }
      }
      check(name + " attention softcap=" + std::to_string(c.softcap) +
                " window=" + std::to_string(c.window),
            max_abs_diff(to_host(be, out), want), 2e-3);
    }
  });
}

TEST_MAIN()
