// The CUDA backend at model sizes (tests/backend_ops_test.cpp checks every op on small
// shapes through the registry; this adds what only shows at real shapes): products of every
// type at Qwen2.5-Coder's matrix shapes and batches 1..80 against a double-precision
// reference and against the CPU's fast kernels (same 8-bit activations for the 32-value
// types), batched rows bit-identical to one-token products, attention over long contexts
// (several cache chunks, GQA 7:1, causal and tree), and the loader's error path.
// Skips visibly ("# skipped: no CUDA device (...)") where no GPU is present.
// LEAPFROG_CUDA_BENCH=1 adds timings of products and attention (a benchmark, not a test).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cuda_loader.h"
#include "backend_tensors.h"
#include "cuda_or_skip.h"
#include "format/dequant.h"
#include "format/fp16.h"
#include "random_weights.h"
#include "test_harness.h"

using namespace leapfrog;
using lftest::cuda_or_skip;
using lftest::randn;
using lftest::random_weights;
using lftest::Tensor;
using lftest::tname;
using lftest::to_backend;
using lftest::to_host;

namespace {

// ||a - b|| / ||b||
double rel_l2(const std::vector<float>& a, const std::vector<double>& b) {
  double num = 0, den = 1e-30;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  return std::sqrt(num / den);
}

std::vector<double> ref_matmul(GgmlType t, const std::vector<uint8_t>& w, int rows, int cols,
                               const std::vector<float>& x, int n) {
  const size_t rb = ggml_row_bytes(t, cols);
  std::vector<float> row(cols);
  std::vector<double> y(size_t(n) * rows);
  for (int r = 0; r < rows; ++r) {
    format::dequantize_row(t, w.data() + r * rb, row.data(), cols);
    for (int i = 0; i < n; ++i) {
      double s = 0;
      const float* xi = x.data() + size_t(i) * cols;
      for (int c = 0; c < cols; ++c) s += double(row[c]) * xi[c];
      y[size_t(i) * rows + r] = s;
    }
  }
  return y;
}

double tolerance(GgmlType t) {
  switch (t) {
    case GgmlType::F32:
      return 1e-5;
    case GgmlType::F16:
      return 2e-3;
    case GgmlType::BF16:
      return 1e-2;
    case GgmlType::Q2_K:
    case GgmlType::Q3_K:
      return 4e-2;  // as backend_ops_test allows every backend: 2-3 bit weights, 8-bit activations
    default:
      return 1.5e-2;  // 8-bit activations per 32 inputs
  }
}

}  // namespace

TEST(cuda_backend_loads_or_says_why) {
  std::string why;
  const bool ok = cuda_available(&why);
  if (!ok) {
    std::printf("# skipped: no CUDA device (%s)\n", why.c_str());
    // The factory's message is one line starting "CUDA not available: ".
    try {
      create_cuda_backend();
      throw lftest::FailTest{"create_cuda_backend succeeded without a device"};
    } catch (const std::runtime_error& e) {
      const std::string m = e.what();
      CHECK(m.rfind("CUDA not available: ", 0) == 0);
      CHECK(m.find('\n') == std::string::npos);
    }
    SKIP("no CUDA device (" + why + ")");
  }
  auto be = cuda_or_skip();
  std::printf("# %s\n", be->name().c_str());
  CHECK(be->name().rfind("cuda:", 0) == 0);
  CHECK(be->free_memory() > 0);
}

