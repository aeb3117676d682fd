// An independent plain decoding loop, kept in test code as the reference the product's one
// loop (spec/speculative.h, through stream_generate) is checked against: prefill, then one
// forward pass per token, greedy or sampled with the same sampler.
#pragma once
#include <algorithm>
#include <atomic>
#include <functional>
#include <vector>

#include "engine/session.h"
#include "sampling/sampler.h"

namespace lftest {

inline std::vector<int32_t> reference_decode(leapfrog::Session& s,
                                             const std::vector<int32_t>& prompt,
                                             const leapfrog::SamplingParams& sampling,
                                             int max_tokens, std::vector<int32_t> stops = {}) {
  using namespace leapfrog;
  if (stops.empty() && s.model().hparams().eos_token)
    stops.push_back(*s.model().hparams().eos_token);
  Sampler sampler(sampling);
  s.reuse_prefix(prompt);
  auto l = s.forward(std::span<const int32_t>(prompt).subspan(s.n_past()), false);
  std::vector<float> logits(l.begin(), l.end());
  std::vector<int32_t> history = prompt, out;
  while (static_cast<int>(out.size()) < max_tokens) {
    const int32_t tok = sampler.sample(logits.data(), s.n_vocab(), history);
    if (std::find(stops.begin(), stops.end(), tok) != stops.end()) break;
    out.push_back(tok);
    history.push_back(tok);
    if (static_cast<int>(out.size()) >= max_tokens || s.n_past() + 1 >= s.n_ctx()) break;
    const int32_t next[1] = {tok};
    auto r = s.forward(next, false);
    logits.assign(r.begin(), r.end());
  }
  return out;
}

}  // namespace lftest
