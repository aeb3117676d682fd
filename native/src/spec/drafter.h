// A drafter proposes tokens that the target model will probably produce next; the target
// then checks them all in one batched pass (spec/speculative.h). Proposals are
// deterministic (a token, not a distribution), which keeps sampled verification exact with
// the simple rule of spec/verify.h.
#pragma once
#include <atomic>
#include <cstdint>
#include <span>
#include <vector>

namespace leapfrog {

class Drafter {
 public:
  virtual ~Drafter() = default;
  virtual const char* name() const = 0;
  // Appends up to `max_len` tokens likely to follow `context` (the prompt and every token
  // emitted so far) to `out`. May propose fewer, or none.
  virtual void propose(std::span<const int32_t> context, int max_len, std::vector<int32_t>& out,
                       const std::atomic<bool>& abort) = 0;
  // Cost of drafting one token, in milliseconds (0 for lookups): the budget weighs it.
  virtual double ms_per_token() const { return 0; }
};

}  // namespace leapfrog
