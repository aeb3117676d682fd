// Every op of the Backend interface, on every backend this machine runs (backend/registry.h),
// against the reference CPU implementation — in the spirit of llama.cpp's test-backend-ops.
// Tensors travel through each backend's own alloc/upload/download, so a GPU backend is
// tested in its device memory. Per op: every tensor type × batch sizes n = 1, 2, 16, 32, 64
// (matmul, get_rows), causal and tree masks (attention), and batched rows bit-identical to
// one-row calls (greedy speculative decoding compares them).
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "backend/registry.h"
#include "backend_tensors.h"
#include "random_weights.h"
#include "test_harness.h"

using namespace leapfrog;
using lftest::kTypes;
using lftest::randn;
using lftest::random_weights;
using lftest::Tensor;
using lftest::tname;
using lftest::to_backend;
using lftest::to_host;

namespace {

constexpr int kBatches[] = {1, 2, 16, 32, 64};

// Largest |a - b| over the largest |b|: errors relative to the output's scale.
double rel_err(const std::vector<float>& a, const std::vector<float>& b) {
  double num = 0, den = 1e-12;
  for (size_t i = 0; i < a.size(); ++i) {
    num = std::max(num, std::fabs(double(a[i]) - b[i]));
    den = std::max(den, std::fabs(double(b[i])));
  }
  return num / den;
}

// How far a backend's product may be from the reference's f32/double one: quantized types
// take 8-bit activations on the CPU (and possibly f16 on a GPU), f16/bf16 weights take
// activations rounded to their type, as llama.cpp does.
double matmul_tolerance(GgmlType t) {
  switch (t) {
    case GgmlType::F32:
      return 1e-4;
    case GgmlType::F16:
      return 4e-3;
    case GgmlType::BF16:
      return 2e-2;
    default:
      return 4e-2;
  }
}

void check_close(const std::string& what, double err, double tol) {
  if (!(err <= tol)) {
    throw lftest::FailTest{what + ": error " + std::to_string(err) + " > " + std::to_string(tol)};
  }
}

// A weight loaded on `be`, or nothing where a GPU backend refuses its type: the refusal must
// be one line naming the type and pointing at the CPU backend (the CPU refuses nothing here).
std::optional<ResidentWeight> load_or_refused(Backend& be, const std::string& name,
                                              const WeightView& file, Backend::WeightUse use) {
  try {
    return be.load_weight(file, use);
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    const bool clear = msg.find(" " + tname(file.type) + " ") != std::string::npos &&
                       msg.find("--backend cpu") != std::string::npos &&
                       msg.find('\n') == std::string::npos;
    if (name.rfind("cpu", 0) == 0 || !clear) throw;
    std::printf("# %s refuses %s: %s\n", name.c_str(), tname(file.type).c_str(), msg.c_str());
    return std::nullopt;
  }
}

// Runs `fn(backend, name)` on every available backend; skips visibly when there is none
// beyond the reference.
template <class Fn>
void for_each_backend(Fn fn) {
  std::vector<std::string> unavailable;
  const auto backends = available_backends(3, &unavailable);
  for (const auto& why : unavailable) std::printf("# not run: %s\n", why.c_str());
  for (const BackendEntry& e : backends) {
    auto be = e.create();
    fn(*be, e.name);
  }
}

}  // namespace

