#include "spec/verify.h"

#include <algorithm>
#include <vector>

namespace leapfrog {

Verdict verify_candidates(const Sampler& sampler, Rng& rng, const float* logits, int n_vocab,
                          std::span<const int32_t> history, std::span<const int32_t> candidates) {
  std::vector<TokenProb> dist = sampler.distribution(logits, n_vocab, history);
  const auto index_of = [&](int32_t tok) -> int {
    auto it = std::find(candidates.begin(), candidates.end(), tok);
    return it == candidates.end() ? -1 : static_cast<int>(it - candidates.begin());
  };
  if (sampler.greedy()) {
    const int32_t t = dist.front().id;
    return {index_of(t), t};
  }
  double mass = 1.0;  // of the residual distribution, before renormalising
  for (size_t c = 0; c < candidates.size(); ++c) {
    double p = 0;
    for (TokenProb& d : dist) {
      if (d.id == candidates[c]) {
        p = d.p;
        d.p = 0;  // removed from the residual either way
      }
    }
    if (mass > 0 && rng.uniform() * mass < p) return {static_cast<int>(c), candidates[c]};
    mass -= p;
  }
  // Every candidate rejected: draw from what remains.
  const double r = rng.uniform() * mass;
  double acc = 0;
  int32_t last = dist.front().id;
  for (const TokenProb& d : dist) {
    if (d.p <= 0) continue;
    acc += d.p;
    last = d.id;
    if (r < acc) return {-1, d.id};
  }
  return {-1, last};
}

}  // namespace leapfrog
