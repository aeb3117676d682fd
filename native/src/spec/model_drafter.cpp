#include "spec/model_drafter.h"

#include <chrono>
#include <cmath>

#include "sampling/sampler.h"

namespace leapfrog {

namespace {

// Probability of the argmax token under softmax(logits).
float top_probability(const float* logits, int n, int32_t top) {
  const float m = logits[top];
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += std::exp(static_cast<double>(logits[i] - m));
  return static_cast<float>(1.0 / sum);
}

}  // namespace

void ModelDrafter::propose(std::span<const int32_t> context, int max_len,
                           std::vector<int32_t>& out, const std::atomic<bool>& abort) {
  if (max_len <= 0 || context.empty()) return;
  if (static_cast<int>(context.size()) + max_len >= draft_.n_ctx()) {
    max_len = draft_.n_ctx() - static_cast<int>(context.size()) - 1;
    if (max_len <= 0) return;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const int n_vocab = draft_.n_vocab();
  const int keep = draft_.reuse_prefix(context);
  std::span<const float> logits = draft_.forward(context.subspan(keep), false, &abort);
  int drafted = 0;
  int32_t tok[1];
  for (int i = 0; i < max_len; ++i) {
    tok[0] = Sampler::argmax(logits.data(), n_vocab);
    if (top_probability(logits.data(), n_vocab, tok[0]) < min_confidence_ && i > 0) break;
    out.push_back(tok[0]);
    ++drafted;
    if (i + 1 == max_len || abort.load(std::memory_order_relaxed)) break;
    logits = draft_.forward(tok, false, &abort);
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (drafted > 0) ms_per_token_ = 0.8 * ms_per_token_ + 0.2 * (ms / drafted);
}

}  // namespace leapfrog
