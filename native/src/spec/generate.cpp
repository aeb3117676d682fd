#include "spec/generate.h"

#include "spec/policy.h"

namespace leapfrog {

GenerationStats stream_generate(Session& target, Session* draft, const GenerationConfig& config,
                                std::span<const int32_t> prompt, const TokenCallback& on_token,
                                const std::atomic<bool>& abort, SpeculationLearned* learned) {
  config.validate();
  DraftPolicy policy = make_draft_policy(config.speculation, draft, config.corpus);
  return speculative_generate(target, policy.order, config, prompt, on_token, abort, learned);
}

}  // namespace leapfrog