TEST(cuda_matmul_model_shapes_against_reference_and_cpu) {
  auto be = cuda_or_skip();
  CpuBackend cpu(CpuBackendOptions{.threads = 4});
  std::mt19937 rng(21);
  struct Shape {
    int rows, cols;
  };
  const GgmlType types[] = {GgmlType::Q4_K, GgmlType::Q6_K, GgmlType::Q5_K,   GgmlType::Q8_0,
                            GgmlType::Q4_0, GgmlType::Q5_0, GgmlType::Q4_1,   GgmlType::Q5_1,
                            GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::IQ4_NL, GgmlType::IQ4_XS,
                            GgmlType::F16,  GgmlType::BF16, GgmlType::F32};
  for (GgmlType t : types) {
    const bool k_quant = ggml_type_traits(uint32_t(t))->block_size == 256;
    std::vector<Shape> shapes = {{1536, 1536}, {264, 1536}, {200, 8960}};
    if (!k_quant) shapes.push_back({136, 896});  // inputs not a multiple of 256 (the 0.5B)
    for (const Shape sh : shapes) {
      const auto bytes = random_weights(t, sh.rows, sh.cols, rng);
      const WeightView file{t, bytes.data(), sh.rows, sh.cols, ggml_row_bytes(t, sh.cols)};
      ResidentWeight w = be->load_weight(file, Backend::WeightUse::Products);
      ResidentWeight wc = cpu.load_weight(file, Backend::WeightUse::Products);
      const int max_n = 80;
      const auto x = randn(size_t(max_n) * sh.cols, rng);
      auto xd = to_backend(*be, x);
      std::vector<float> one_rows;  // n = 1 products of each input row
      Tensor<float> y1 = to_backend(*be, std::vector<float>(sh.rows));
      for (int i = 0; i < max_n; ++i) {
        be->matmul(w.view, xd.ptr() + size_t(i) * sh.cols, 1, y1.ptr());
        const auto r = to_host(*be, y1);
        one_rows.insert(one_rows.end(), r.begin(), r.end());
      }
      const auto ref = ref_matmul(t, bytes, sh.rows, sh.cols, x, max_n);
      for (int n : {1, 2, 7, 16, 32, 33, 64, 80}) {
        const std::string what = tname(t) + " " + std::to_string(sh.rows) + "x" +
                                 std::to_string(sh.cols) + " n=" + std::to_string(n);
        Tensor<float> y = to_backend(*be, std::vector<float>(size_t(n) * sh.rows, NAN));
        be->matmul(w.view, xd.ptr(), n, y.ptr());
        const auto got = to_host(*be, y);
        const std::vector<double> ref_n(ref.begin(), ref.begin() + size_t(n) * sh.rows);
        const double err = rel_l2(got, ref_n);
        if (!(err <= tolerance(t))) {
          throw lftest::FailTest{what + ": error " + std::to_string(err) + " vs reference"};
        }
        if (std::memcmp(got.data(), one_rows.data(), got.size() * sizeof(float)) != 0) {
          throw lftest::FailTest{what + ": batched rows differ from one-token products"};
        }
        if (n == 16) {
          // The CPU's fast kernels: the same 8-bit activations (Q8_0 per 32 inputs, Q8_K per
          // 256 for the K-quants and IQ4_XS) and integer sums, so the two differ only in float
          // summation order.
          std::vector<float> yc(size_t(n) * sh.rows);
          cpu.matmul(wc.view, x.data(), n, yc.data());
          const std::vector<double> cd(yc.begin(), yc.end());
          const double ec = rel_l2(got, cd);
          const double tol = 1e-5;
          std::printf("# %s: vs reference %.2e, vs CPU %.2e\n", what.c_str(), err, ec);
          if (!(ec <= tol))
            throw lftest::FailTest{what + ": differs from the CPU by " + std::to_string(ec)};
        }
      }
    }
  }
}

