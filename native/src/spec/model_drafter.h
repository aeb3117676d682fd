// Drafting with a smaller model of the same vocabulary. Its KV cache follows the target's
// context (common-prefix reuse drops whatever the target rejected); it drafts greedily and
// stops early where its next token is unlikely to be accepted — judged by the draft's own
// probability of that token, calibrated on what the target accepted so far (a draft's
// probabilities are not the target's acceptance: a random-weight model's top choice has a
// probability near 1e-5 and is accepted every time by the model it was quantized from).
#pragma once
#include <array>
#include <vector>

#include "engine/session.h"
#include "spec/drafter.h"

namespace leapfrog {

class ModelDrafter : public Drafter {
 public:
  explicit ModelDrafter(Session& draft) : draft_(draft) {}
  const char* name() const override { return "draft"; }
  void propose(std::span<const int32_t> context, int max_len, std::vector<int32_t>& out,
               const std::atomic<bool>& abort) override;
  // The greedy chain, plus the runner-up token as an extra leaf wherever the draft's top
  // choice is unsure (top probability below `branch_below`), while nodes remain.
  void propose_tree(std::span<const int32_t> context, int max_nodes, DraftTree& out,
                    const std::atomic<bool>& abort) override;
  // Evaluates the prompt into the draft's cache (reusing whatever prefix it already holds).
  void prefill(std::span<const int32_t> prompt, const std::atomic<bool>& abort) override;
  void verdict(int drafted, int accepted) override;
  double ms_per_token() const override { return ms_per_token_; }
  // A chain's fixed cost beyond ms_per_token per token: its first forward's excess over a
  // step, and the catch-up over the tokens emitted since the draft last ran, beyond the one
  // or two a chain always reads.
  double setup_ms(std::span<const int32_t> context) const override;
  // Running acceptance of the drafted tokens whose draft probability was about `p`.
  double acceptance_at(float p) const { return accepted_[band(p)]; }
  void recall(const SpeculationLearned& learned) override;
  void remember(SpeculationLearned& learned) const override;

 private:
  Session& draft_;
  // Runs the draft over `context` and then greedily onward; calls step(i, logits) for each
  // drafted position until it returns false or `max_len` tokens are drafted.
  template <typename Step>
  int draft_chain(std::span<const int32_t> context, int max_len, const std::atomic<bool>& abort,
                  Step step);

  // Draft probabilities in bands and, per band, the running acceptance of the tokens drafted
  // in it. The start behaves as a fixed threshold of 0.3; every chain's first token is drafted
  // whatever its band, so each band keeps being measured.
  static constexpr std::array<float, 4> kBandFloor = {0.0f, 0.1f, 0.3f, 0.6f};
  static int band(float p) {
    int b = 0;
    while (b + 1 < static_cast<int>(kBandFloor.size()) && p >= kBandFloor[b + 1]) ++b;
    return b;
  }
  // A chain goes on while its next token is more likely accepted than not.
  bool worth_drafting(float p) const { return acceptance_at(p) >= 0.5; }
  std::array<double, kBandFloor.size()> accepted_ = {0.2, 0.45, 0.6, 0.85};
  std::vector<float> chain_probability_;  // of the last chain's tokens, for verdict()
  float branch_below_ = 0.75f;
  // Running estimates of what a chain costs: its first forward (reading the one or two
  // tokens emitted since the draft last ran, then the first token's logits), and each
  // further drafted token (a forward step and the look at its logits). One cost per token
  // charged the first forward to every token, which overstates what a longer chain adds;
  // the budget now weighs k tokens as (first - step) + k * step. (With the bundled pair the
  // split made no difference that runs on a noisy 2-core VM could show: kept because it is
  // the cost the budget's choice is about.)
  double first_ms_ = 0.5;
  double ms_per_token_ = 0.5;
  // Running estimate of a catch-up's cost per token read (a batched pass: far less than a
  // drafted token).
  double catch_up_ms_per_token_ = 0.1;
};

}  // namespace leapfrog
