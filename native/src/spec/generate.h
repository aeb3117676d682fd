// The one entry point of generation (after mlx-lm's stream_generate): every front end —
// the addon (completion, chat, explain, `leapfrog generate|complete`), lf_bench, lf_run —
// calls it with a GenerationConfig. The policy (spec/policy.h) turns the configuration into
// drafters; the loop (spec/speculative.h) decodes with them; no drafter is plain decoding.
#pragma once
#include <atomic>
#include <span>

#include "engine/generation_config.h"
#include "engine/session.h"
#include "spec/speculative.h"

namespace leapfrog {

// `draft`: the draft model's session, or null. `learned`: what speculation learned in this
// session's earlier generations (spec/learned.h), carried on by a front end that keeps the
// session; null starts afresh. Throws std::invalid_argument for a bad configuration,
// std::length_error for a prompt longer than the context.
GenerationStats stream_generate(Session& target, Session* draft, const GenerationConfig& config,
                                std::span<const int32_t> prompt, const TokenCallback& on_token,
                                const std::atomic<bool>& abort,
                                SpeculationLearned* learned = nullptr);

}  // namespace leapfrog
