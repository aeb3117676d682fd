#include "spec/speculative.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <span>
#include <string>
#include <vector>

#include "sampling/sampler.h"
#include "spec/budget.h"
#include "spec/verify.h"

namespace leapfrog {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// How often a drafter that the budget gave nothing gets a tiny draft through anyway, so one
// whose acceptance estimate fell can show it has recovered.
constexpr int kProbeEvery = 8;

// The state of one generation and its phases.
class SpecLoop {
 public:
  SpecLoop(Session& target, std::span<Drafter* const> drafters, const GenerationConfig& cfg,
           const TokenCallback& on_token, const std::atomic<bool>& abort,
           SpeculationLearned* learned)
      : target_(target),
        drafters_(drafters),
        cfg_(cfg),
        on_token_(on_token),
        abort_(abort),
        sampler_(cfg.sampling),
        n_vocab_(target.n_vocab()),
        budget_(std::min(cfg.speculation.budget, kMaxDraftBudget)),
        learned_(learned) {
    for (size_t i = 0; i < drafters_.size() && i < names_.size(); ++i) {
      names_[i] = drafters_[i]->name();
      for (int b = 0; b < kAcceptanceBands; ++b) {
        budget_.set_prior(static_cast<int>(i), b, drafters_[i]->prior_acceptance(b));
      }
    }
    if (learned_) {
      budget_.recall(*learned_, drafter_names());
      for (Drafter* d : drafters_) d->recall(*learned_);
    }
    next_row_.reserve(static_cast<size_t>(n_vocab_));
    stops_ = cfg.stop_tokens;
    if (stops_.empty() && target.model().hparams().eos_token) {
      stops_.push_back(*target.model().hparams().eos_token);
    }
  }

  GenerationStats& stats() { return st_; }

  // Hands what this generation learned to the session's memory, for the next one.
  void remember() const {
    if (!learned_) return;
    budget_.remember(*learned_, drafter_names());
    for (const Drafter* d : drafters_) d->remember(*learned_);
  }

  // Runs the prompt (after the prefix the cache shares with it); false when aborted.
  bool prefill(std::span<const int32_t> prompt) {
    st_.prompt_tokens = static_cast<int>(prompt.size());
    if (prompt.empty()) throw std::invalid_argument("generate: empty prompt");
    if (static_cast<int>(prompt.size()) > target_.n_ctx()) {
      throw std::length_error("prompt of " + std::to_string(prompt.size()) +
                              " tokens is longer than the context (" +
                              std::to_string(target_.n_ctx()) + ")");
    }
    const auto t0 = Clock::now();
    st_.reused_tokens = target_.reuse_prefix(prompt);
    history_.assign(prompt.begin(), prompt.end());
    try {
      auto l = target_.forward(prompt.subspan(st_.reused_tokens), false, &abort_);
      next_row_.assign(l.begin(), l.begin() + n_vocab_);
      // The drafters read the prompt now, as the target did: it is prompt work, and in
      // the decoding loop it would be timed as drafting.
      for (Drafter* d : drafters_) d->prefill(prompt, abort_);
    } catch (const AbortedError&) {
      st_.aborted = true;
    }
    next_logits_ = next_row_.data();
    st_.prompt_ms = ms_since(t0);
    return !st_.aborted;
  }

  // The target's own next token: drawn from the last pass's row, or the replacement that
  // verification already drew.
  int32_t next_token() {
    const int32_t tok = forced_ >= 0 ? forced_ : sampler_.sample(next_logits_, n_vocab_, history_);
    forced_ = -1;
    return tok;
  }

  // Emits one token; false when generation must end.
  bool emit(int32_t tok) {
    if (std::find(stops_.begin(), stops_.end(), tok) != stops_.end()) {
      st_.stopped_by_token = true;
      if (cfg_.emit_stop_token) {
        ++st_.generated;
        on_token_(tok);
      }
      return false;
    }
    ++st_.generated;
    history_.push_back(tok);
    if (!on_token_(tok)) return false;
    return st_.generated < cfg_.max_tokens;
  }

  // Whether another pass fits the context and nobody asked to stop.
  bool may_continue() {
    if (target_.n_past() + 1 >= target_.n_ctx()) return false;
    if (abort_.load(std::memory_order_relaxed)) {
      st_.aborted = true;
      return false;
    }
    return true;
  }

