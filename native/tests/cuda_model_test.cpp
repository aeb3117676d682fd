// Whole models on the CUDA backend against the CPU backend: for each GGUF named in
// LEAPFROG_CUDA_MODELS (colon-separated; tools/lf_randmodel writes random-weight ones, and
// stories260K / the bundled models are real), greedy decoding teacher-forced by the CPU's
// tokens, every step's logits compared, every disagreement in the argmax checked to be a
// near-tie (the CPU's margin between the two tokens within the logits' measured error);
// on the GPU, a batched pass's rows bit-identical to one-token passes, and speculative
// decoding (chain and tree) token-identical to plain decoding.
// Skips visibly without a CUDA device or without LEAPFROG_CUDA_MODELS.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cuda_loader.h"
#include "cuda_or_skip.h"
#include "engine/session.h"
#include "model/model.h"
#include "spec/generate.h"
#include "test_harness.h"

using namespace leapfrog;
using lftest::cuda_or_skip;

namespace {

std::vector<std::string> model_paths() {
  std::vector<std::string> out;
  const char* env = std::getenv("LEAPFROG_CUDA_MODELS");
  if (!env) return out;
  std::stringstream ss(env);
  for (std::string p; std::getline(ss, p, ':');) {
    if (!p.empty()) out.push_back(p);
  }
  return out;
}

std::vector<int32_t> prompt_for(int vocab, int n) {
  std::vector<int32_t> p;
  uint32_t s = 12345;
  for (int i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u;
    p.push_back(int32_t((s >> 8) % uint32_t(std::min(vocab, 30000))));
  }
  // Repeat a stretch so lookup drafting finds matches.
  for (int i = 0; i < n / 2; ++i) p.push_back(p[i]);
  return p;
}

int argmax(std::span<const float> v) {
  return int(std::max_element(v.begin(), v.end()) - v.begin());
}

}  // namespace

TEST(cuda_greedy_logits_match_cpu_up_to_near_ties) {
  auto gpu = cuda_or_skip();
  const auto paths = model_paths();
  if (paths.empty()) SKIP("set LEAPFROG_CUDA_MODELS to GGUF paths");
  auto cpu = std::make_shared<CpuBackend>(CpuBackendOptions{});
  for (const std::string& path : paths) {
    auto mc = Model::load(path, cpu);
    auto mg = Model::load(path, gpu);
    const int vocab = mc->hparams().n_vocab;
    Session sc(*mc, SessionParams{.n_ctx = 1024});
    Session sg(*mg, SessionParams{.n_ctx = 1024});
    std::vector<int32_t> ids = prompt_for(vocab, 24);
    std::span<const float> lc = sc.forward(ids, false);
    std::span<const float> lg = sg.forward(ids, false);
    int mismatches = 0, steps = 48;
    double worst_err = 0;
    std::string detail;
    for (int step = 0; step < steps; ++step) {
      double err = 0, scale = 1e-30;
      for (int v = 0; v < vocab; ++v) {
        err = std::max(err, std::fabs(double(lg[v]) - lc[v]));
        scale = std::max(scale, std::fabs(double(lc[v])));
      }
      worst_err = std::max(worst_err, err / scale);
      const int tc = argmax(lc), tg = argmax(lg);
      if (tc != tg) {
        ++mismatches;
        const double margin = double(lc[tc]) - lc[tg];
        detail += " step " + std::to_string(step) + ": cpu " + std::to_string(tc) + " gpu " +
                  std::to_string(tg) + " margin " + std::to_string(margin) + " (max err " +
                  std::to_string(err) + ");";
        if (!(margin <= 2 * err)) {
          throw lftest::FailTest{path + ": argmax differs beyond a near-tie:" + detail};
        }
      }
      const int32_t next = tc;  // teacher-forced by the CPU
      lc = sc.forward(std::span<const int32_t>(&next, 1), false);
      lg = sg.forward(std::span<const int32_t>(&next, 1), false);
    }
    std::printf(
        "# %s (%s): %d steps, logits error %.2e of their scale, %d near-tie argmax "
        "differences%s\n",
        path.c_str(), gpu->name().c_str(), steps, worst_err, mismatches, detail.c_str());
  }
}