TEST(cuda_matmul_multi_and_get_rows_at_model_shapes) {
  auto be = cuda_or_skip();
  std::mt19937 rng(22);
  const int cols = 1536, n = 32;
  for (GgmlType t : {GgmlType::Q4_K, GgmlType::Q8_0}) {
    const int rows[3] = {1536, 256, 256};
    std::vector<std::vector<uint8_t>> bytes;
    std::vector<ResidentWeight> ws;
    for (int r : rows) {
      bytes.push_back(random_weights(t, r, cols, rng));
      ws.push_back(be->load_weight({t, bytes.back().data(), r, cols, ggml_row_bytes(t, cols)},
                                   Backend::WeightUse::Products));
    }
    auto x = to_backend(*be, randn(size_t(n) * cols, rng));
    std::vector<Tensor<float>> y, ys;
    const WeightView* wp[3];
    DevicePtr<float> yp[3];
    for (int j = 0; j < 3; ++j) {
      y.push_back(to_backend(*be, std::vector<float>(size_t(n) * rows[j])));
      ys.push_back(to_backend(*be, std::vector<float>(size_t(n) * rows[j])));
      wp[j] = &ws[j].view;
      yp[j] = y[j].ptr();
      be->matmul(ws[j].view, x.ptr(), n, ys[j].ptr());
    }
    be->matmul_multi(wp, yp, 3, x.ptr(), n);
    for (int j = 0; j < 3; ++j) CHECK(to_host(*be, y[j]) == to_host(*be, ys[j]));
  }
  // Embedding lookups of a vocabulary-sized table, bit-exact.
  for (GgmlType t : lftest::kTypes) {
    const int rows = 3000;
    const int c = ggml_type_traits(uint32_t(t))->block_size == 256 ? 1024 : 896;
    const auto bytes = random_weights(t, rows, c, rng);
    const size_t rb = ggml_row_bytes(t, c);
    ResidentWeight w;
    try {
      w = be->load_weight({t, bytes.data(), rows, c, rb}, Backend::WeightUse::Lookups);
    } catch (const std::invalid_argument& e) {
      // Every type the CPU computes with has a CUDA layout now.
      throw lftest::FailTest{"cuda refuses " + tname(t) + ": " + e.what()};
    }
    std::vector<int32_t> ids(64);
    for (auto& id : ids) id = int32_t(rng() % rows);
    auto out = to_backend(*be, std::vector<float>(size_t(64) * c));
    be->get_rows(w.view, to_backend(*be, ids).ptr(), 64, out.ptr());
    const auto got = to_host(*be, out);
    std::vector<float> want(size_t(64) * c);
    for (int i = 0; i < 64; ++i)
      format::dequantize_row(t, bytes.data() + ids[i] * rb, &want[size_t(i) * c], c);
    if (std::memcmp(got.data(), want.data(), want.size() * 4) != 0) {
      throw lftest::FailTest{tname(t) + ": get_rows differs from format::dequantize_row"};
    }
  }
}

namespace {

uint64_t counter(Backend& be, const std::string& name) {
  for (const auto& [k, v] : be.counters()) {
    if (k == name) return v;
  }
  throw lftest::FailTest{"no counter " + name};
}

}  // namespace

// Passes recorded and replayed as CUDA graphs (backend/cuda/pass_recorder.h) at the level of
// single ops: a pass repeated with new host inputs replays its graph and reads the new
// inputs (uploads go through the tape's staging), and a pass that downloads in the middle
// (as the MoE router does) sees every op before the download, runs the rest as plain
// launches, and is never replayed.
TEST(cuda_pass_recorder_replays_and_mid_pass_downloads) {
  auto gpu = cuda_or_skip();
  Backend& be = *gpu;
  const int n = 1000;
  std::vector<float> a(n), b(n);
  for (int i = 0; i < n; ++i) a[i] = float(i);
  auto A = to_backend(be, a);
  auto B = to_backend(be, std::vector<float>(n, 0.0f));
  std::vector<float> got(n);
  const uint64_t replays0 = counter(be, "graph_replays");
  for (int pass = 0; pass < 6; ++pass) {  // small integers: every float sum is exact
    for (int i = 0; i < n; ++i) b[i] = float(pass + 1 + i % 3);
    be.begin_pass(PassShape{1, 1, false});
    be.upload(B.ptr(), b.data(), n);
    be.add(A.ptr(), DevicePtr<const float>(B.ptr()), n);
    be.end_pass();
    for (int i = 0; i < n; ++i) a[i] += b[i];
    be.download(got.data(), DevicePtr<const float>(A.ptr()), n);
    if (got != a) throw lftest::FailTest{"pass " + std::to_string(pass) + ": wrong sums"};
  }
  CHECK(counter(be, "graph_replays") >= replays0 + 3);  // seen, captured, then replayed

  const uint64_t interrupted0 = counter(be, "passes_interrupted");
  const uint64_t replays1 = counter(be, "graph_replays");
  for (int pass = 0; pass < 4; ++pass) {
    be.begin_pass(PassShape{1, 1, false});
    be.add(A.ptr(), DevicePtr<const float>(B.ptr()), n);
    be.add(A.ptr(), DevicePtr<const float>(B.ptr()), n);
    for (int i = 0; i < n; ++i) a[i] += 2 * b[i];
    be.download(got.data(), DevicePtr<const float>(A.ptr()), n);  // mid-pass
    if (got != a) throw lftest::FailTest{"mid-pass download misses the ops before it"};
    be.add(A.ptr(), DevicePtr<const float>(B.ptr()), n);
    be.end_pass();
    for (int i = 0; i < n; ++i) a[i] += b[i];
    be.download(got.data(), DevicePtr<const float>(A.ptr()), n);
    if (got != a) throw lftest::FailTest{"an op after a mid-pass download is lost"};
  }
  CHECK_EQ(counter(be, "passes_interrupted"), interrupted0 + 4);
  CHECK_EQ(counter(be, "graph_replays"), replays1);
}

