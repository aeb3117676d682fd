#include "spec/model_drafter.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "sampling/logit_scan.h"
#include "sampling/sampler.h"
#include "spec/budget.h"

namespace leapfrog {

namespace {

// Probability of the argmax token under softmax(logits).
float top_probability(const float* logits, int n, int32_t top) {
  return static_cast<float>(1.0 / softmax_denominator(logits, n, logits[top]));
}

// The runner-up token and its probability.
std::pair<int32_t, float> second_choice(const float* logits, int n, int32_t top) {
  int32_t second = top == 0 ? 1 : 0;
  for (int i = 0; i < n; ++i) {
    if (i != top && logits[i] > logits[second]) second = i;
  }
  const float m = logits[top];
  return {second,
          static_cast<float>(std::exp(logits[second] - m) / softmax_denominator(logits, n, m))};
}

}  // namespace

template <typename Step>
int ModelDrafter::draft_chain(std::span<const int32_t> context, int max_len,
                              const std::atomic<bool>& abort, Step step) {
  if (max_len <= 0 || context.empty()) return 0;
  if (static_cast<int>(context.size()) + max_len >= draft_.n_ctx()) {
    max_len = draft_.n_ctx() - static_cast<int>(context.size()) - 1;
    if (max_len <= 0) return 0;
  }
  using Clock = std::chrono::steady_clock;
  const auto ms_since = [](Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
  };
  const auto t0 = Clock::now();
  const int keep = draft_.reuse_prefix(context);
  std::span<const float> logits = draft_.forward(context.subspan(keep), false, &abort);
  const int caught_up = static_cast<int>(context.size()) - keep;
  const double first_ms = ms_since(t0);
  if (caught_up > 2) {
    catch_up_ms_per_token_ = 0.7 * catch_up_ms_per_token_ + 0.3 * (first_ms / caught_up);
  } else {
    first_ms_ = 0.8 * first_ms_ + 0.2 * first_ms;
    // A step reads one token where the first forward read one or two: it costs no more. The
    // per-token figure is measured only by chains of two tokens or more, and while its prior
    // (0.5 ms) stood, the bundled draft's 0.15 ms steps were priced out of every chain longer
    // than one token, so it was never measured (BENCHMARKS.md, session 27).
    ms_per_token_ = std::min(ms_per_token_, first_ms_);
  }
  const auto t1 = Clock::now();
  int drafted = 0;
  int32_t tok[1];
  for (int i = 0; i < max_len; ++i) {
    const int32_t next = step(i, logits.data());
    if (next < 0) break;
    tok[0] = next;
    ++drafted;
    if (i + 1 == max_len || abort.load(std::memory_order_relaxed)) break;
    logits = draft_.forward(tok, false, &abort);
  }
  // Each token after the first cost one forward step and the look at its logits (the
  // first came from the chain's first forward, whatever it had to catch up on).
  if (drafted > 1) ms_per_token_ = 0.8 * ms_per_token_ + 0.2 * (ms_since(t1) / (drafted - 1));
  return drafted;
}

double ModelDrafter::setup_ms(std::span<const int32_t> context) const {
  // The chain's first forward reads the one or two tokens emitted since the draft last
  // ran and costs more than a step; further behind, the catch-up per token read. The
  // draft's cache may hold a refuted branch past the common prefix; n_past bounds it.
  const int behind = static_cast<int>(context.size()) - draft_.n_past();
  const double first = std::max(0.0, first_ms_ - ms_per_token_);
  return behind > 2 ? first + behind * catch_up_ms_per_token_ : first;
}

void ModelDrafter::recall(const SpeculationLearned& learned) {
  const SpeculationLearned::DraftModel& m = learned.draft_model;
  if (!m.known) return;
  first_ms_ = m.first_ms;
  ms_per_token_ = m.ms_per_token;
  catch_up_ms_per_token_ = m.catch_up_ms_per_token;
  accepted_ = m.accepted;
}

void ModelDrafter::remember(SpeculationLearned& learned) const {
  static_assert(std::tuple_size_v<decltype(learned.draft_model.accepted)> == kBandFloor.size(),
                "the memory holds one acceptance per probability band");
  learned.draft_model = {true, first_ms_, ms_per_token_, catch_up_ms_per_token_, accepted_};
}

void ModelDrafter::prefill(std::span<const int32_t> prompt, const std::atomic<bool>& abort) {
  if (prompt.empty() || static_cast<int>(prompt.size()) >= draft_.n_ctx()) return;
  const int keep = draft_.reuse_prefix(prompt);
  draft_.forward(prompt.subspan(keep), false, &abort);
}

void ModelDrafter::propose(std::span<const int32_t> context, int max_len, std::vector<int32_t>& out,
                           const std::atomic<bool>& abort) {
  const int n_vocab = draft_.n_vocab();
  chain_probability_.clear();
  draft_chain(context, max_len, abort, [&](int i, const float* logits) -> int32_t {
    const int32_t top = Sampler::argmax(logits, n_vocab);
    const float p = top_probability(logits, n_vocab, top);
    // Stop where the token is unlikely to be accepted: a wasted row costs more than it is
    // likely to earn.
    if (i > 0 && !worth_drafting(p)) return -1;
    out.push_back(top);
    chain_probability_.push_back(p);
    return top;
  });
}

void ModelDrafter::verdict(int drafted, int accepted) {
  const int chain = std::min(drafted, static_cast<int>(chain_probability_.size()));
  blend_verdict(chain, accepted,
                [&](int i) -> double& { return accepted_[band(chain_probability_[i])]; });
  chain_probability_.clear();
}

void ModelDrafter::propose_tree(std::span<const int32_t> context, int max_nodes, DraftTree& out,
                                const std::atomic<bool>& abort) {
  chain_probability_.clear();  // a tree's verdict calibrates nothing
  const int n_vocab = draft_.n_vocab();
  int32_t chain_parent = -1;
  draft_chain(context, max_nodes, abort, [&](int i, const float* logits) -> int32_t {
    if (static_cast<int>(out.size()) >= max_nodes) return -1;
    const int32_t top = Sampler::argmax(logits, n_vocab);
    const float p_top = top_probability(logits, n_vocab, top);
    if (i > 0 && !worth_drafting(p_top)) return -1;
    out.tokens.push_back(top);
    out.parents.push_back(chain_parent);
    const int32_t top_node = static_cast<int32_t>(out.size()) - 1;
    if (p_top < branch_below_ && static_cast<int>(out.size()) < max_nodes) {
      const auto [second, p_second] = second_choice(logits, n_vocab, top);
      if (p_second > 0.05f) {
        out.tokens.push_back(second);
        out.parents.push_back(chain_parent);
      }
    }
    chain_parent = top_node;
    return top;
  });
}

}  // namespace leapfrog