TEST(cuda_batched_pass_rows_equal_one_token_passes) {
  auto gpu = cuda_or_skip();
  const auto paths = model_paths();
  if (paths.empty()) SKIP("set LEAPFROG_CUDA_MODELS to GGUF paths");
  for (const std::string& path : paths) {
    auto m = Model::load(path, gpu);
    const int vocab = m->hparams().n_vocab;
    const auto ids = prompt_for(vocab, 40);
    const int prefix = 20, n = int(ids.size()) - prefix;  // a pass of n tokens
    Session a(*m, SessionParams{.n_ctx = 512});
    a.forward(std::span<const int32_t>(ids.data(), prefix), false);
    const auto batched = a.forward(std::span<const int32_t>(ids.data() + prefix, n), true);
    const std::vector<float> rows(batched.begin(), batched.end());
    Session b(*m, SessionParams{.n_ctx = 512});
    b.forward(std::span<const int32_t>(ids.data(), prefix), false);
    for (int i = 0; i < n; ++i) {
      const auto one = b.forward(std::span<const int32_t>(ids.data() + prefix + i, 1), false);
      if (std::memcmp(one.data(), rows.data() + size_t(i) * vocab, vocab * sizeof(float)) != 0) {
        throw lftest::FailTest{path + ": row " + std::to_string(i) + " of a " + std::to_string(n) +
                               "-token pass differs from its one-token pass"};
      }
    }
    std::printf("# %s: %d-token pass rows bit-identical to one-token passes\n", path.c_str(), n);
  }
}

TEST(cuda_speculative_equals_plain_decoding) {
  auto gpu = cuda_or_skip();
  const auto paths = model_paths();
  if (paths.empty()) SKIP("set LEAPFROG_CUDA_MODELS to GGUF paths");
  for (const std::string& path : paths) {
    auto m = Model::load(path, gpu);
    const auto prompt = prompt_for(m->hparams().n_vocab, 48);
    std::vector<std::vector<int32_t>> outs;
    std::vector<GenerationStats> stats;
    for (int variant = 0; variant < 3; ++variant) {
      GenerationConfig cfg;
      cfg.max_tokens = 64;
      cfg.sampling.temperature = 0;
      cfg.stop_tokens = {-1};
      cfg.speculation.mode = variant == 0 ? SpecMode::Off : SpecMode::Ngram;
      cfg.speculation.budget = 32;
      cfg.speculation.tree = variant == 2;
      Session s(*m, SessionParams{.n_ctx = 1024});
      std::vector<int32_t> out;
      std::atomic<bool> abort{false};
      stats.push_back(stream_generate(
          s, nullptr, cfg, prompt,
          [&](int32_t t) {
            out.push_back(t);
            return true;
          },
          abort));
      outs.push_back(out);
    }
    for (int variant = 1; variant < 3; ++variant) {
      if (outs[variant] != outs[0]) {
        size_t at = 0;
        while (at < outs[0].size() && at < outs[variant].size() && outs[0][at] == outs[variant][at])
          ++at;
        throw lftest::FailTest{path + (variant == 1 ? ": chain" : ": tree") +
                               " speculation differs from plain decoding at token " +
                               std::to_string(at)};
      }
    }
    std::printf(
        "# %s: plain, chain and tree speculation agree on %zu tokens (chain: %d passes, "
        "%d/%d accepted; tree: %d passes, %d/%d accepted)\n",
        path.c_str(), outs[0].size(), stats[1].target_passes, stats[1].accepted, stats[1].drafted,
        stats[2].target_passes, stats[2].accepted, stats[2].drafted);
  }
}