// The launches a recorded pass fuses (cuda_backend.cu: the residual add with the next RMS
// norm, Q/K/V biases, the Q and K rotations) against the same ops outside a pass, where each
// launches alone: bit-identical. The rotations use YaRN with linear scaling and an
// attn_factor (every RopeParams field the fused launch must honour), NeoX style, partial.
TEST(cuda_fused_launches_equal_separate_ops) {
  auto gpu = cuda_or_skip();
  Backend& be = *gpu;
  std::mt19937 rng(11);
  const int n = 5, hd = 64, hq = 6, hk = 2, E = hq * hd;
  const auto x0 = randn(size_t(n) * E, rng), r0 = randn(size_t(n) * E, rng);
  const auto w = randn(E, rng), q0 = randn(size_t(n) * hq * hd, rng);
  const auto k0 = randn(size_t(n) * hk * hd, rng), v0 = randn(size_t(n) * hk * hd, rng);
  const auto bq = randn(hq * hd, rng), bk = randn(hk * hd, rng), bv = randn(hk * hd, rng);
  std::vector<int32_t> pos(n);
  for (int i = 0; i < n; ++i) pos[i] = 1000 + 7 * i;
  RopeParams rp;
  rp.style = RopeStyle::NeoX;
  rp.n_dims = 48;
  rp.freq_base = 500000;
  rp.freq_scale = 0.25f;
  rp.ext_factor = 1;
  rp.attn_factor = 0.9f;
  rp.beta_fast = 32;
  rp.beta_slow = 1;
  rp.n_ctx_orig = 4096;
  const auto Wt = to_backend(be, w), Bq = to_backend(be, bq), Bk = to_backend(be, bk);
  const auto Bv = to_backend(be, bv), R = to_backend(be, r0);
  const auto Pos = to_backend(be, pos);
  const auto run = [&](bool in_pass) {
    auto X = to_backend(be, x0), Y = to_backend(be, x0);
    auto Q = to_backend(be, q0), K = to_backend(be, k0), V = to_backend(be, v0);
    if (in_pass) be.begin_pass(PassShape{n, n, false});
    be.add(X.ptr(), DevicePtr<const float>(R.ptr()), size_t(n) * E);
    be.rms_norm(X.ptr(), Wt.ptr(), n, E, 1e-6f, Y.ptr());
    be.add_bias(Q.ptr(), Bq.ptr(), n, hq * hd);
    be.add_bias(K.ptr(), Bk.ptr(), n, hk * hd);
    be.add_bias(V.ptr(), Bv.ptr(), n, hk * hd);
    be.rope(Q.ptr(), n, hq, hd, Pos.ptr(), rp);
    be.rope(K.ptr(), n, hk, hd, Pos.ptr(), rp);
    if (in_pass) be.end_pass();
    std::vector<std::vector<float>> out;
    for (const auto* t : {&X, &Y, &Q, &K, &V}) out.push_back(to_host(be, *t));
    return out;
  };
  const auto separate = run(false), fused = run(true);
  const char* names[] = {"residual", "norm", "q", "k", "v"};
  for (size_t j = 0; j < separate.size(); ++j) {
    CHECK_EQ(separate[j].size(), fused[j].size());
    if (std::memcmp(separate[j].data(), fused[j].data(), separate[j].size() * sizeof(float))) {
      throw lftest::FailTest{std::string(names[j]) + ": fused launch differs from separate ops"};
    }
  }
}