  // Phase 1 — draft: as many tokens as the budget says pay off (and room allows). With an
  // adaptive budget every drafter is weighed by the tokens per millisecond it is expected to
  // yield (BudgetController::rate): a lookup's proposal is free, so it is made as long as it
  // can be and cut to what its confidence band's acceptance pays for; a draft model costs,
  // so it runs only when its expected rate beats the draft in hand. With a fixed budget the
  // first drafter that proposes wins.
  void draft() {
    const auto t0 = Clock::now();
    tree_.clear();
    const int room =
        std::min(cfg_.max_tokens - st_.generated, target_.n_ctx() - target_.n_past() - 2);
    const bool adaptive = cfg_.speculation.adaptive;
    drafted_by_ = -1;
    double best = 0;  // expected tokens per ms of the draft in tree_
    const int asked = std::min<int>(drafters_.size(), BudgetController::kMaxDrafters);
    for (int i = 0; i < asked; ++i) {
      Drafter* d = drafters_[i];
      const double cost = d->ms_per_token(), setup = cost > 0 ? d->setup_ms(history_) : 0;
      const bool free_first = adaptive && cost <= 0;
      int k = adaptive ? 0 : budget_.cap(), band = 0;
      if (free_first) {
        propose(*d, std::min(budget_.cap(), room));
        if (candidate_.size() == 0) continue;
        band = band_of(*d);
        k = budget_.choose(i, 0, 0, band);
      } else if (adaptive) {
        k = budget_.choose(i, cost, setup);
      }
      bool probe = false;
      if (k == 0 && tree_.size() == 0 && ++passes_without_draft_[i] >= kProbeEvery) {
        k = std::min(2, budget_.cap());
        probe = true;
      }
      k = std::min(k, room);
      if (k <= 0) continue;
      if (adaptive && cost > 0 && !probe) {
        // A costly drafter must beat the draft in hand, or a plain pass, counting what it
        // costs to start (a draft model's catch-up).
        const double bar = tree_.size() > 0 ? best : budget_.rate(i, 0, 0);
        if (budget_.rate(i, k, cost, setup) <= bar) continue;
      }
      if (free_first) {
        // Nodes come after their parents: the first k are a draft of their own.
        candidate_.tokens.resize(std::min(candidate_.size(), size_t(k)));
        candidate_.parents.resize(candidate_.tokens.size());
      } else {
        propose(*d, k);
        band = band_of(*d);
      }
      if (candidate_.size() == 0) continue;
      passes_without_draft_[i] = 0;
      // What is drafted is paid for: weigh it by what its verification yields.
      const double r = budget_.rate(i, static_cast<int>(candidate_.size()), 0, 0, band);
      if (tree_.size() == 0 || r > best) {
        std::swap(tree_, candidate_);
        best = r;
        drafted_by_ = i;
        drafted_band_ = band;
      }
      if (!adaptive) break;
    }
    st_.draft_ms += ms_since(t0);
  }

  // Phase 2 — verify: the target's token `tok` and the whole draft in one pass. Batch node
  // 0 is `tok`; draft node i is batch node i + 1. False when aborted.
  bool verify(int32_t tok) {
    verify_start_ = Clock::now();
    batch_.assign(1, tok);
    batch_.insert(batch_.end(), tree_.tokens.begin(), tree_.tokens.end());
    parents_.assign(1, -1);
    branched_ = false;
    for (size_t i = 0; i < tree_.size(); ++i) {
      parents_.push_back(tree_.parents[i] + 1);
      branched_ = branched_ || tree_.parents[i] + 1 != static_cast<int32_t>(i);
    }
    past_ = target_.n_past();
    try {
      pass_rows_ = branched_ ? target_.forward_tree(batch_, parents_, &abort_)
                             : target_.forward(batch_, /*all_logits=*/true, &abort_);
    } catch (const AbortedError&) {
      st_.aborted = true;
      return false;
    }
    const int n = static_cast<int>(batch_.size());
    ++st_.target_passes;
    st_.max_pass_tokens = std::max(st_.max_pass_tokens, n);
    budget_.record_pass(n, ms_since(verify_start_));
    return true;
  }

  // Phase 3 — accept: walk down the draft while the target agrees with one of the
  // children, emitting each accepted token. Returns false when generation must end.
  bool accept() {
    path_.assign(1, 0);
    cur_ = 0;
    bool go_on = true;
    while (go_on) {
      children_.clear();
      child_tokens_.clear();
      for (size_t j = static_cast<size_t>(cur_) + 1; j < batch_.size(); ++j) {
        if (parents_[j] == cur_) {
          children_.push_back(static_cast<int>(j));
          child_tokens_.push_back(batch_[j]);
        }
      }
      if (children_.empty()) break;
      // The token plain decoding draws here (spec/verify.h); a refuted draft's replacement
      // is that draw, emitted next without drawing again.
      const Verdict v = verify_candidates(sampler_, row(cur_), n_vocab_, history_, child_tokens_);
      if (v.accepted < 0) {
        forced_ = v.token;
        break;
      }
      cur_ = children_[v.accepted];
      path_.push_back(cur_);
      go_on = emit(batch_[cur_]);
    }
    const int accepted = static_cast<int>(path_.size()) - 1;
    st_.drafted += static_cast<int>(tree_.size());
    st_.accepted += accepted;
    if (drafted_by_ >= 0) {
      budget_.record_verdict(drafted_by_, static_cast<int>(tree_.size()), accepted, drafted_band_);
      if (!branched_) drafters_[drafted_by_]->verdict(static_cast<int>(tree_.size()), accepted);
    }
    return go_on;
  }