// Passes replayed as CUDA graphs (backend/cuda/pass_recorder.h) against the same passes as
// plain launches (LEAPFROG_CUDA_GRAPHS=0): every step's logits bit-identical, over decoding
// (the context grows under one graph), rolled-back verification passes of several sizes
// and a token tree (never replayed) in between.
TEST(cuda_graph_replays_equal_plain_launches) {
  auto gpu = cuda_or_skip();
  const auto paths = model_paths();
  if (paths.empty()) SKIP("set LEAPFROG_CUDA_MODELS to GGUF paths");
  setenv("LEAPFROG_CUDA_GRAPHS", "0", 1);
  std::shared_ptr<Backend> plain = create_cuda_backend();
  unsetenv("LEAPFROG_CUDA_GRAPHS");
  std::shared_ptr<Backend> graphed = create_cuda_backend();
  uint64_t replays_before = 0;
  for (const std::string& path : paths) {
    auto mp = Model::load(path, plain);
    auto mg = Model::load(path, graphed);
    const int vocab = mp->hparams().n_vocab;
    const auto ids = prompt_for(vocab, 40);
    Session sp(*mp, SessionParams{.n_ctx = 512});
    Session sg(*mg, SessionParams{.n_ctx = 512});
    int compared = 0;
    const auto same = [&](std::span<const float> a, std::span<const float> b, const char* what) {
      CHECK_EQ(a.size(), b.size());
      if (std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) != 0) {
        throw lftest::FailTest{path + ": " + what + " pass " + std::to_string(compared) +
                               ": a graph replay differs from plain launches"};
      }
      ++compared;
    };
    same(sp.forward(ids, false), sg.forward(ids, false), "prompt");
    for (int step = 0; step < 48; ++step) {
      const int32_t t = ids[size_t(step) % ids.size()];
      same(sp.forward(std::span<const int32_t>(&t, 1), false),
           sg.forward(std::span<const int32_t>(&t, 1), false), "decode");
      if (step % 6 == 5) {
        const int n = 2 + step % 17;  // a verification pass, rolled back
        const std::span<const int32_t> draft(ids.data() + 3, size_t(n));
        same(sp.forward(draft, true), sg.forward(draft, true), "verification");
        sp.truncate(sp.n_past() - n);
        sg.truncate(sg.n_past() - n);
      }
      if (step == 20) {  // a token tree: root and two children of it
        const int32_t tree_ids[3] = {ids[1], ids[2], ids[3]};
        const int32_t parents[3] = {-1, 0, 0};
        same(sp.forward_tree(tree_ids, parents), sg.forward_tree(tree_ids, parents), "tree");
        sp.truncate(sp.n_past() - 3);
        sg.truncate(sg.n_past() - 3);
      }
    }
    uint64_t replays = 0, interrupted = 0;
    for (const auto& [name, value] : graphed->counters()) {
      if (name == "graph_replays") replays = value;
      if (name == "passes_interrupted") interrupted = value;
    }
    std::printf(
        "# %s: %d passes bit-identical with and without graphs (%llu replays, %llu passes "
        "interrupted so far)\n",
        path.c_str(), compared, static_cast<unsigned long long>(replays),
        static_cast<unsigned long long>(interrupted));
    // A mixture of experts downloads its routing mid-pass: such passes run as plain launches
    // (interrupted), every other model's passes replay.
    if (mg->hparams().moe()) {
      CHECK(interrupted > 40);
    } else {
      CHECK(replays_before + 40 < replays);
    }
    replays_before = replays;
  }
}

// 10,000 passes of 1..33 tokens with rollbacks: the device's free memory does not move once
// the scratch has grown to the largest pass and every pass size has been captured as a graph
// (66 kinds of pass, each seen twice well before pass 2,000).
TEST(cuda_no_device_memory_growth_over_10000_passes) {
  auto gpu = cuda_or_skip();
  const auto paths = model_paths();
  if (paths.empty()) SKIP("set LEAPFROG_CUDA_MODELS to GGUF paths");
  auto m = Model::load(paths[0], gpu);
  const auto ids = prompt_for(m->hparams().n_vocab, 64);
  Session s(*m, SessionParams{.n_ctx = 512});
  uint32_t r = 7;
  size_t before = 0;
  for (int pass = 0; pass < 10000; ++pass) {
    if (pass == 2000) before = gpu->free_memory();
    r = r * 1664525u + 1013904223u;
    const int n = 1 + int((r >> 8) % 33);
    if (s.n_past() + n > 400) s.truncate(int((r >> 4) % 50));
    s.forward(std::span<const int32_t>(ids.data(), n), (r >> 20) & 1);
    if ((r >> 24) % 3 == 0) s.truncate(std::max(0, s.n_past() - int((r >> 12) % 8)));
  }
  const size_t after = gpu->free_memory();
  std::printf("# %s: free device memory %zu bytes after 2000 passes, %zu after 10000\n",
              paths[0].c_str(), before, after);
  CHECK_EQ(before, after);
}

TEST_MAIN()
