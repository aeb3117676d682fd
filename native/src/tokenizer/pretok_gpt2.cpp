// GPT-2 regex scanner, with the semantics of llama.cpp's hand-written version of
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
#include "tokenizer/pretok_scanners.h"
#include "tokenizer/pretok_segment.h"

namespace leapfrog::pretok {

using namespace unicode;

void split_gpt2(std::span<const uint32_t> cpts, const Segments& in, Segments& out) {
  size_t start = 0;
  for (uint32_t len : in) {
    SegmentCutter seg(cpts, start, start + len, out);
    start += len;
    size_t pos = seg.begin();
    while (pos < seg.end()) {
      const uint32_t c = seg.cpt(pos);
      if (size_t n = contraction_len(seg, pos, /*ignore_case=*/false)) {
        pos += seg.cut(pos + n);
        continue;
      }
      // The class of the run is decided by the character after an optional space.
      uint16_t f = c == ' ' ? seg.flags(pos + 1) : seg.flags(pos);
      auto take_run = [&](auto in_class) {
        pos += (c == ' ');
        while (in_class(f)) f = seg.flags(++pos);
        seg.cut(pos);
      };
      if (f & kLetter) {
        take_run([](uint16_t g) { return (g & kLetter) != 0; });
        continue;
      }
      if (f & kNumber) {
        take_run([](uint16_t g) { return (g & kNumber) != 0; });
        continue;
      }
      auto other = [](uint16_t g) { return g != 0 && !(g & (kWhitespace | kLetter | kNumber)); };
      if (other(f)) {
        take_run(other);
        continue;
      }
      size_t n_ws = 0;
      while (seg.flags(pos + n_ws) & kWhitespace) ++n_ws;
      pos = seg.cut_whitespace_tail(pos, n_ws);
    }
  }
}

}  // namespace leapfrog::pretok