  // Phase 4 — commit: keep the target's token and the accepted branch in the KV cache,
  // drop the rest; the next token comes from the last accepted node's row.
  void commit() {
    // The one row the next token comes from, copied before the cache changes (the pass's
    // rows are the session's, until its next forward).
    next_row_.assign(row(cur_), row(cur_) + n_vocab_);
    next_logits_ = next_row_.data();
    if (branched_) {
      target_.keep_path(past_, path_);
    } else {
      target_.truncate(past_ + static_cast<int>(path_.size()));
    }
    st_.verify_ms += ms_since(verify_start_);
  }

 private:
  std::span<const char* const> drafter_names() const {
    return {names_.data(), std::min(drafters_.size(), names_.size())};
  }
  static int band_of(const Drafter& d) { return std::clamp(d.band(), 0, kAcceptanceBands - 1); }
  const float* row(int node) const {
    return pass_rows_.data() + static_cast<size_t>(node) * n_vocab_;
  }

  // d's draft of up to k tokens into candidate_: a tree, or a chain as a tree.
  void propose(Drafter& d, int k) {
    candidate_.clear();
    if (cfg_.speculation.tree) {
      d.propose_tree(history_, k, candidate_, abort_);
      return;
    }
    chain_.clear();
    d.propose(history_, k, chain_, abort_);
    for (size_t i = 0; i < chain_.size(); ++i) {
      candidate_.tokens.push_back(chain_[i]);
      candidate_.parents.push_back(static_cast<int32_t>(i) - 1);
    }
  }

  Session& target_;
  std::span<Drafter* const> drafters_;
  const GenerationConfig& cfg_;
  const TokenCallback& on_token_;
  const std::atomic<bool>& abort_;
  Sampler sampler_;
  const int n_vocab_;
  BudgetController budget_;
  SpeculationLearned* learned_;  // the session's memory, or null
  std::array<const char*, BudgetController::kMaxDrafters> names_{};
  std::vector<int32_t> stops_;
  GenerationStats st_;

  std::vector<int32_t> history_;  // everything the target has seen or emitted
  // The last target pass's logits, one row per batch node, where the session keeps them (valid
  // until its next forward): read in place. Copying every row meant an n x vocab copy each pass
  // (17 rows of a 151,936-token vocabulary: 10 MB) and, as the copy grew with the passes of a
  // fresh generation, its page faults again: 15-30 ms each time a larger pass came
  // (BENCHMARKS.md, session 21).
  std::span<const float> pass_rows_;
  std::vector<float> next_row_;  // the row the next token is drawn from
  const float* next_logits_ = nullptr;
  int32_t forced_ = -1;  // a token already drawn by verification
  // Per drafter: passes since it last drafted while the budget gave it nothing.
  std::array<int, BudgetController::kMaxDrafters> passes_without_draft_{};
  int drafted_by_ = -1;   // which drafter (index in drafters_) made this pass's draft
  int drafted_band_ = 0;  // and in which of its confidence bands
  DraftTree tree_, candidate_;
  std::vector<int32_t> chain_, batch_, parents_, path_, children_, child_tokens_;
  bool branched_ = false;
  int past_ = 0, cur_ = 0;
  Clock::time_point verify_start_;
};

}  // namespace

GenerationStats speculative_generate(Session& target, std::span<Drafter* const> drafters,
                                     const GenerationConfig& config,
                                     std::span<const int32_t> prompt, const TokenCallback& on_token,
                                     const std::atomic<bool>& abort, SpeculationLearned* learned) {
  SpecLoop loop(target, drafters, config, on_token, abort, learned);
  if (!loop.prefill(prompt)) return loop.stats();
  const auto t0 = Clock::now();
  while (loop.stats().generated < config.max_tokens) {
    const int32_t tok = loop.next_token();
    if (!loop.emit(tok) || !loop.may_continue()) break;
    loop.draft();
    if (!loop.verify(tok)) break;
    const bool go_on = loop.accept();
    loop.commit();
    if (!go_on) break;
  }
  loop.stats().decode_ms = ms_since(t0);
  loop.remember();
  return loop.stats();
}

}  // namespace leapfrog
