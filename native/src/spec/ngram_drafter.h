// Lookup drafting: find the longest recent repeat of the context's last few tokens — in the
// context itself (prompt + output) or in extra text the request carries (other files) — and
// propose what followed it. Free to run, and strong on code, where lines and identifiers
// repeat; a long match gives a long draft.
#pragma once
#include "spec/drafter.h"

namespace leapfrog {

class NgramDrafter : public Drafter {
 public:
  // Matches use suffixes of min_n..max_n tokens, longest first.
  explicit NgramDrafter(int min_n = 2, int max_n = 8) : min_n_(min_n), max_n_(max_n) {}
  const char* name() const override { return "ngram"; }

  // Extra token streams searched after the context (e.g. other open files); -1 separates
  // chunks, and no proposal crosses one.
  void set_corpus(std::vector<int32_t> corpus) { corpus_ = std::move(corpus); }

  void propose(std::span<const int32_t> context, int max_len, std::vector<int32_t>& out,
               const std::atomic<bool>& abort) override;

  // Length of the suffix matched by the last propose() (0: none): a confidence signal.
  int last_match() const { return last_match_; }

  // Bands by the suffix matched: one token; two up to max_n - 1; max_n, the longest looked
  // for. At every position of the bundled pair's benchmark outputs the first token drafted
  // after such a match was right 37 %, 61-94 % and 98 % of the time: one acceptance for all
  // of them drafted too much after a weak match and too little after a strong one
  // (BENCHMARKS.md, session 27).
  int band() const override { return last_match_ <= 1 ? 0 : last_match_ < max_n_ ? 1 : 2; }
  double prior_acceptance(int band) const override {
    return band == 0 ? 0.4 : band == 1 ? 0.7 : 0.95;
  }

 private:
  // Position right after the most recent earlier occurrence of the last n tokens of
  // `context` inside `haystack` (searching only [0, limit)), or -1.
  static int find_continuation(std::span<const int32_t> haystack, size_t limit,
                               std::span<const int32_t> suffix);

  int min_n_, max_n_;
  int last_match_ = 0;
  std::vector<int32_t> corpus_;
};

}  // namespace leapfrog