TEST(cuda_attention_long_context_gqa) {
  auto be = cuda_or_skip();
  std::mt19937 rng(23);
  const int heads = 28, kv_heads = 4, hd = 128, n_ctx = 8192, past = 3000;
  const int kv_dim = kv_heads * hd, q_dim = heads * hd, G = heads / kv_heads;
  const KvLayout lay{2, n_ctx, kv_heads, hd};
  auto kv = be->create_kv(lay);
  const int fill = past + 64;
  const auto k = randn(size_t(fill) * kv_dim, rng), v = randn(size_t(fill) * kv_dim, rng);
  auto kt = to_backend(*be, k), vt = to_backend(*be, v);
  kv->store(1, 0, fill, kt.ptr(), vt.ptr());
  std::vector<uint16_t> k16(k.size()), v16(v.size());
  for (size_t i = 0; i < k.size(); ++i)
    k16[i] = format::f32_to_f16(k[i]), v16[i] = format::f32_to_f16(v[i]);
  for (int n : {1, 16, 64}) {
    for (bool tree : {false, true}) {
      const int kv_len = past + n;
      const auto q = randn(size_t(n) * q_dim, rng, 0.3f);
      std::vector<int32_t> pos(n);
      std::vector<uint8_t> mask(size_t(n) * kv_len, 0);
      for (int i = 0; i < n; ++i) {
        pos[i] = past + i;
        uint8_t* row = mask.data() + size_t(i) * kv_len;
        for (int j = 0; j < past; ++j) row[j] = (j % 7) != 3;  // some prefix positions hidden
        for (int a = i;; a = (a - 1) / 2) {
          row[past + a] = 1;
          if (a == 0) break;
        }
      }
      const auto run = [&](int rows, int first) {
        auto qt = to_backend(*be, std::vector<float>(q.begin() + size_t(first) * q_dim,
                                                     q.begin() + size_t(first + rows) * q_dim));
        auto pt =
            to_backend(*be, std::vector<int32_t>(pos.begin() + first, pos.begin() + first + rows));
        auto mt =
            to_backend(*be, std::vector<uint8_t>(mask.begin() + size_t(first) * kv_len,
                                                 mask.begin() + size_t(first + rows) * kv_len));
        auto out = to_backend(*be, std::vector<float>(size_t(rows) * q_dim, NAN));
        AttentionArgs a;
        a.q = qt.ptr();
        a.n = rows;
        a.n_heads = heads;
        a.layer = 1;
        a.kv_len = tree ? kv_len : pos[first + rows - 1] + 1;
        a.q_pos = pt.ptr();
        if (tree) a.mask = mt.ptr();
        a.scale = 1.0f / std::sqrt(float(hd));
        a.out = out.ptr();
        be->attention(*kv, a);
        return to_host(*be, out);
      };
      const auto got = run(n, 0);
      // Double-precision reference over the f16 cache and the f16-rounded query.
      std::vector<double> ref(size_t(n) * q_dim, 0);
      for (int i = 0; i < n; ++i) {
        for (int h = 0; h < heads; ++h) {
          const int kvh = h / G;
          std::vector<double> s;
          std::vector<int> js;
          const int limit = tree ? kv_len : pos[i] + 1;
          for (int j = 0; j < limit; ++j) {
            if (tree && !mask[size_t(i) * kv_len + j]) continue;
            double d = 0;
            for (int e = 0; e < hd; ++e) {
              const float qv =
                  format::f16_to_f32(format::f32_to_f16(q[size_t(i) * q_dim + h * hd + e]));
              d += double(qv) * format::f16_to_f32(k16[size_t(j) * kv_dim + kvh * hd + e]);
            }
            s.push_back(d / std::sqrt(double(hd)));
            js.push_back(j);
          }
          double mx = -1e300, sum = 0;
          for (double x : s) mx = std::max(mx, x);
          for (double& x : s) sum += (x = std::exp(x - mx));
          for (size_t m = 0; m < s.size(); ++m) {
            for (int e = 0; e < hd; ++e) {
              ref[size_t(i) * q_dim + h * hd + e] +=
                  s[m] / sum * format::f16_to_f32(v16[size_t(js[m]) * kv_dim + kvh * hd + e]);
            }
          }
        }
      }
      const std::string what = "n=" + std::to_string(n) + (tree ? " tree" : " causal");
      const double err = rel_l2(got, ref);
      std::printf("# attention %s: error %.2e\n", what.c_str(), err);
      if (!(err <= 1e-5)) throw lftest::FailTest{what + ": error " + std::to_string(err)};
      for (int i = 0; i < n; i += std::max(1, n / 4)) {
        const auto one = run(1, i);
        if (std::memcmp(one.data(), got.data() + size_t(i) * q_dim, q_dim * sizeof(float))) {
          throw lftest::FailTest{what + ": row " + std::to_string(i) + " differs from n=1"};
        }
      }
    }
  }
}

