#include "spec/ngram_drafter.h"

#include <algorithm>

namespace leapfrog {

int NgramDrafter::find_continuation(std::span<const int32_t> haystack, size_t limit,
                                    std::span<const int32_t> suffix) {
  const size_t n = suffix.size();
  if (limit > haystack.size()) limit = haystack.size();
  if (n == 0 || limit < n) return -1;
  // Scan backwards so the most recent occurrence wins: recent text predicts best.
  for (size_t end = limit; end >= n; --end) {
    if (haystack[end - 1] != suffix[n - 1]) continue;
    if (std::equal(suffix.begin(), suffix.end(), haystack.begin() + (end - n))) {
      return static_cast<int>(end);
    }
  }
  return -1;
}

void NgramDrafter::propose(std::span<const int32_t> context, int max_len, std::vector<int32_t>& out,
                           const std::atomic<bool>& abort) {
  last_match_ = 0;
  if (max_len <= 0) return;
  const int longest = std::min<int>(max_n_, static_cast<int>(context.size()) - 1);
  for (int n = longest; n >= min_n_; --n) {
    std::span<const int32_t> suffix = context.subspan(context.size() - n);
    // In the context, the match must end before the suffix itself starts to overlap it.
    int at = find_continuation(context, context.size() - 1, suffix);
    std::span<const int32_t> source = context;
    if (at < 0) {
      at = find_continuation(corpus_, corpus_.size(), suffix);
      source = corpus_;
    }
    if (at < 0) continue;
    last_match_ = n;
    const size_t first = out.size();
    if (source.data() == context.data()) {
      // A copy that reaches the end of the context goes on over what it has just proposed
      // (an overlapping copy, as LZ77's): a text repeating with period p = size - at
      // repeats on. The most recent match of a run inside a loop sits right at the end, so
      // without this a loop drafts one token a pass.
      for (int i = 0; i < max_len; ++i) {
        const size_t from = static_cast<size_t>(at) + i;
        out.push_back(from < context.size() ? context[from] : out[first + from - context.size()]);
      }
      return;
    }
    // A copy from the corpus ends at the end of its chunk (-1 separates chunks).
    for (int i = 0; i < max_len && at + i < static_cast<int>(source.size()); ++i) {
      if (source[at + i] < 0) break;
      out.push_back(source[at + i]);
    }
    return;
  }
}

}  // namespace leapfrog
