// Engine benchmark for one GGUF (npm run bench drives it; see test/bench/). Prints JSON.
//
//   lf_bench model.gguf [--threads N] [--reps R] [--pp 512] [--tg 128] [--ctx-tokens 1024]
//            [--batches 1,2,4,8,16,32] [--sections pp,tg,batch] [--max-batch B]
//   lf_bench model.gguf --serve [--threads N] ...
//       reads one command per line on stdin and answers each with one JSON line:
//         info | pp N | tg N | ctx N | pass n | quit
//       (the harness alternates these with llama.cpp's, so both engines see the same load)
//   lf_bench model.gguf --spec off|ngram|draft|auto [--draft F] [--budget N] [--fixed-budget]
//            --prompt-ids FILE[,FILE...] [--max-tokens N] [--reps R] [--carry-learning]
//       greedy generation of prompts given as whitespace-separated token ids (repetition r
//       after prompt r mod their number); tokens/s and accepted tokens per target pass.
//       --carry-learning: each repetition starts from what speculation learned in the ones before
//       (spec/learned.h), as an editor's session does; without it every repetition starts afresh,
//       as a one-shot `leapfrog generate` does.
//
// pp N:   clear the cache, run N prompt tokens (in chunks of --max-batch, the engine's
//         default), time the whole prefill.
// tg N:   clear, run one token, then time N single-token passes (logits of each).
// ctx N:  clear and fill the cache with N tokens (untimed); then
// pass n: one batched pass of n tokens on top of it with every row's logits (what verifying
//         a draft costs), then truncate back to the context. The sizes of --batches take
//         turns (one pass of each per round, --reps rounds), so each ratio is of passes timed
//         in the same seconds.
// Token ids are a fixed pseudo-random sequence over the first 30000 ids of the vocabulary.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "backend/factory.h"
#include "engine/session.h"
#include "model/model.h"
#include "spec/generate.h"

using namespace leapfrog;

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::vector<int32_t> bench_tokens(int n, int n_vocab, uint32_t seed = 12345) {
  std::vector<int32_t> ids(n);
  uint32_t x = seed;
  const int range = std::min(n_vocab, 30000);
  for (int i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    ids[i] = static_cast<int32_t>((x >> 8) % static_cast<uint32_t>(range));
  }
  return ids;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

std::string json_array(const std::vector<double>& v) {
  std::ostringstream o;
  o << "[";
  for (size_t i = 0; i < v.size(); ++i) {
    char b[32];
    std::snprintf(b, sizeof b, "%.3f", v[i]);
    o << (i ? "," : "") << b;
  }
  o << "]";
  return o.str();
}

std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\')
      o += '\\', o += c;
    else if (static_cast<unsigned char>(c) < 0x20)
      o += ' ';
    else
      o += c;
  }
  return o;
}

struct Bench {
  const Model& model;
  Session session;
  int n_vocab;

  Bench(const Model& m, int n_ctx, int max_batch)
      : model(m), session(m, SessionParams{n_ctx, max_batch}), n_vocab(m.hparams().n_vocab) {}

  double pp(int n) {
    session.clear();
    auto ids = bench_tokens(n, n_vocab, 1);
    auto t0 = Clock::now();
    session.forward(ids, false);
    return ms_since(t0);
  }

  double tg(int n) {
    session.clear();
    auto ids = bench_tokens(n + 1, n_vocab, 2);
    session.forward(std::span<const int32_t>(ids.data(), 1), false);
    auto t0 = Clock::now();
    for (int i = 1; i <= n; ++i)
      session.forward(std::span<const int32_t>(ids.data() + i, 1), false);
    return ms_since(t0);
  }

  double ctx(int n) {
    session.clear();
    auto ids = bench_tokens(n, n_vocab, 3);
    auto t0 = Clock::now();
    session.forward(ids, false);
    return ms_since(t0);
  }

  double pass(int n) {
    const int base = session.n_past();
    auto ids = bench_tokens(n, n_vocab, 4 + base);
    auto t0 = Clock::now();
    session.forward(ids, true);
    double ms = ms_since(t0);
    session.truncate(base);
    return ms;
  }
};