TEST(matmul_every_type_and_batch_against_reference) {
  auto ref = reference_backend();
  std::mt19937 rng(3);
  const int rows = 64, cols = 512;
  for_each_backend([&](Backend& be, const std::string& name) {
    for (GgmlType t : kTypes) {
      auto bytes = random_weights(t, rows, cols, rng);
      const WeightView file{t, bytes.data(), rows, cols, ggml_row_bytes(t, cols)};
      std::optional<ResidentWeight> loaded =
          load_or_refused(be, name, file, Backend::WeightUse::Products);
      if (!loaded) continue;
      ResidentWeight& w = *loaded;
      ResidentWeight wr = ref->load_weight(file, Backend::WeightUse::Products);
      for (int n : kBatches) {
        const auto x = randn(size_t(n) * cols, rng);
        auto xd = to_backend(be, x);
        Tensor<float> y = to_backend(be, std::vector<float>(size_t(n) * rows));
        be.matmul(w.view, xd.ptr(), n, y.ptr());
        const auto got = to_host(be, y);
        auto xr = to_backend(*ref, x);
        Tensor<float> yr = to_backend(*ref, std::vector<float>(size_t(n) * rows));
        ref->matmul(wr.view, xr.ptr(), n, yr.ptr());
        const std::string what = name + " " + tname(t) + " n=" + std::to_string(n);
        check_close(what, rel_err(got, to_host(*ref, yr)), matmul_tolerance(t));
        // Each batched row bit-identical to the one-row product of its input.
        Tensor<float> y1 = to_backend(be, std::vector<float>(rows));
        for (int i = 0; i < n; ++i) {
          be.matmul(w.view, xd.ptr() + size_t(i) * cols, 1, y1.ptr());
          const auto one = to_host(be, y1);
          if (std::memcmp(one.data(), got.data() + size_t(i) * rows, rows * sizeof(float)) != 0) {
            throw lftest::FailTest{what + ": row " + std::to_string(i) + " differs from n=1"};
          }
        }
      }
    }
  });
}

TEST(matmul_multi_equals_separate_products) {
  std::mt19937 rng(4);
  const int cols = 256, n = 16;
  const int rows[3] = {64, 32, 32};
  for_each_backend([&](Backend& be, const std::string& name) {
    for (GgmlType t : {GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::F16}) {
      std::vector<std::vector<uint8_t>> bytes;
      std::vector<ResidentWeight> ws;
      for (int r : rows) {
        bytes.push_back(random_weights(t, r, cols, rng));
        ws.push_back(be.load_weight({t, bytes.back().data(), r, cols, ggml_row_bytes(t, cols)},
                                    Backend::WeightUse::Products));
      }
      auto x = to_backend(be, randn(size_t(n) * cols, rng));
      std::vector<Tensor<float>> y, y_sep;
      const WeightView* wp[3];
      DevicePtr<float> yp[3];
      for (int j = 0; j < 3; ++j) {
        y.push_back(to_backend(be, std::vector<float>(size_t(n) * rows[j])));
        y_sep.push_back(to_backend(be, std::vector<float>(size_t(n) * rows[j])));
        wp[j] = &ws[j].view;
        yp[j] = y[j].ptr();
        be.matmul(ws[j].view, x.ptr(), n, y_sep[j].ptr());
      }
      be.matmul_multi(wp, yp, 3, x.ptr(), n);
      for (int j = 0; j < 3; ++j) {
        if (to_host(be, y[j]) != to_host(be, y_sep[j])) {
          throw lftest::FailTest{name + " " + tname(t) + ": matmul_multi weight " +
                                 std::to_string(j) + " differs"};
        }
      }
    }
  });
}

// The experts of a MoE layer in one call: each weight over its own rows (some over the
// same input, one over none), bit-identical to separate matmul calls.
TEST(matmul_grouped_equals_separate_products) {
  std::mt19937 rng(9);
  const int cols = 256;
  const int rows[4] = {64, 64, 32, 48}, ns[4] = {5, 5, 0, 17}, input[4] = {0, 0, 1, 2};
  for_each_backend([&](Backend& be, const std::string& name) {
    for (GgmlType t : {GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q6_K, GgmlType::F16}) {
      std::vector<std::vector<uint8_t>> bytes;
      std::vector<ResidentWeight> ws;
      std::vector<Tensor<float>> xs, y, y_sep;
      for (int j = 0; j < 4; ++j) {
        bytes.push_back(random_weights(t, rows[j], cols, rng));
        ws.push_back(
            be.load_weight({t, bytes.back().data(), rows[j], cols, ggml_row_bytes(t, cols)},
                           Backend::WeightUse::Products));
        xs.push_back(to_backend(be, randn(size_t(17) * cols, rng)));
      }
      const WeightView* wp[4];
      DevicePtr<const float> xp[4];
      DevicePtr<float> yp[4];
      for (int j = 0; j < 4; ++j) {
        y.push_back(to_backend(be, std::vector<float>(size_t(17) * rows[j])));
        y_sep.push_back(to_backend(be, std::vector<float>(size_t(17) * rows[j])));
        wp[j] = &ws[j].view;
        xp[j] = xs[input[j]].ptr();
        yp[j] = y[j].ptr();
        if (ns[j] > 0) be.matmul(ws[j].view, xp[j], ns[j], y_sep[j].ptr());
      }
      be.matmul_grouped(wp, xp, ns, yp, 4);
      for (int j = 0; j < 4; ++j) {
        if (to_host(be, y[j]) != to_host(be, y_sep[j])) {
          throw lftest::FailTest{name + " " + tname(t) + ": matmul_grouped weight " +
                                 std::to_string(j) + " differs"};
        }
      }
    }
  });
}

