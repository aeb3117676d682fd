// The real check: stories260K (a pretrained tiny Llama) reproduces llama.cpp's greedy
// continuations token for token, on every instruction-set path; and the session's cache
// operations (truncate, prefix reuse, chunked prefill, all-row logits) change nothing.
#include <atomic>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "engine/session.h"
#include "model/model.h"
#include "spec/generate.h"
#include "test_harness.h"

using namespace leapfrog;

namespace {

struct Case {
  std::vector<int32_t> prompt, expected;
};

// Minimal reader for the expected-file: finds each "prompt_tokens": [...] and the
// "tokens": [...] that follows it.
std::vector<int32_t> int_array_after(const std::string& s, size_t& pos, const std::string& key) {
  const size_t k = s.find("\"" + key + "\"", pos);
  if (k == std::string::npos) return {};
  const size_t open = s.find('[', k), close = s.find(']', open);
  pos = close;
  std::vector<int32_t> out;
  std::stringstream ss(s.substr(open + 1, close - open - 1));
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.find_first_of("0123456789") != std::string::npos) out.push_back(std::stoi(item));
  }
  return out;
}

std::string model_path() {
  const std::string dir = lftest::shared_data_dir();
  if (dir.empty()) SKIP("../shared/data not found (set LEAPFROG_SHARED_DATA)");
  return dir + "/models/stories260K.gguf";
}

std::vector<Case> load_cases() {
  model_path();  // skips when the data is absent
  std::ifstream in(lftest::shared_data_dir() + "/models/stories260K.expected.json");
  if (!in) SKIP("stories260K.expected.json not found");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string s = ss.str();
  std::vector<Case> cases;
  size_t pos = 0;
  for (;;) {
    Case c;
    c.prompt = int_array_after(s, pos, "prompt_tokens");
    if (c.prompt.empty()) break;
    c.expected = int_array_after(s, pos, "tokens");
    cases.push_back(c);
  }
  CHECK(cases.size() >= 3);
  return cases;
}

std::vector<int32_t> greedy(Session& s, const std::vector<int32_t>& prompt, int n) {
  GenerationConfig gp;
  gp.speculation.mode = SpecMode::Off;
  gp.max_tokens = n;
  gp.stop_tokens = {-1};  // never stop early: compare the full list
  std::vector<int32_t> out;
  std::atomic<bool> abort{false};
  stream_generate(
      s, nullptr, gp, prompt,
      [&](int32_t t) {
        out.push_back(t);
        return true;
      },
      abort);
  return out;
}

void run_expected(cpu::Isa isa, int threads) {
  const std::string path = model_path();
  auto cases = load_cases();
  CpuBackendOptions o;
  o.isa = isa;
  o.threads = threads;
  if (isa > cpu::detect_isa()) SKIP(std::string(cpu::isa_name(isa)) + " not available here");
  auto be = std::make_shared<CpuBackend>(o);
  auto model = Model::load(path, be);
  Session s(*model, {});
  for (const Case& c : cases) {
    auto got = greedy(s, c.prompt, static_cast<int>(c.expected.size()));
    for (size_t i = 0; i < c.expected.size(); ++i) {
      if (i >= got.size() || got[i] != c.expected[i]) {
        throw lftest::FailTest{"token " + std::to_string(i) + " differs: got " +
                               (i < got.size() ? std::to_string(got[i]) : "nothing") +
                               ", expected " + std::to_string(c.expected[i])};
      }
    }
  }
}

}  // namespace

// Every faster path this CPU runs: AVX2 (and up) on x86-64, NEON levels on arm64.
TEST(stories260K_matches_llama_cpp_greedy_simd) {
  const std::vector<cpu::Isa> isas = cpu::runnable_isas();
  if (isas.size() < 2) SKIP("only the scalar path runs here");
  for (size_t i = 1; i < isas.size(); ++i) run_expected(isas[i], 0);
}
TEST(stories260K_matches_llama_cpp_greedy_scalar) { run_expected(cpu::Isa::Scalar, 1); }
TEST(stories260K_matches_llama_cpp_greedy_two_threads) { run_expected(cpu::detect_isa(), 2); }

TEST(stories260K_hparams_from_metadata) {
  auto model = Model::load(model_path(), std::make_shared<CpuBackend>());
  const auto& hp = model->hparams();
  CHECK_EQ(hp.arch, std::string("llama"));
  CHECK_EQ(hp.n_vocab, 512);
  CHECK_EQ(hp.n_embd, 64);
  CHECK_EQ(hp.n_layer, 5);
  CHECK(hp.rope.style == RopeStyle::Normal);
}

