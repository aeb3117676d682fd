// Picks the draft length for each pass to maximise tokens per second, from two running
// measurements: what a target pass over n tokens costs on this backend, and how often a
// drafted token is accepted — per drafter, as a lookup and a draft model differ, and per
// band of the drafter's confidence (Drafter::band), as a lookup's long match and its
// one-token match differ. With acceptance rate a per token, a draft of k tokens yields on
// average 1 + a + a^2 + ... + a^k tokens per pass, at cost(k + 1) + k * draft_cost.
#pragma once
#include <array>
#include <span>

#include "engine/generation_config.h"
#include "spec/learned.h"

namespace leapfrog {

// The verdict on a chain of `drafted` tokens under the geometric model: the first `accepted`
// were accepted, the next refuted, the rest never judged. Blends each judged token into the
// running per-token acceptance `a` (accepted / drafted would read a = 0.9 over 8 tokens as
// 0.64). `slot(i)` picks the estimate token i counts towards.
template <class Slot>
void blend_verdict(int drafted, int accepted, Slot slot) {
  for (int i = 0; i < drafted && i <= accepted; ++i) {
    double& a = slot(i);
    a = 0.9 * a + 0.1 * (i < accepted ? 1.0 : 0.0);
  }
}

class BudgetController {
 public:
  static constexpr int kMaxBatch = kMaxPassTokens;
  explicit BudgetController(int cap)
      : cap_(cap < 0 ? 0 : (cap > kMaxBatch - 1 ? kMaxBatch - 1 : cap)) {}

  static constexpr int kMaxDrafters = 4;

  int cap() const { return cap_; }
  // Draft length for the next pass (0..cap) from drafter `d` (its index in the order the
  // loop asks them) in confidence band `band`, given its cost per token and its fixed cost
  // to start a draft.
  int choose(int d, double draft_ms_per_token, double setup_ms = 0, int band = 0) const;
  // Expected tokens per millisecond of a pass that verifies k tokens from drafter d in
  // `band`, its draft costing k * draft_ms_per_token + setup_ms.
  double rate(int d, int k, double draft_ms_per_token, double setup_ms = 0, int band = 0) const;
  // A pass's measured cost; the first pass larger than every earlier one is not counted
  // (see largest_). Sizes not measured for kStalePasses passes drift toward what this one
  // predicts for them (see record_pass).
  void record_pass(int n_tokens, double ms);
  void record_verdict(int d, int drafted, int accepted, int band = 0);
  double acceptance(int d, int band = 0) const { return acceptance_[d][band]; }
  // Where drafter d's band starts before any verdict (Drafter::prior_acceptance).
  void set_prior(int d, int band, double a) { acceptance_[d][band] = a; }
  // Cost estimate of a pass over n tokens (ms), from measurements and interpolation.
  double pass_cost(int n) const;
  // What it has learned, from and into a session's memory (learned.h); `names[d]` is drafter
  // d's Drafter::name().
  void recall(const SpeculationLearned& learned, std::span<const char* const> names);
  void remember(SpeculationLearned& learned, std::span<const char* const> names) const;

 private:
  int cap_;
  // Per drafter and band; an optimistic start, so that each gets tried (set_prior).
  std::array<std::array<double, kAcceptanceBands>, kMaxDrafters> acceptance_ = [] {
    std::array<std::array<double, kAcceptanceBands>, kMaxDrafters> a;
    for (auto& d : a) d.fill(0.7);
    return a;
  }();
  std::array<double, kMaxBatch + 1> cost_{};  // EMA of measured ms, 0 = unmeasured
  // Passes recorded, and the count when each size was last measured.
  long passes_ = 0;
  std::array<long, kMaxBatch + 1> measured_at_{};
  static constexpr long kStalePasses = 32;
  // The prior where no measurement speaks: each extra row costs ~8 % of a one-row pass (a
  // CPU pass is bound by reading the weights).
  static constexpr double kRowShare = 0.08;
  // The most tokens any pass has had. A pass with more is the first to grow the buffers its
  // rows need (all rows' logits, activation scratch: page faults); it is not recorded.
  int largest_ = 0;
};

}  // namespace leapfrog