// Timings (LEAPFROG_CUDA_BENCH=1): products at the shapes of Qwen2.5-Coder-1.5B and -7B.
TEST(cuda_bench_products_and_attention) {
  if (!std::getenv("LEAPFROG_CUDA_BENCH")) SKIP("set LEAPFROG_CUDA_BENCH=1 to time");
  auto be = cuda_or_skip();
  std::mt19937 rng(24);
  using Clock = std::chrono::steady_clock;
  struct Shape {
    const char* name;
    int rows, cols;
  };
  const Shape shapes[] = {{"7B ffn_gate", 18944, 3584}, {"7B ffn_down", 3584, 18944},
                          {"7B attn_q", 3584, 3584},    {"1.5B ffn_up", 8960, 1536},
                          {"1.5B attn_q", 1536, 1536},  {"1.5B output", 151936, 1536}};
  std::printf("# %-14s %-5s %8s %8s %8s %8s %8s   (us per product; GB/s at n=1)\n", "shape", "type",
              "n=1", "n=8", "n=16", "n=32", "n=64");
  for (const Shape& sh : shapes) {
    for (GgmlType t : {GgmlType::Q4_K, GgmlType::Q6_K, GgmlType::Q8_0, GgmlType::F16}) {
      const auto bytes = random_weights(t, sh.rows, sh.cols, rng);
      const size_t rb = ggml_row_bytes(t, sh.cols);
      ResidentWeight w =
          be->load_weight({t, bytes.data(), sh.rows, sh.cols, rb}, Backend::WeightUse::Products);
      auto x = to_backend(*be, randn(size_t(64) * sh.cols, rng));
      auto y = to_backend(*be, std::vector<float>(size_t(64) * sh.rows));
      double us[5];
      int k = 0;
      for (int n : {1, 8, 16, 32, 64}) {
        be->matmul(w.view, x.ptr(), n, y.ptr());
        float sink;
        be->download(&sink, DevicePtr<const float>(y.ptr()), 1);
        const int reps = 50;
        const auto t0 = Clock::now();
        for (int r = 0; r < reps; ++r) be->matmul(w.view, x.ptr(), n, y.ptr());
        be->download(&sink, DevicePtr<const float>(y.ptr()), 1);
        us[k++] = std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / reps;
      }
      std::printf("# %-14s %-5s %8.1f %8.1f %8.1f %8.1f %8.1f   %6.0f GB/s\n", sh.name,
                  tname(t).c_str(), us[0], us[1], us[2], us[3], us[4],
                  double(rb) * sh.rows / (us[0] * 1e3));
    }
  }
  // Attention: 7B shape (28/4 heads, 128), one layer, n rows over kv_len positions.
  const KvLayout lay{1, 8192, 4, 128};
  auto kv = be->create_kv(lay);
  auto kvv = to_backend(*be, randn(size_t(8192) * 512, rng));
  kv->store(0, 0, 8192, kvv.ptr(), kvv.ptr());
  auto q = to_backend(*be, randn(size_t(64) * 28 * 128, rng));
  auto out = to_backend(*be, std::vector<float>(size_t(64) * 28 * 128));
  for (int ctx : {1024, 4096, 8000}) {
    for (int n : {1, 32}) {
      std::vector<int32_t> pos(n);
      for (int i = 0; i < n; ++i) pos[i] = ctx - n + i;
      auto pt = to_backend(*be, pos);
      AttentionArgs a;
      a.q = q.ptr();
      a.n = n;
      a.n_heads = 28;
      a.kv_len = ctx;
      a.q_pos = pt.ptr();
      a.scale = 0.088f;
      a.out = out.ptr();
      be->attention(*kv, a);
      float sink;
      be->download(&sink, DevicePtr<const float>(out.ptr()), 1);
      const int reps = 50;
      const auto t0 = Clock::now();
      for (int r = 0; r < reps; ++r) be->attention(*kv, a);
      be->download(&sink, DevicePtr<const float>(out.ptr()), 1);
      std::printf("# attention 7B layer kv_len=%d n=%d: %.1f us\n", ctx, n,
                  std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / reps);
    }
  }
  // Logits download: 32 rows of a 151936 vocabulary.
  auto big = to_backend(*be, std::vector<float>(size_t(32) * 151936));
  std::vector<float> host(size_t(32) * 151936);
  be->download(host.data(), DevicePtr<const float>(big.ptr()), host.size());
  const auto t0 = Clock::now();
  for (int r = 0; r < 10; ++r)
    be->download(host.data(), DevicePtr<const float>(big.ptr()), host.size());
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count() / 10;
  std::printf("# download of 32 x 151936 logits: %.2f ms (%.1f GB/s)\n", ms,
              host.size() * 4 / (ms * 1e6));
}