// Weights multiplied per token: every 2-D tensor but the embedding table (which is only
// looked up), plus the embedding table again when the output projection is tied to it; of
// a mixture of experts' 3-D tensors, the share of the experts a token uses.
uint64_t matmul_params(const Model& m) {
  uint64_t n = 0;
  bool has_output = false;
  uint64_t embd = 0;
  for (const auto& t : m.gguf().tensors()) {
    if (t.n_dims < 2) continue;
    if (t.name == "token_embd.weight") {
      embd = t.n_elements();
      continue;
    }
    if (t.name == "output.weight") has_output = true;
    // A 3-D expert tensor: a token is multiplied by the experts it is routed to only.
    const ModelHParams& hp = m.hparams();
    n += t.n_dims == 3 && hp.moe() ? t.n_elements() / hp.n_expert * hp.n_expert_used
                                   : t.n_elements();
  }
  return has_output ? n : n + embd;
}

std::string info_json(const Model& m, const Backend& be) {
  const auto& hp = m.hparams();
  std::ostringstream o;
  o << "{\"path\":\"" << json_escape(m.path()) << "\",\"arch\":\"" << hp.arch
    << "\",\"n_vocab\":" << hp.n_vocab << ",\"n_embd\":" << hp.n_embd
    << ",\"n_layer\":" << hp.n_layer << ",\"n_ff\":" << hp.n_ff << ",\"n_head\":" << hp.n_head
    << ",\"n_head_kv\":" << hp.n_head_kv << ",\"head_dim\":" << hp.head_dim
    << ",\"head_dim_v\":" << hp.head_dim_v << ",\"n_ctx_train\":" << hp.n_ctx_train
    << ",\"weight_bytes\":" << m.weight_bytes() << ",\"matmul_params\":" << matmul_params(m)
    << ",\"backend\":\"" << json_escape(be.name()) << "\",\"threads\":" << be.threads() << "}";
  return o.str();
}

std::vector<int> parse_list(const std::string& s) {
  std::vector<int> v;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) v.push_back(std::stoi(item));
  return v;
}

