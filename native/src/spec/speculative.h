// The decoding loop (after mlx-lm's speculative_generate_step, with budgets for a CPU). Each
// step has four phases, read top to bottom in speculative_generate():
//   draft  — the drafters propose up to B tokens after the target's own next token;
//   verify — that token and the whole draft go through the target in one batched pass;
//   accept — the longest prefix (or tree branch) of the draft the target agrees with is
//            emitted, and the target's token at the first disagreement comes for free;
//   commit — the KV cache keeps the accepted positions and rolls back over the rest.
// With no drafters every pass verifies one token: plain decoding. Greedy output is
// identical to plain decoding, and so is sampled output for the same seed (verify.h).
#pragma once
#include <atomic>
#include <functional>
#include <span>

#include "engine/generation_config.h"
#include "engine/session.h"
#include "spec/drafter.h"
#include "spec/learned.h"

namespace leapfrog {

// Receives each emitted token; returning false ends generation.
using TokenCallback = std::function<bool(int32_t)>;

// `drafters` are asked in order each pass. With an adaptive budget the draft verified is
// the one expected to yield the most tokens per millisecond (a drafter with a cost per token
// runs only when it is expected to beat the draft in hand, so free lookups go first); with a
// fixed budget the first that proposes anything wins. Front ends call stream_generate
// (spec/generate.h), which picks the drafters. `learned`: the session's memory of earlier
// generations (learned.h), read at the start and updated at the end; null: start afresh.
GenerationStats speculative_generate(Session& target, std::span<Drafter* const> drafters,
                                     const GenerationConfig& config,
                                     std::span<const int32_t> prompt, const TokenCallback& on_token,
                                     const std::atomic<bool>& abort,
                                     SpeculationLearned* learned = nullptr);

}  // namespace leapfrog
