// Drafting with a smaller model of the same vocabulary. Its KV cache follows the target's
// context (common-prefix reuse drops whatever the target rejected); it drafts greedily and
// stops early when its own confidence in the next token falls below a threshold.
#pragma once
#include "engine/session.h"
#include "spec/drafter.h"

namespace leapfrog {

class ModelDrafter : public Drafter {
 public:
  ModelDrafter(Session& draft, float min_confidence = 0.4f)
      : draft_(draft), min_confidence_(min_confidence) {}
  const char* name() const override { return "draft"; }
  void propose(std::span<const int32_t> context, int max_len, std::vector<int32_t>& out,
               const std::atomic<bool>& abort) override;
  // The greedy chain, plus the runner-up token as an extra leaf wherever the draft's top
  // choice is unsure (top probability below `branch_below`), while nodes remain.
  void propose_tree(std::span<const int32_t> context, int max_nodes, DraftTree& out,
                    const std::atomic<bool>& abort) override;
  // Evaluates the prompt into the draft's cache (reusing whatever prefix it already holds).
  void prefill(std::span<const int32_t> prompt, const std::atomic<bool>& abort) override;
  double ms_per_token() const override { return ms_per_token_; }

 private:
  Session& draft_;
  // Runs the draft over `context` and then greedily onward; calls step(i, logits) for each
  // drafted position until it returns false or `max_len` tokens are drafted.
  template <typename Step>
  int draft_chain(std::span<const int32_t> context, int max_len, const std::atomic<bool>& abort,
                  Step step);

  float min_confidence_;
  float branch_below_ = 0.75f;
  // Running estimate of what one drafted token costs, refined from measurements: a chain's
  // whole time (its catch-up over the tokens emitted since the last draft, the step that
  // found the draft unsure and stopped it) over the tokens it drafted.
  double ms_per_token_ = 0.5;
};

}  // namespace leapfrog
