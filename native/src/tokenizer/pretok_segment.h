// Shared helper of the pre-tokenizer scanners: one segment of code points, range-checked
// access and the emission of the pieces it is cut into.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "tokenizer/unicode.h"

namespace leapfrog::pretok {

class SegmentCutter {
 public:
  static constexpr uint32_t kOutOfRange = 0xFFFFFFFF;

  SegmentCutter(std::span<const uint32_t> cpts, size_t begin, size_t end,
                std::vector<uint32_t>& out)
      : cpts_(cpts), begin_(begin), end_(end), prev_end_(begin), out_(out) {}

  size_t begin() const { return begin_; }
  size_t end() const { return end_; }
  uint32_t cpt(size_t pos) const { return pos < end_ ? cpts_[pos] : kOutOfRange; }
  // Flags of the code point at pos; 0 outside the segment (no class matches there).
  uint16_t flags(size_t pos) const { return pos < end_ ? unicode::flags(cpts_[pos]) : 0; }
  // Emits [previous cut, pos) as a piece when it is not empty; returns its length.
  size_t cut(size_t pos) {
    const size_t len = pos - prev_end_;
    if (len > 0) out_.push_back(static_cast<uint32_t>(len));
    prev_end_ = pos;
    return len;
  }
  // The regexes' last alternatives, `\s+(?!\S)|\s+|.`, at pos, where a run of n_ws
  // whitespace code points starts (n_ws may be 0): a run followed by more text leaves its
  // last space to the next word. Cuts and returns the position after the piece.
  size_t cut_whitespace_tail(size_t pos, size_t n_ws) {
    if (n_ws > 1 && pos + n_ws < end_) return cut_at(pos + n_ws - 1);
    if (n_ws > 0) return cut_at(pos + n_ws);
    return cut_at(pos + 1);
  }

 private:
  size_t cut_at(size_t pos) {
    cut(pos);
    return pos;
  }

  std::span<const uint32_t> cpts_;
  size_t begin_, end_, prev_end_;
  std::vector<uint32_t>& out_;
};

inline uint32_t ascii_lower(uint32_t c) { return (c >= 'A' && c <= 'Z') ? c + 32 : c; }

// Length of a contraction ('s 't 're 've 'm 'll 'd) starting at pos, 0 if none.
inline size_t contraction_len(const SegmentCutter& seg, size_t pos, bool ignore_case) {
  if (seg.cpt(pos) != '\'' || pos + 1 >= seg.end()) return 0;
  auto low = [&](size_t p) {
    const uint32_t c = seg.cpt(p);
    return ignore_case ? unicode::to_lower(c) : c;
  };
  const uint32_t a = low(pos + 1);
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
  if (pos + 2 >= seg.end()) return 0;
  const uint32_t b = low(pos + 2);
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
  return 0;
}

}  // namespace leapfrog::pretok
