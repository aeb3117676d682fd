// Single-class regexes (X{min,max} or \s?X{min,max}) as llama.cpp's std::regex fallback runs
// them: leftmost matches, with the unmatched gaps kept as segments of their own.
#include "tokenizer/pretok_scanners.h"
#include "tokenizer/pretok_segment.h"

namespace leapfrog::pretok {
namespace {

using namespace unicode;

bool in_class(RunClass cls, uint32_t cp) {
  switch (cls) {
    case RunClass::kNewline:
      return cp == '\r' || cp == '\n';
    case RunClass::kLetter:
      return flags(cp) & kLetter;
    case RunClass::kPunctuation:
      return flags(cp) & kPunctuation;
    case RunClass::kCjk:  // [\u4E00-\u9FA5\u0800-\u4E00\uAC00-\uD7FF], whitespace excluded
      return ((cp >= 0x0800 && cp <= 0x9FA5) || (cp >= 0xAC00 && cp <= 0xD7FF)) &&
             !(flags(cp) & kWhitespace);
    case RunClass::kNumber:
      return flags(cp) & kNumber;
    case RunClass::kDefaultPunct:
    case RunClass::kFalconPunct:
      if (cp == '$' || cp == '+' || cp == '<' || cp == '=' || cp == '>' || cp == '^' || cp == '~' ||
          cp == '|') {
        return true;
      }
      if (cp == '`') return cls == RunClass::kFalconPunct;
      return flags(cp) & kPunctuation;
    case RunClass::kAsciiDigit:
      return cp >= '0' && cp <= '9';
  }
  return false;
}

}  // namespace

void split_runs(std::span<const uint32_t> cpts, const Segments& in, Segments& out, RunRule rule) {
  size_t start = 0;
  for (uint32_t len : in) {
    SegmentCutter seg(cpts, start, start + len, out);
    start += len;
    auto member = [&](size_t p) { return p < seg.end() && in_class(rule.cls, cpts[p]); };
    size_t pos = seg.begin();
    while (pos < seg.end()) {
      size_t first = pos;  // first code point of the class run
      if (rule.optional_leading_space && (seg.flags(pos) & kWhitespace) && member(pos + 1)) {
        first = pos + 1;
      }
      size_t n = 0;
      while (n < rule.max && member(first + n)) ++n;
      if (n < rule.min) {
        ++pos;
        continue;
      }
      seg.cut(pos);  // the gap before the match
      pos = first + n;
      seg.cut(pos);
    }
    seg.cut(seg.end());
  }
}

}  // namespace leapfrog::pretok
