// Verifying deterministic draft candidates against the target's distribution p (after the
// target's sampling filters).
// Greedy: accept the candidate equal to the target's choice, if any.
// Sampled: try the candidates in order; accept candidate x with probability r(x), where r
// is p with the already rejected candidates removed and renormalised; when all are rejected,
// draw the token from the final r. With one-hot proposals this is exactly speculative
// sampling (min(1, p/q) = p(x), residual max(0, p − q) = p without x), applied recursively
// for siblings — so every emitted token is distributed as plain sampling from the target.
#pragma once
#include <cstdint>
#include <span>

#include "sampling/rng.h"
#include "sampling/sampler.h"

namespace leapfrog {

struct Verdict {
  int accepted = -1;   // index into the candidates, or -1
  int32_t token = -1;  // the emitted token: the accepted candidate, or the replacement
};

Verdict verify_candidates(const Sampler& sampler, Rng& rng, const float* logits, int n_vocab,
                          std::span<const int32_t> history, std::span<const int32_t> candidates);

}  // namespace leapfrog
