#include "spec/verify.h"

namespace leapfrog {

Verdict verify_token(const Sampler& sampler, Rng& rng, const float* logits, int n_vocab,
                     std::span<const int32_t> history, int32_t draft_token) {
  const std::vector<TokenProb> dist = sampler.distribution(logits, n_vocab, history);
  if (sampler.greedy()) {
    const int32_t t = dist.front().id;
    return {t == draft_token, t};
  }
  double p_draft = 0;
  for (const TokenProb& c : dist) {
    if (c.id == draft_token) p_draft = c.p;
  }
  if (rng.uniform() < p_draft) return {true, draft_token};
  // Residual: p without the draft token (renormalised by drawing below 1 - p_draft).
  const double r = rng.uniform() * (1.0 - p_draft);
  double acc = 0;
  int32_t last = -1;
  for (const TokenProb& c : dist) {
    if (c.id == draft_token) continue;
    acc += c.p;
    last = c.id;
    if (r < acc) return {false, c.id};
  }
  return {false, last >= 0 ? last : dist.front().id};
}

}  // namespace leapfrog
