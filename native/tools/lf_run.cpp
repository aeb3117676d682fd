// Debugging tool: greedy (or sampled) continuation of a prompt given as token ids.
//   lf_run model.gguf 1 403 407 261 378 [--n 32] [--threads N] [--temp T] [--seed S]
//          [--top-k K] [--top-p P] [--ctx N] [--repeat R] [--backend cpu|cuda] [--spec MODE]
// Prints the generated ids, then timing. Exit 1 with "lf_run: error: ..." on failure.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "backend/factory.h"
#include "engine/session.h"
#include "model/model.h"
#include "spec/generate.h"

using namespace leapfrog;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: lf_run model.gguf id [id...] [--n N] [--threads N] [--temp T]\n");
    return 2;
  }
  try {
    std::string path = argv[1];
    std::vector<int32_t> prompt;
    GenerationConfig gp;  // plain decoding unless --spec says otherwise
    gp.max_tokens = 32;
    gp.speculation.mode = SpecMode::Off;
    BackendOptions bo;
    SessionParams sp;
    int repeat = 1;
    for (int i = 2; i < argc; ++i) {
      std::string a = argv[i];
      auto next = [&] {
        if (i + 1 >= argc) throw std::invalid_argument("missing value after " + a);
        return std::string(argv[++i]);
      };
      if (a == "--n")
        gp.max_tokens = std::stoi(next());
      else if (a == "--threads")
        bo.threads = std::stoi(next());
      else if (a == "--temp")
        gp.sampling.temperature = std::stof(next());
      else if (a == "--seed")
        gp.sampling.seed = std::stoull(next());
      else if (a == "--top-k")
        gp.sampling.top_k = std::stoi(next());
      else if (a == "--top-p")
        gp.sampling.top_p = std::stof(next());
      else if (a == "--ctx")
        sp.n_ctx = std::stoi(next());
      else if (a == "--backend")
        bo.kind = next();
      else if (a == "--spec") {
        const auto m = parse_spec_mode(next());
        if (!m) throw std::invalid_argument("--spec must be off, ngram, draft or auto");
        gp.speculation.mode = *m;
      } else if (a == "--repeat")
        repeat = std::stoi(next());
      else if (a == "--ignore-eos")
        gp.stop_tokens = {-1};
      else
        prompt.push_back(static_cast<int32_t>(std::stol(a)));
    }
    auto backend = create_backend(bo);
    auto model = Model::load(path, backend);
    const auto& hp = model->hparams();
    std::fprintf(stderr,
                 "model %s: arch %s, vocab %d, embd %d, layers %d, heads %d/%d, ff %d, "
                 "backend %s, threads %d\n",
                 path.c_str(), hp.arch.c_str(), hp.n_vocab, hp.n_embd, hp.n_layer, hp.n_head,
                 hp.n_head_kv, hp.n_ff, backend->name().c_str(), backend->threads());
    Session session(*model, sp);
    std::atomic<bool> abort{false};
    for (int r = 0; r < repeat; ++r) {
      session.clear();
      std::vector<int32_t> out;
      GenerationStats st = stream_generate(
          session, nullptr, gp, prompt,
          [&](int32_t t) {
            out.push_back(t);
            return true;
          },
          abort);
      for (size_t i = 0; i < out.size(); ++i) std::printf("%s%d", i ? " " : "", out[i]);
      std::printf("\n");
      std::fprintf(stderr,
                   "prompt %d tokens in %.2f ms (%.1f t/s), generated %d in %.2f ms "
                   "(%.1f t/s), %d passes\n",
                   st.prompt_tokens, st.prompt_ms, st.prompt_tokens * 1000.0 / st.prompt_ms,
                   st.generated, st.decode_ms, st.tokens_per_second(), st.target_passes);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lf_run: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
