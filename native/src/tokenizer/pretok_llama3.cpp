// Llama 3 / Qwen2 style regex scanner:
//   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?W+|\p{N}{1,k}| ?[^\sW\p{N}]+[\r\n]*|
//   \s*[\r\n]+|\s+(?!\S)|\s+
// llama.cpp runs the Llama 3 form through a hand-written scanner and the Qwen2 form through
// std::regex over category-collapsed text; both reduce to this leftmost-first scan.
#include "tokenizer/pretok_scanners.h"
#include "tokenizer/pretok_segment.h"

namespace leapfrog::pretok {

using namespace unicode;

void split_llama3_style(std::span<const uint32_t> cpts, const Segments& in, Segments& out,
                        WordSplitOptions options) {
  const uint16_t word = options.marks_in_words ? (kLetter | kMark) : kLetter;
  size_t start = 0;
  for (uint32_t len : in) {
    SegmentCutter seg(cpts, start, start + len, out);
    start += len;
    auto is_newline = [&](size_t p) { return seg.cpt(p) == '\r' || seg.cpt(p) == '\n'; };
    auto is_other = [&](size_t p) {  // [^\sW\p{N}]
      const uint16_t g = seg.flags(p);
      return g != 0 && !(g & (kWhitespace | word | kNumber));
    };
    size_t pos = seg.begin();
    while (pos < seg.end()) {
      const uint32_t c = seg.cpt(pos);
      const uint16_t f = seg.flags(pos);
      if (size_t n = contraction_len(seg, pos, /*ignore_case=*/true)) {
        pos += seg.cut(pos + n);
        continue;
      }
      // [^\r\n\p{L}\p{N}]?W+
      if (!is_newline(pos) && !(f & kNumber)) {
        if ((f & word) || (seg.flags(pos + 1) & word)) {
          ++pos;
          while (seg.flags(pos) & word) ++pos;
          seg.cut(pos);
          continue;
        }
      }
      // \p{N}{1,k}
      if (f & kNumber) {
        uint32_t n = 0;
        while (n < options.max_digits && (seg.flags(pos) & kNumber)) ++pos, ++n;
        seg.cut(pos);
        continue;
      }
      // ' '?[^\sW\p{N}]+[\r\n]*
      if ((c == ' ' && is_other(pos + 1)) || is_other(pos)) {
        pos += (c == ' ');
        while (is_other(pos)) ++pos;
        while (is_newline(pos)) ++pos;
        seg.cut(pos);
        continue;
      }
      size_t n_ws = 0, newline_end = 0;
      while (seg.flags(pos + n_ws) & kWhitespace) {
        if (is_newline(pos + n_ws)) newline_end = pos + n_ws + 1;
        ++n_ws;
      }
      if (newline_end > 0) {  // \s*[\r\n]+
        pos = newline_end;
        seg.cut(pos);
        continue;
      }
      pos = seg.cut_whitespace_tail(pos, n_ws);
    }
  }
}

}  // namespace leapfrog::pretok
