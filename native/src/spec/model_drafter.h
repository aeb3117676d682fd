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
  double ms_per_token() const override { return ms_per_token_; }

 private:
  Session& draft_;
  float min_confidence_;
  double ms_per_token_ = 0.5;  // running estimate, refined from measurements
};

}  // namespace leapfrog
