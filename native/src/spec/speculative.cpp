#include "spec/speculative.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "sampling/rng.h"
#include "sampling/sampler.h"
#include "spec/budget.h"
#include "spec/verify.h"

namespace leapfrog {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// How often a pass with no draft lets a tiny draft through anyway, so a drafter whose
// acceptance estimate fell can show it has recovered.
constexpr int kProbeEvery = 8;

}  // namespace

SpecStats generate_speculative(Session& target, std::span<Drafter* const> drafters,
                               const SpecParams& spec, std::span<const int32_t> prompt,
                               const GenerateParams& params,
                               const std::function<bool(int32_t)>& on_token,
                               const std::atomic<bool>& abort) {
  SpecStats out;
  GenerateStats& st = out.base;
  st.prompt_tokens = static_cast<int>(prompt.size());
  if (prompt.empty()) throw std::invalid_argument("generate: empty prompt");
  if (static_cast<int>(prompt.size()) > target.n_ctx()) {
    throw std::length_error("prompt of " + std::to_string(prompt.size()) +
                            " tokens is longer than the context (" +
                            std::to_string(target.n_ctx()) + ")");
  }
  std::vector<int32_t> stops = params.stop_tokens;
  if (stops.empty() && target.model().hparams().eos_token) {
    stops.push_back(*target.model().hparams().eos_token);
  }
  const auto is_stop = [&](int32_t t) {
    return std::find(stops.begin(), stops.end(), t) != stops.end();
  };
  Sampler sampler(params.sampling);
  // Verification draws from its own stream, so the sampler's stream stays that of plain
  // decoding whenever no draft is made.
  Rng rng(params.sampling.seed ^ 0x5bd1e995ull);
  const int n_vocab = target.n_vocab();
  BudgetController budget(std::min(spec.budget, BudgetController::kMaxBatch - 1));

  // Prefill, reusing the cached prefix.
  auto t0 = Clock::now();
  st.reused_tokens = target.reuse_prefix(prompt);
  std::vector<float> rows;  // logits of the last pass: one row per batch token
  try {
    auto l = target.forward(prompt.subspan(st.reused_tokens), false, &abort);
    rows.assign(l.begin(), l.end());
  } catch (const AbortedError&) {
    st.aborted = true;
    st.prompt_ms = ms_since(t0);
    return out;
  }
  st.prompt_ms = ms_since(t0);

  t0 = Clock::now();
  // Everything the target has seen or emitted: the history for penalties and drafting.
  std::vector<int32_t> history(prompt.begin(), prompt.end());
  const float* next_logits = rows.data();
  int32_t forced = -1;  // a token already drawn by rejection sampling
  DraftTree tree;
  std::vector<int32_t> chain, batch, parents, path, children, child_tokens;
  int passes_without_draft = 0;

  // Emits one token; false when generation must end.
  const auto emit = [&](int32_t tok) {
    if (is_stop(tok)) {
      st.stopped_by_token = true;
      if (params.emit_stop_token) {
        ++st.generated;
        on_token(tok);
      }
      return false;
    }
    ++st.generated;
    history.push_back(tok);
    if (!on_token(tok)) return false;
    return st.generated < params.max_tokens;
  };

  while (st.generated < params.max_tokens) {
    const int32_t tok = forced >= 0 ? forced : sampler.sample(next_logits, n_vocab, history);
    forced = -1;
    if (!emit(tok)) break;
    if (target.n_past() + 1 >= target.n_ctx()) break;
    if (abort.load(std::memory_order_relaxed)) {
      st.aborted = true;
      break;
    }

    // Draft: as many tokens as the budget says pay off (and room allows).
    const auto td = Clock::now();
    tree.clear();
    const int room =
        std::min(params.max_tokens - st.generated, target.n_ctx() - target.n_past() - 2);
    for (Drafter* d : drafters) {
      int k = spec.adaptive ? budget.choose(d->ms_per_token()) : budget.cap();
      if (k == 0 && ++passes_without_draft >= kProbeEvery) k = std::min(2, budget.cap());
      k = std::min(k, room);
      if (k <= 0) continue;
      if (spec.tree) {
        d->propose_tree(history, k, tree, abort);
      } else {
        chain.clear();
        d->propose(history, k, chain, abort);
        for (size_t i = 0; i < chain.size(); ++i) {
          tree.tokens.push_back(chain[i]);
          tree.parents.push_back(static_cast<int32_t>(i) - 1);
        }
      }
      if (tree.size() > 0) break;
    }
    if (tree.size() > 0) passes_without_draft = 0;
    out.draft_ms += ms_since(td);

    // Verify the target's token and the whole draft in one pass. Batch node 0 is the
    // target's token; draft node i is batch node i + 1.
    const auto tv = Clock::now();
    batch.assign(1, tok);
    batch.insert(batch.end(), tree.tokens.begin(), tree.tokens.end());
    parents.assign(1, -1);
    bool branched = false;
    for (size_t i = 0; i < tree.size(); ++i) {
      parents.push_back(tree.parents[i] + 1);
      branched = branched || tree.parents[i] + 1 != static_cast<int32_t>(i);
    }
    const int past = target.n_past();
    try {
      auto l = branched ? target.forward_tree(batch, parents, &abort)
                        : target.forward(batch, /*all_logits=*/true, &abort);
      rows.assign(l.begin(), l.end());
    } catch (const AbortedError&) {
      st.aborted = true;
      break;
    }
    ++st.target_passes;
    budget.record_pass(static_cast<int>(batch.size()), ms_since(tv));

    // Walk down the tree while the target agrees with one of the children.
    path.assign(1, 0);
    int cur = 0;
    bool ended = false;
    while (!ended) {
      children.clear();
      child_tokens.clear();
      for (size_t j = static_cast<size_t>(cur) + 1; j < batch.size(); ++j) {
        if (parents[j] == cur) {
          children.push_back(static_cast<int>(j));
          child_tokens.push_back(batch[j]);
        }
      }
      if (children.empty()) break;
      const Verdict v =
          verify_candidates(sampler, rng, rows.data() + static_cast<size_t>(cur) * n_vocab, n_vocab,
                            history, child_tokens);
      if (v.accepted < 0) {
        // Greedy: the replacement is the argmax, which sampling row `cur` gives again.
        if (!sampler.greedy()) forced = v.token;
        break;
      }
      cur = children[v.accepted];
      path.push_back(cur);
      if (!emit(batch[cur])) ended = true;
    }
    const int accepted = static_cast<int>(path.size()) - 1;
    st.drafted += static_cast<int>(tree.size());
    st.accepted += accepted;
    budget.record_verdict(static_cast<int>(tree.size()), accepted);
    // Keep the target's token and the accepted branch; drop the rest.
    if (branched) {
      target.keep_path(past, path);
    } else {
      target.truncate(past + 1 + accepted);
    }
    next_logits = rows.data() + static_cast<size_t>(cur) * n_vocab;
    out.verify_ms += ms_since(tv);
    if (ended) break;
  }
  st.decode_ms = ms_since(t0);
  return out;
}

}  // namespace leapfrog