// The MoE layout (model/moe_ffn.cpp): every input a slice of one gathered matrix, in order,
// slices starting anywhere (not on a multiple of 8 rows), an expert's gate and up over the
// same slice, an expert with no rows, one with more than 64.
TEST(matmul_grouped_over_slices_of_one_matrix) {
  std::mt19937 rng(10);
  const int cols = 512, total = 3 + 10 + 71 + 1;
  const int first[7] = {0, 0, 3, 3, 13, 13, 84}, ns[7] = {3, 3, 10, 10, 71, 0, 1};
  for_each_backend([&](Backend& be, const std::string& name) {
    for (GgmlType t : {GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::IQ4_XS, GgmlType::Q4_1}) {
      auto x = to_backend(be, randn(size_t(total) * cols, rng));
      std::vector<std::vector<uint8_t>> bytes;
      std::vector<ResidentWeight> ws;
      std::vector<Tensor<float>> y, y_sep;
      const WeightView* wp[7];
      DevicePtr<const float> xp[7];
      DevicePtr<float> yp[7];
      for (int j = 0; j < 7; ++j) {
        const int rows = 32 + 16 * (j % 3);
        bytes.push_back(random_weights(t, rows, cols, rng));
        ws.push_back(be.load_weight({t, bytes.back().data(), rows, cols, ggml_row_bytes(t, cols)},
                                    Backend::WeightUse::Products));
      }
      for (int j = 0; j < 7; ++j) {
        const int rows = int(ws[j].view.rows);
        y.push_back(to_backend(be, std::vector<float>(size_t(std::max(ns[j], 1)) * rows)));
        y_sep.push_back(to_backend(be, std::vector<float>(size_t(std::max(ns[j], 1)) * rows)));
        wp[j] = &ws[j].view;
        xp[j] = x.ptr() + size_t(first[j]) * cols;
        yp[j] = y[j].ptr();
        if (ns[j] > 0) be.matmul(ws[j].view, xp[j], ns[j], y_sep[j].ptr());
      }
      be.matmul_grouped(wp, xp, ns, yp, 7);
      for (int j = 0; j < 7; ++j) {
        if (to_host(be, y[j]) != to_host(be, y_sep[j])) {
          throw lftest::FailTest{name + " " + tname(t) + ": matmul_grouped over slices, weight " +
                                 std::to_string(j) + " differs from its own matmul"};
        }
      }
    }
  });
}

TEST(get_rows_every_type_against_reference) {
  auto ref = reference_backend();
  std::mt19937 rng(5);
  const int rows = 40, cols = 256;
  for_each_backend([&](Backend& be, const std::string& name) {
    for (GgmlType t : kTypes) {
      auto bytes = random_weights(t, rows, cols, rng);
      const WeightView file{t, bytes.data(), rows, cols, ggml_row_bytes(t, cols)};
      std::optional<ResidentWeight> loaded =
          load_or_refused(be, name, file, Backend::WeightUse::Lookups);
      if (!loaded) continue;
      ResidentWeight& w = *loaded;
      ResidentWeight wr = ref->load_weight(file, Backend::WeightUse::Lookups);
      for (int n : kBatches) {
        std::vector<int32_t> ids(n);
        for (auto& id : ids) id = int32_t(rng() % rows);
        auto out = to_backend(be, std::vector<float>(size_t(n) * cols));
        be.get_rows(w.view, to_backend(be, ids).ptr(), n, out.ptr());
        auto out_r = to_backend(*ref, std::vector<float>(size_t(n) * cols));
        ref->get_rows(wr.view, to_backend(*ref, ids).ptr(), n, out_r.ptr());
        // Dequantization is exact arithmetic on every backend.
        if (to_host(be, out) != to_host(*ref, out_r)) {
          throw lftest::FailTest{name + " " + tname(t) + " n=" + std::to_string(n) +
                                 ": rows differ from the reference"};
        }
      }
    }
  });
}

