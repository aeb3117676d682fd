#include "spec/verify.h"

#include <algorithm>

namespace leapfrog {

Verdict verify_candidates(Sampler& sampler, const float* logits, int n_vocab,
                          std::span<const int32_t> history, std::span<const int32_t> candidates) {
  const int32_t t = sampler.sample(logits, n_vocab, history);
  const auto it = std::find(candidates.begin(), candidates.end(), t);
  return {it == candidates.end() ? -1 : static_cast<int>(it - candidates.begin()), t};
}

}  // namespace leapfrog
