// The speculative generate loop (after mlx-lm's, with budgets for a CPU): the target's own
// next token, plus a draft of up to B tokens, go through the target in one batched pass;
// the longest prefix of the draft the target agrees with is kept, the KV cache rolls back
// over the rest, and the target's token at the first disagreement comes for free.
// Greedy output is identical to plain decoding; sampled output keeps the target's
// distribution (spec/verify.h).
#pragma once
#include <atomic>
#include <functional>
#include <span>

#include "engine/session.h"
#include "spec/drafter.h"

namespace leapfrog {

struct SpecParams {
  int budget = 16;       // largest draft per pass (the controller picks 0..budget)
  bool adaptive = true;  // false: always draft `budget` tokens (benchmarks, tests)
  bool tree = false;     // let drafters branch where unsure; verified with a tree mask
};

struct SpecStats {
  GenerateStats base;
  double draft_ms = 0;
  double verify_ms = 0;
};

// `drafters` are tried in order each pass; the first that proposes anything wins (auto mode
// passes the lookup drafter first, then the draft model).
SpecStats generate_speculative(Session& target, std::span<Drafter* const> drafters,
                               const SpecParams& spec, std::span<const int32_t> prompt,
                               const GenerateParams& params,
                               const std::function<bool(int32_t)>& on_token,
                               const std::atomic<bool>& abort);

}  // namespace leapfrog