std::vector<int32_t> read_ids(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw std::runtime_error(path + ": cannot read");
  std::vector<int32_t> ids;
  long v;
  while (f >> v) ids.push_back(static_cast<int32_t>(v));
  if (ids.empty()) throw std::runtime_error(path + ": no token ids");
  return ids;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') {
    std::fprintf(stderr,
                 "usage: lf_bench model.gguf [--threads N] [--reps R] [--pp N] [--tg N] "
                 "[--ctx-tokens N] [--batches 1,2,...] [--sections pp,tg,batch] [--serve]\n"
                 "       lf_bench model.gguf --spec off|ngram|draft|auto [--draft F] "
                 "[--budget N] [--fixed-budget] --prompt-ids FILE [--max-tokens N] "
                 "[--carry-learning]\n");
    return 2;
  }
  try {
    std::string path = argv[1];
    BackendOptions bo;
    bo.kind = "cpu";
    int reps = 5, pp_n = 512, tg_n = 128, ctx_n = 1024, max_batch = SessionParams{}.max_batch;
    std::vector<int> batches = {1, 2, 4, 8, 16, 32};
    std::string sections = "pp,tg,batch", spec, draft_path, prompt_ids;
    // The product's configuration (engine/generation_config.h), greedy like completions.
    GenerationConfig config;
    config.sampling.temperature = 0;
    bool serve = false, carry_learning = false;
    for (int i = 2; i < argc; ++i) {
      std::string a = argv[i];
      auto next = [&] {
        if (i + 1 >= argc) throw std::invalid_argument("missing value after " + a);
        return std::string(argv[++i]);
      };
      if (a == "--threads")
        bo.threads = std::stoi(next());
      else if (a == "--backend")
        bo.kind = next();
      else if (a == "--reps")
        reps = std::stoi(next());
      else if (a == "--pp")
        pp_n = std::stoi(next());
      else if (a == "--tg")
        tg_n = std::stoi(next());
      else if (a == "--ctx-tokens")
        ctx_n = std::stoi(next());
      else if (a == "--batches")
        batches = parse_list(next());
      else if (a == "--sections")
        sections = next();
      else if (a == "--max-batch")
        max_batch = std::stoi(next());
      else if (a == "--serve")
        serve = true;
      else if (a == "--spec")
        spec = next();
      else if (a == "--draft")
        draft_path = next();
      else if (a == "--budget")
        config.speculation.budget = std::stoi(next());
      else if (a == "--carry-learning")
        carry_learning = true;
      else if (a == "--fixed-budget")
        config.speculation.adaptive = false;
      else if (a == "--tree")
        config.speculation.tree = true;
      else if (a == "--prompt-ids")
        prompt_ids = next();
      else if (a == "--max-tokens")
        config.max_tokens = std::stoi(next());
      else
        throw std::invalid_argument("unknown option " + a);
    }
    auto backend = create_backend(bo);
    auto t_load = Clock::now();
    auto model = Model::load(path, backend);
    const double load_ms = ms_since(t_load);
    const int max_b = *std::max_element(batches.begin(), batches.end());
    const int n_ctx = std::max({pp_n, tg_n + 1, ctx_n + max_b, 2048});

    if (!spec.empty()) {
      // Speculative (or plain, with "off") greedy generation of the given prompts, repetition
      // r generating after prompt r mod (number of prompts).
      std::vector<std::vector<int32_t>> prompts;
      size_t longest = 0;
      std::stringstream files(prompt_ids);
      for (std::string item; std::getline(files, item, ',');) {
        prompts.push_back(read_ids(item));
        longest = std::max(longest, prompts.back().size());
      }
      if (prompts.empty()) throw std::invalid_argument("--spec needs --prompt-ids FILE[,FILE...]");
      const std::vector<int32_t>& prompt = prompts[0];
      const auto mode = parse_spec_mode(spec);
      if (!mode) throw std::invalid_argument("--spec must be off, ngram, draft or auto");
      config.speculation.mode = *mode;
      if (*mode == SpecMode::Draft && draft_path.empty()) {
        throw std::invalid_argument("--spec draft needs --draft F");
      }
      const int ctx = static_cast<int>(longest) + config.max_tokens + 64;
      Session target(*model, SessionParams{ctx, kMaxPassTokens});
      std::unique_ptr<Model> draft_model;
      std::unique_ptr<Session> draft_session;
      if (!draft_path.empty()) {
        draft_model = Model::load(draft_path, backend);
        draft_session = std::make_unique<Session>(*draft_model, SessionParams{ctx, kMaxPassTokens});
      }
      std::atomic<bool> abort{false};
      std::vector<double> tps, per_pass, draft_ms, verify_ms;
      int generated = 0, passes = 0, drafted = 0, accepted = 0;
      std::vector<int32_t> first_out;
      SpeculationLearned learned;
      for (int r = 0; r < reps; ++r) {
        target.clear();
        if (draft_session) draft_session->clear();
        std::vector<int32_t> out;
        auto on_token = [&](int32_t t) {
          out.push_back(t);
          return true;
        };
        const GenerationStats st =
            stream_generate(target, draft_session.get(), config, prompts[r % prompts.size()],
                            on_token, abort, carry_learning ? &learned : nullptr);
        if (r == 0) first_out = out;
        tps.push_back(st.tokens_per_second());
        per_pass.push_back(st.target_passes ? double(st.generated) / st.target_passes : 0);
        draft_ms.push_back(st.draft_ms);
        verify_ms.push_back(st.verify_ms);
        generated = st.generated;
        passes = st.target_passes;
        drafted = st.drafted;
        accepted = st.accepted;
      }
      std::printf(
          "{\"model\":%s,\"load_ms\":%.1f,\"spec\":\"%s\",\"budget\":%d,\"adaptive\":%s,"
          "\"prompt_tokens\":%zu,\"generated\":%d,\"target_passes\":%d,\"drafted\":%d,"
          "\"accepted\":%d,\"tokens_per_second\":%.3f,\"tokens_per_second_runs\":%s,"
          "\"accepted_per_pass\":%.3f,\"draft_ms\":%.2f,\"verify_ms\":%.2f,\"tokens\":[",
          info_json(*model, *backend).c_str(), load_ms, spec.c_str(), config.speculation.budget,
          config.speculation.adaptive ? "true" : "false", prompt.size(), generated, passes, drafted,
          accepted, median(tps), json_array(tps).c_str(), median(per_pass), median(draft_ms),
          median(verify_ms));
      for (size_t i = 0; i < first_out.size(); ++i) std::printf("%s%d", i ? "," : "", first_out[i]);
      std::printf("]}\n");
      return 0;
    }

    Bench b(*model, n_ctx, max_batch);
    if (serve) {
      // One JSON line per command; stdout is flushed after each.
      std::printf("{\"ready\":true,\"load_ms\":%.1f,\"info\":%s}\n", load_ms,
                  info_json(*model, *backend).c_str());
      std::fflush(stdout);
      std::string line;
      while (std::getline(std::cin, line)) {
        std::istringstream in(line);
        std::string cmd;
        int n = 0;
        in >> cmd >> n;
        try {
          if (cmd == "quit" || cmd.empty()) break;
          double ms;
          if (cmd == "pp")
            ms = b.pp(n);
          else if (cmd == "tg")
            ms = b.tg(n);
          else if (cmd == "ctx")
            ms = b.ctx(n);
          else if (cmd == "pass")
            ms = b.pass(n);
          else if (cmd == "info") {
            std::printf("%s\n", info_json(*model, *backend).c_str());
            std::fflush(stdout);
            continue;
          } else
            throw std::invalid_argument("unknown command " + cmd);
          std::printf("{\"cmd\":\"%s\",\"n\":%d,\"ms\":%.3f}\n", cmd.c_str(), n, ms);
        } catch (const std::exception& e) {
          std::printf("{\"cmd\":\"%s\",\"error\":\"%s\"}\n", cmd.c_str(),
                      json_escape(e.what()).c_str());
        }
        std::fflush(stdout);
      }
      return 0;
    }

    auto has = [&](const char* s) { return sections.find(s) != std::string::npos; };
    std::ostringstream o;
    o << "{\"model\":" << info_json(*model, *backend) << ",\"load_ms\":" << load_ms
      << ",\"reps\":" << reps;
    if (has("pp")) {
      std::vector<double> ms;
      for (int r = 0; r < reps; ++r) ms.push_back(b.pp(pp_n));
      o << ",\"pp\":{\"tokens\":" << pp_n << ",\"ms\":" << json_array(ms)
        << ",\"tokens_per_second\":" << pp_n * 1000.0 / median(ms) << "}";
    }
    if (has("tg")) {
      std::vector<double> ms;
      for (int r = 0; r < reps; ++r) ms.push_back(b.tg(tg_n));
      o << ",\"tg\":{\"tokens\":" << tg_n << ",\"ms\":" << json_array(ms)
        << ",\"tokens_per_second\":" << tg_n * 1000.0 / median(ms) << "}";
    }
    if (has("batch")) {
      b.ctx(ctx_n);
      o << ",\"batch\":{\"ctx\":" << ctx_n << ",\"passes\":[";
      // Warm-up: the largest size first, so whatever a larger pass grows is grown before any
      // size's graph is captured (pass_recorder.h: a grown buffer invalidates the graphs that
      // point at the old one); then each size's second pass is captured as a CUDA graph. The
      // timed passes are the steady state.
      b.pass(*std::max_element(batches.begin(), batches.end()));
      for (int n : batches) b.pass(n), b.pass(n);
      // The sizes take turns, one pass each per round: a shared host's speed drifts over
      // seconds (memory bandwidth moved 43 -> 69 GB/s within minutes, session 21), and sizes
      // timed one after another would divide a fast minute's passes by a slow one's.
      std::vector<std::vector<double>> ms(batches.size());
      for (int r = 0; r < reps; ++r) {
        for (size_t k = 0; k < batches.size(); ++k) ms[k].push_back(b.pass(batches[k]));
      }
      double one = 0;
      for (size_t k = 0; k < batches.size(); ++k) {
        double med = median(ms[k]);
        if (batches[k] == 1) one = med;
        o << (k ? "," : "") << "{\"n\":" << batches[k] << ",\"ms\":" << json_array(ms[k])
          << ",\"median_ms\":" << med;
        if (one > 0) o << ",\"vs_1\":" << med / one;
        o << "}";
      }
      o << "]}";
    }
    const auto counters = backend->counters();
    if (!counters.empty()) {
      o << ",\"counters\":{";
      for (size_t k = 0; k < counters.size(); ++k) {
        o << (k ? "," : "") << "\"" << json_escape(counters[k].first)
          << "\":" << counters[k].second;
      }
      o << "}";
    }
    o << "}";
    std::printf("%s\n", o.str().c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lf_bench: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