TEST(norm_rope_swiglu_bias_add_against_reference) {
  auto ref = reference_backend();
  std::mt19937 rng(6);
  for_each_backend([&](Backend& be, const std::string& name) {
    for (int n : kBatches) {
      const int dim = 384, heads = 6, hd = 64;
      const auto x = randn(size_t(n) * dim, rng), w = randn(dim, rng), b = randn(dim, rng);
      const auto y = randn(size_t(n) * dim, rng);
      std::vector<int32_t> pos(n);
      for (int i = 0; i < n; ++i) pos[i] = int32_t(rng() % 4000);
      // Each op on both backends from the same inputs.
      const auto run = [&](Backend& k, int op) {
        auto xt = to_backend(k, x);
        auto wt = to_backend(k, w), bt = to_backend(k, b), yt = to_backend(k, y);
        auto pt = to_backend(k, pos);
        switch (op) {
          case 0:
            k.rms_norm(xt.ptr(), wt.ptr(), n, dim, 1e-6f, xt.ptr());
            break;
          case 1:
            k.rms_norm(xt.ptr(), DevicePtr<const float>(), n * heads, hd, 1e-5f, yt.ptr());
            std::swap(xt, yt);
            break;
          case 2:
            k.rope(xt.ptr(), n, heads, hd, pt.ptr(), {RopeStyle::Normal, hd, 10000, 1});
            break;
          case 3:
            k.rope(xt.ptr(), n, heads, hd, pt.ptr(), {RopeStyle::NeoX, hd / 2, 1e6f, 0.25f});
            break;
          case 4:
            k.swiglu(xt.ptr(), yt.ptr(), n, dim);
            break;
          case 5:
            k.add_bias(xt.ptr(), bt.ptr(), n, dim);
            break;
          case 6:
            k.add(xt.ptr(), yt.ptr(), size_t(n) * dim);
            break;
          case 7: {  // YaRN: the angle ramp crosses these 32 pairs at context 256
            RopeParams p{RopeStyle::NeoX, hd, 1e6f, 0.25f};
            p.ext_factor = 1;
            p.attn_factor = 0.9f;
            p.n_ctx_orig = 256;
            k.rope(xt.ptr(), n, heads, hd, pt.ptr(), p);
            break;
          }
        }
        return to_host(k, xt);
      };
      const char* ops[] = {"rms_norm", "rms_norm per head", "rope normal", "rope neox",
                           "swiglu",   "add_bias",          "add",         "rope yarn"};
      for (int op = 0; op < 8; ++op) {
        check_close(name + " " + ops[op] + " n=" + std::to_string(n),
                    rel_err(run(be, op), run(*ref, op)), 1e-5);
      }
    }
  });
}

// The mixture-of-experts row moves: gather rows, then a weighted scatter-add back, on every
// backend that supports them (the others must say so, not compute).
TEST(moe_gather_scatter_against_reference) {
  auto ref = reference_backend();
  std::mt19937 rng(8);
  for_each_backend([&](Backend& be, const std::string& name) {
    if (!be.supports_moe()) {
      std::printf("# %s: no mixture-of-experts ops (MoE models are refused at load)\n",
                  name.c_str());
      return;
    }
    for (int n : kBatches) {
      const int dim = 320, m = (n + 1) / 2;
      const auto x = randn(size_t(n) * dim, rng), y = randn(size_t(n) * dim, rng);
      const auto w = randn(m, rng);
      std::vector<int32_t> rows(m);
      for (int i = 0; i < m; ++i) rows[i] = int32_t(n - 1 - 2 * i);  // distinct, reversed
      const auto run = [&](Backend& k) {
        auto xt = to_backend(k, x), yt = to_backend(k, y), wt = to_backend(k, w);
        auto rt = to_backend(k, rows);
        auto gt = to_backend(k, std::vector<float>(size_t(m) * dim));
        k.gather_rows(xt.ptr(), rt.ptr(), m, dim, gt.ptr());
        k.scatter_add_rows(gt.ptr(), rt.ptr(), wt.ptr(), m, dim, yt.ptr());
        return to_host(k, yt);
      };
      check_close(name + " gather/scatter n=" + std::to_string(n), rel_err(run(be), run(*ref)),
                  1e-6);
    }
  });
}