// Prefix reuse, truncate + recompute and chunked prefill all give the fresh run's tokens.
TEST(kv_truncate_and_prefix_reuse_equal_fresh_run) {
  auto cases = load_cases();
  auto model = Model::load(model_path(), std::make_shared<CpuBackend>());
  const Case& c = cases[0];
  Session fresh(*model, {});
  auto want = greedy(fresh, c.prompt, 40);

  // Same session, a different request first, then the original: the cache is reused only
  // as far as the prompts agree.
  Session s(*model, {});
  greedy(s, cases[1].prompt, 10);
  CHECK(greedy(s, c.prompt, 40) == want);
  // Repeating the request reuses all but the last prompt token.
  std::atomic<bool> abort{false};
  GenerationConfig gp;
  gp.speculation.mode = SpecMode::Off;
  gp.max_tokens = 40;
  gp.stop_tokens = {-1};
  std::vector<int32_t> out;
  GenerationStats st = stream_generate(
      s, nullptr, gp, c.prompt,
      [&](int32_t t) {
        out.push_back(t);
        return true;
      },
      abort);
  CHECK(out == want);
  CHECK_EQ(st.reused_tokens, int(c.prompt.size()) - 1);

  // Prompt extended by the first 20 generated tokens: continuation must be the rest.
  std::vector<int32_t> longer = c.prompt;
  longer.insert(longer.end(), want.begin(), want.begin() + 20);
  auto rest = greedy(s, longer, 20);
  CHECK(std::vector<int32_t>(want.begin() + 20, want.end()) == rest);

  // Roll back over "rejected" tokens and recompute: same logits as a fresh run.
  Session a(*model, {}), b(*model, {});
  std::vector<int32_t> seq = c.prompt;
  seq.insert(seq.end(), want.begin(), want.begin() + 10);
  auto la = a.forward(seq, false);
  std::vector<float> logits_fresh(la.begin(), la.end());
  b.forward(std::span(seq).first(seq.size() - 4), false);
  std::vector<int32_t> junk = {7, 8, 9, 10, 11, 12};
  b.forward(junk, false);
  b.truncate(int(seq.size()) - 4);
  auto lb = b.forward(std::span(seq).last(4), false);
  for (size_t i = 0; i < logits_fresh.size(); ++i)
    CHECK(std::fabs(lb[i] - logits_fresh[i]) < 1e-4f);
}

// A batched pass returning every row equals one-token-at-a-time decoding (the primitive
// that verifies a draft), including when the batch is split into chunks: by max_batch, or by
// a scratch that holds fewer rows of logits (logit_rows, a drafting session's 1). A tree
// larger than those rows is refused with a clear error.
TEST(all_row_logits_equal_sequential_passes) {
  auto cases = load_cases();
  auto model = Model::load(model_path(), std::make_shared<CpuBackend>());
  const int V = model->hparams().n_vocab;
  std::vector<int32_t> seq = cases[0].prompt;
  seq.insert(seq.end(), cases[0].expected.begin(), cases[0].expected.begin() + 30);
  SessionParams sp;
  sp.max_batch = 8;  // forces chunking of the 35 tokens
  SessionParams few_rows;
  few_rows.logit_rows = 3;
  Session batched(*model, sp), narrow(*model, few_rows), single(*model, {});
  auto all = batched.forward(seq, true);
  std::vector<float> rows(all.begin(), all.end());
  CHECK_EQ(rows.size(), seq.size() * V);
  auto all_narrow = narrow.forward(seq, true);
  std::vector<float> rows_narrow(all_narrow.begin(), all_narrow.end());
  CHECK_EQ(rows_narrow.size(), seq.size() * V);
  for (size_t i = 0; i < seq.size(); ++i) {
    auto l = single.forward(std::span(seq).subspan(i, 1), false);
    for (int v = 0; v < V; ++v) {
      CHECK(std::fabs(l[v] - rows[i * V + v]) < 1e-3f);
      CHECK(std::fabs(l[v] - rows_narrow[i * V + v]) < 1e-3f);
    }
  }
  const std::vector<int32_t> tree = {seq[0], seq[1], seq[2], seq[3]}, parents = {-1, 0, 1, 2};
  bool refused = false;
  try {
    narrow.forward_tree(tree, parents);
  } catch (const std::invalid_argument& e) {
    refused = std::string(e.what()).find("exceed the batch of 3") != std::string::npos;
  }
  CHECK(refused);
}

TEST(abort_stops_before_the_next_pass) {
  auto cases = load_cases();
  auto model = Model::load(model_path(), std::make_shared<CpuBackend>());
  Session s(*model, {});
  std::atomic<bool> abort{false};
  GenerationConfig gp;
  gp.speculation.mode = SpecMode::Off;
  gp.max_tokens = 50;
  gp.stop_tokens = {-1};
  int seen = 0;
  GenerationStats st = stream_generate(
      s, nullptr, gp, cases[0].prompt,
      [&](int32_t) {
        if (++seen == 5) abort = true;
        return true;
      },
      abort);
  CHECK(st.aborted);
  CHECK_EQ(st.generated, 5);
  abort = true;
  st = stream_generate(
      s, nullptr, gp, cases[1].prompt, [&](int32_t) { return true; }, abort);
  CHECK(st.aborted);
  CHECK_EQ(st.generated, 0);
}

TEST(context_overflow_is_an_error_not_a_crash) {
  auto model = Model::load(model_path(), std::make_shared<CpuBackend>());
  SessionParams sp;
  sp.n_ctx = 8;
  Session s(*model, sp);
  std::vector<int32_t> prompt(9, 1);
  std::atomic<bool> abort{false};
  bool threw = false;
  try {
    stream_generate(
        s, nullptr, GenerationConfig{}, prompt, [](int32_t) { return true; }, abort);
  } catch (const std::length_error&) {
    threw = true;
  }
  CHECK(threw);
  // Generation stops cleanly when the context fills up.
  std::vector<int32_t> p2 = {1, 403, 407};
  GenerationConfig gp;
  gp.speculation.mode = SpecMode::Off;
  gp.max_tokens = 100;
  gp.stop_tokens = {-1};
  int n = 0;
  stream_generate(
      s, nullptr, gp, p2,
      [&](int32_t) {
        ++n;
        return true;
      },
      abort);
  CHECK(n <= 8 - 3 + 1);
}

TEST(missing_model_file_names_the_path) {
  try {
    Model::load("/nonexistent/model.gguf", std::make_shared<CpuBackend>());
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()).find("/nonexistent/model.gguf") != std::string::npos);
    return;
  }
  throw lftest::FailTest{"no error"};
}

TEST_MAIN()
