#include "sampling/sampler.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "sampling/logit_scan.h"

namespace leapfrog {

namespace {

void apply_repeat_penalty(std::vector<TokenProb>& c, const SamplingParams& p,
                          std::span<const int32_t> history) {
  if (p.repeat_penalty == 1.0f || p.repeat_last_n == 0 || history.empty()) return;
  const size_t n =
      p.repeat_last_n < 0 ? history.size() : std::min<size_t>(history.size(), p.repeat_last_n);
  std::unordered_set<int32_t> seen(history.end() - n, history.end());
  for (int32_t id : seen) {
    if (id < 0 || static_cast<size_t>(id) >= c.size()) continue;
    float& l = c[id].logit;  // candidates are still indexed by id here
    l = l > 0 ? l / p.repeat_penalty : l * p.repeat_penalty;
  }
}

// Softmax over the candidates' logits into p (candidates sorted by logit, descending).
void softmax(std::vector<TokenProb>& c) {
  const float mx = c.front().logit;
  double sum = 0;
  for (auto& t : c) sum += (t.p = std::exp(t.logit - mx));
  for (auto& t : c) t.p = static_cast<float>(t.p / sum);
}

}  // namespace

int32_t Sampler::argmax(const float* logits, int n_vocab) { return argmax_logit(logits, n_vocab); }

bool Sampler::plain_greedy(std::span<const int32_t> history) const {
  const SamplingParams& p = params_;
  return p.temperature <= 0 &&
         (p.repeat_penalty == 1.0f || p.repeat_last_n == 0 || history.empty());
}

std::vector<TokenProb> Sampler::distribution(const float* logits, int n_vocab,
                                             std::span<const int32_t> history) const {
  const SamplingParams& p = params_;
  if (plain_greedy(history)) {
    // Greedy verification asks this of every row of a pass, and a copy of the vocabulary per
    // row (12 bytes a token: 1.8 MB for Qwen's 151,936) was 2 % of a 0.5B pair's n-gram
    // generation, plus its page faults, while the other thread waited.
    const int32_t best = argmax(logits, n_vocab);
    return {{best, logits[best], 1.0f}};
  }
  std::vector<TokenProb> c(n_vocab);
  for (int32_t i = 0; i < n_vocab; ++i) c[i] = {i, logits[i], 0};
  apply_repeat_penalty(c, p, history);

  auto by_logit = [](const TokenProb& a, const TokenProb& b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
  };
  if (p.temperature <= 0) {
    auto best = std::min_element(c.begin(), c.end(), by_logit);  // first max on ties
    return {{best->id, best->logit, 1.0f}};
  }

  // top-k (partial sort keeps this cheap for big vocabularies).
  size_t keep = c.size();
  if (p.top_k > 0 && static_cast<size_t>(p.top_k) < keep) keep = p.top_k;
  std::partial_sort(c.begin(), c.begin() + keep, c.end(), by_logit);
  c.resize(keep);

  // top-p: the smallest prefix whose probability mass reaches p.
  if (p.top_p < 1.0f) {
    softmax(c);
    double cum = 0;
    size_t n = c.size();
    for (size_t i = 0; i < c.size(); ++i) {
      cum += c[i].p;
      if (cum >= p.top_p) {
        n = i + 1;
        break;
      }
    }
    c.resize(std::max<size_t>(n, 1));
  }

  // min-p: drop tokens less likely than min_p times the most likely one.
  if (p.min_p > 0) {
    const float threshold = c.front().logit + std::log(p.min_p);
    size_t n = 1;
    while (n < c.size() && c[n].logit >= threshold) ++n;
    c.resize(n);
  }

  for (auto& t : c) t.logit /= p.temperature;
  softmax(c);
  return c;
}

int32_t Sampler::sample(const float* logits, int n_vocab, std::span<const int32_t> history) {
  if (plain_greedy(history)) return argmax(logits, n_vocab);  // no copy of the logits
  std::vector<TokenProb> c = distribution(logits, n_vocab, history);
  if (c.size() == 1) return c[0].id;
  const double u = rng_.uniform();
  double cum = 0;
  for (const TokenProb& t : c) {
    cum += t.p;
    if (u < cum) return t.id;
  }
  return c.back().id;  // rounding left a sliver above the last cumulative sum
}

}  // namespace leapfrog
