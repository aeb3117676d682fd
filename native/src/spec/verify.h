// Verifying deterministic draft candidates against the target: the token the target's own
// sampler draws at this position — exactly as plain decoding draws it, from the same seeded
// stream, one draw per emitted token — and the candidate equal to it, if any.
// Greedy, that is acceptance by exact match. Sampled, it is rejection sampling for one-hot
// proposals: a candidate x is accepted with probability p(x) (min(1, p/q) with q one-hot) and
// a refuted position's token follows p without the refuted candidates (the residual
// max(0, p − q), renormalised), siblings included — so every emitted token is distributed as
// plain sampling from the target. And more: the text is plain decoding's with the same seed,
// token for token, whatever was drafted (a rejection test with a stream of its own consumed
// draws that depended on the draft lengths, which the adaptive budget sets from timings and a
// session's memory: the same seed gave different text from one request to the next).
#pragma once
#include <cstdint>
#include <span>

#include "sampling/sampler.h"

namespace leapfrog {

struct Verdict {
  int accepted = -1;   // index into the candidates, or -1
  int32_t token = -1;  // the emitted token: the accepted candidate, or the replacement
};

Verdict verify_candidates(Sampler& sampler, const float* logits, int n_vocab,
                          std::span<const int32_t> history, std::span<const int32_t> candidates);

}  // namespace leapfrog
