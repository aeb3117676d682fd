#include "spec/budget.h"

#include <cmath>

namespace leapfrog {

double BudgetController::pass_cost(int n) const {
  if (cost_[n] > 0) return cost_[n];
  // Nearest measured sizes below and above; interpolate, or scale from one of them with the
  // prior (kRowShare).
  int lo = n - 1, hi = n + 1;
  while (lo >= 1 && cost_[lo] <= 0) --lo;
  while (hi <= kMaxBatch && cost_[hi] <= 0) ++hi;
  const bool has_lo = lo >= 1, has_hi = hi <= kMaxBatch;
  if (has_lo && has_hi) return cost_[lo] + (cost_[hi] - cost_[lo]) * (n - lo) / (hi - lo);
  if (has_lo) return cost_[lo] * (1 + kRowShare * n) / (1 + kRowShare * lo);
  if (has_hi) return cost_[hi] * (1 + kRowShare * n) / (1 + kRowShare * hi);
  return 1 + kRowShare * n;
}

int BudgetController::choose(int d, double draft_ms_per_token, double setup_ms, int band) const {
  int best_k = 0;
  double best_rate = rate(d, 0, 0);  // a plain pass: no draft, nothing to set up
  for (int k = 1; k <= cap_; ++k) {
    const double r = rate(d, k, draft_ms_per_token, setup_ms, band);
    if (r > best_rate * 1.0001) {
      best_rate = r;
      best_k = k;
    }
  }
  return best_k;
}

double BudgetController::rate(int d, int k, double draft_ms_per_token, double setup_ms,
                              int band) const {
  const double a = acceptance_[d][band];
  double expected = 1, term = 1;  // tokens per pass: 1 + a + ... + a^k
  for (int i = 0; i < k; ++i) expected += term *= a;
  return expected / (pass_cost(k + 1) + k * draft_ms_per_token + setup_ms);
}

void BudgetController::record_pass(int n, double ms) {
  if (n < 1 || n > kMaxBatch || ms <= 0) return;
  // Counted, a first 6-token pass of the bundled model at 3.6 ms (3x its one-token passes, and
  // its 2-token passes then took 1.2-1.4) priced every draft longer than one token out of the
  // rest of a generation: the controller never tries a size it thinks dear again, so the cold
  // figure was never replaced.
  ++passes_;
  if (n > largest_) {
    largest_ = n;
    return;
  }
  cost_[n] = cost_[n] > 0 ? 0.7 * cost_[n] + 0.3 * ms : ms;
  measured_at_[n] = passes_;
  // The controller never tries a size it prices dear, so a figure made dear by one slow pass
  // (the machine busy for a moment) was never replaced, and with a session's memory it outlived
  // its generation too. A size left unmeasured for kStalePasses passes drifts, a tenth per
  // pass, toward what this pass and the prior predict for it, until it is worth trying again
  // and measured; a size truly dearer than the prior is re-tried now and then, at the cost of
  // one pass.
  for (int m = 1; m <= kMaxBatch; ++m) {
    if (m == n || cost_[m] <= 0 || passes_ - measured_at_[m] <= kStalePasses) continue;
    const double predicted = ms * (1 + kRowShare * m) / (1 + kRowShare * n);
    if (cost_[m] > predicted) cost_[m] = 0.9 * cost_[m] + 0.1 * predicted;
  }
}

void BudgetController::recall(const SpeculationLearned& learned,
                              std::span<const char* const> names) {
  static_assert(std::tuple_size_v<decltype(learned.pass_ms)> == kMaxBatch + 1);
  cost_ = learned.pass_ms;
  largest_ = learned.largest_pass;
  passes_ = learned.passes;
  measured_at_ = learned.pass_measured_at;
  for (size_t d = 0; d < names.size() && d < acceptance_.size(); ++d) {
    const auto it = learned.acceptance.find(names[d]);
    if (it != learned.acceptance.end()) acceptance_[d] = it->second;
  }
}

void BudgetController::remember(SpeculationLearned& learned,
                                std::span<const char* const> names) const {
  learned.pass_ms = cost_;
  learned.largest_pass = largest_;
  learned.passes = passes_;
  learned.pass_measured_at = measured_at_;
  for (size_t d = 0; d < names.size() && d < acceptance_.size(); ++d) {
    learned.acceptance[names[d]] = acceptance_[d];
  }
}

void BudgetController::record_verdict(int d, int drafted, int accepted, int band) {
  if (drafted <= 0) return;
  double& a = acceptance_[d][band];
  blend_verdict(drafted, accepted, [&](int) -> double& { return a; });
  if (a < 0.05) a = 0.05;
  if (a > 0.98) a = 0.98;
}

}  // namespace leapfrog