// A few launches to look at under a profiler (LEAPFROG_CUDA_PROFILE=1, e.g. with ncu): the
// 7B ffn_gate product (Q4_K) at 1 and 32 tokens, attention of a 7B layer at 4096 positions.
TEST(cuda_profile_targets) {
  if (!std::getenv("LEAPFROG_CUDA_PROFILE")) SKIP("set LEAPFROG_CUDA_PROFILE=1");
  auto be = cuda_or_skip();
  std::mt19937 rng(25);
  const int rows = 18944, cols = 3584;
  const auto bytes = random_weights(GgmlType::Q4_K, rows, cols, rng);
  ResidentWeight w = be->load_weight(
      {GgmlType::Q4_K, bytes.data(), rows, cols, ggml_row_bytes(GgmlType::Q4_K, cols)},
      Backend::WeightUse::Products);
  auto x = to_backend(*be, randn(size_t(32) * cols, rng));
  auto y = to_backend(*be, std::vector<float>(size_t(32) * rows));
  be->matmul(w.view, x.ptr(), 1, y.ptr());
  be->matmul(w.view, x.ptr(), 32, y.ptr());
  const KvLayout lay{1, 8192, 4, 128};
  auto kv = be->create_kv(lay);
  auto kvv = to_backend(*be, randn(size_t(4096) * 512, rng));
  kv->store(0, 0, 4096, kvv.ptr(), kvv.ptr());
  auto q = to_backend(*be, randn(size_t(32) * 28 * 128, rng));
  auto out = to_backend(*be, std::vector<float>(size_t(32) * 28 * 128));
  for (int n : {1, 32}) {
    std::vector<int32_t> pos(n);
    for (int i = 0; i < n; ++i) pos[i] = 4096 - n + i;
    auto pt = to_backend(*be, pos);
    AttentionArgs a;
    a.q = q.ptr();
    a.n = n;
    a.n_heads = 28;
    a.kv_len = 4096;
    a.q_pos = pt.ptr();
    a.scale = 0.088f;
    a.out = out.ptr();
    be->attention(*kv, a);
  }
  float sink;
  be->download(&sink, DevicePtr<const float>(out.ptr()), 1);
}

TEST_MAIN()
