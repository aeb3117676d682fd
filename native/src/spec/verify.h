// Verifying a deterministic draft against the target's distribution.
// Greedy: accept while the draft token equals the target's choice.
// Sampled: accept draft token x with probability p(x) (the target's probability after its
// sampling filters); on rejection draw from p with x removed and renormalised. This is
// speculative sampling with a one-hot proposal q = δx: min(1, p/q) = p(x), and the residual
// max(0, p − q) is p without x — so every emitted token is distributed exactly as plain
// sampling from the target would distribute it.
#pragma once
#include <cstdint>
#include <span>

#include "sampling/rng.h"
#include "sampling/sampler.h"

namespace leapfrog {

struct Verdict {
  bool accepted = false;
  int32_t token = -1;  // on rejection, the target's replacement token
};

Verdict verify_token(const Sampler& sampler, Rng& rng, const float* logits, int n_vocab,
                     std::span<const int32_t> history, int32_t draft_token);

}  // namespace leapfrog