// Attention over a filled f16 cache (GQA), causal or with a token-tree mask, every batch
// size; rows bit-identical to one-row calls; KV move (tree compaction) on the backend.
TEST(attention_causal_and_tree_against_reference) {
  auto ref = reference_backend();
  std::mt19937 rng(7);
  struct Shape {
    int heads, kv_heads, hd, past;
  };
  for_each_backend([&](Backend& be, const std::string& name) {
    for (const Shape sh : {Shape{14, 2, 64, 37}, Shape{12, 2, 128, 300}, Shape{4, 4, 32, 5}}) {
      for (int n : kBatches) {
        const int kv_len = sh.past + n, kv_dim = sh.kv_heads * sh.hd, q_dim = sh.heads * sh.hd;
        const KvLayout lay{2, kv_len + 4, sh.kv_heads, sh.hd};
        const auto k = randn(size_t(kv_len) * kv_dim, rng), v = randn(size_t(kv_len) * kv_dim, rng);
        const auto q = randn(size_t(n) * q_dim, rng);
        std::vector<int32_t> pos(n);
        std::vector<uint8_t> mask(size_t(n) * kv_len);
        for (int i = 0; i < n; ++i) {
          // A tree: node i follows node (i - 1) / 2 (a binary heap), at depth log2(i + 1).
          int depth = 0;
          for (int a = i; a > 0; a = (a - 1) / 2) ++depth;
          pos[i] = sh.past + depth;
          uint8_t* row = mask.data() + size_t(i) * kv_len;
          std::fill(row, row + sh.past, 1);
          for (int a = i;; a = (a - 1) / 2) {
            row[sh.past + a] = 1;
            if (a == 0) break;
          }
        }
        for (bool tree : {false, true}) {
          std::vector<int32_t> qpos = pos;
          if (!tree) {
            for (int i = 0; i < n; ++i) qpos[i] = sh.past + i;
          }
          const auto run = [&](Backend& kb, int rows, int first) {
            auto kv = kb.create_kv(lay);
            auto kt = to_backend(kb, k), vt = to_backend(kb, v);
            kv->store(1, 0, kv_len, kt.ptr(), vt.ptr());
            // Compaction: move a position away and back (exercises KvStorage::move).
            kv->move(kv_len - 1, kv_len + 2);
            kv->move(kv_len + 2, kv_len - 1);
            auto qt = to_backend(kb, std::vector<float>(q.begin() + size_t(first) * q_dim,
                                                        q.begin() + size_t(first + rows) * q_dim));
            auto pt = to_backend(
                kb, std::vector<int32_t>(qpos.begin() + first, qpos.begin() + first + rows));
            auto mt =
                to_backend(kb, std::vector<uint8_t>(mask.begin() + size_t(first) * kv_len,
                                                    mask.begin() + size_t(first + rows) * kv_len));
            auto out = to_backend(kb, std::vector<float>(size_t(rows) * q_dim));
            AttentionArgs a;
            a.q = qt.ptr();
            a.n = rows;
            a.n_heads = sh.heads;
            a.layer = 1;
            a.kv_len = tree ? kv_len : qpos[first + rows - 1] + 1;
            a.q_pos = pt.ptr();
            if (tree) a.mask = mt.ptr();
            a.scale = 1.0f / std::sqrt(float(sh.hd));
            a.out = out.ptr();
            kb.attention(*kv, a);
            return to_host(kb, out);
          };
          const std::string what = name + " heads " + std::to_string(sh.heads) + "/" +
                                   std::to_string(sh.kv_heads) + " hd=" + std::to_string(sh.hd) +
                                   " n=" + std::to_string(n) + (tree ? " tree" : " causal");
          const auto got = run(be, n, 0);
          check_close(what, rel_err(got, run(*ref, n, 0)), 2e-3);
          for (int i = 0; i < n; i += std::max(1, n / 4)) {
            const auto one = run(be, 1, i);
            if (std::memcmp(one.data(), got.data() + size_t(i) * q_dim, q_dim * sizeof(float))) {
              throw lftest::FailTest{what + ": row " + std::to_string(i) + " differs from n=1"};
            }
          }
        }
      }
    }
  });
}

TEST_MAIN()
