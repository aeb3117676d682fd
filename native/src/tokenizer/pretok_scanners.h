// The splitting stages pre-tokenizers are built from. Each stage refines a list of segments
// (lengths in code points over one code point array) the way one llama.cpp regex does:
// matches and the gaps between them all become segments.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

namespace leapfrog::pretok {

using Segments = std::vector<uint32_t>;

// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
void split_gpt2(std::span<const uint32_t> cpts, const Segments& in, Segments& out);

// (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?W+|\p{N}{1,max_digits}| ?[^\sW\p{N}]+[\r\n]*|
// \s*[\r\n]+|\s+(?!\S)|\s+   where W is \p{L} (or [\p{L}\p{M}] with marks_in_words).
struct WordSplitOptions {
  uint32_t max_digits = 3;
  bool marks_in_words = false;
};
void split_llama3_style(std::span<const uint32_t> cpts, const Segments& in, Segments& out,
                        WordSplitOptions options);

// Single-class patterns: X{min,max} or \s?X{min,max}.
enum class RunClass {
  kNewline,       // [\r\n]
  kLetter,        // \p{L}
  kPunctuation,   // \p{P}
  kCjk,           // [一-龥ࠀ-一가-퟿]
  kNumber,        // \p{N}
  kDefaultPunct,  // [\p{P}\$\+<=>\^~\|]
  kFalconPunct,   // [\p{P}\$\+<=>\^~\|`]
  kAsciiDigit,    // [0-9]
};
struct RunRule {
  RunClass cls;
  bool optional_leading_space = false;
  uint32_t min = 1;
  uint32_t max = UINT32_MAX;
};
void split_runs(std::span<const uint32_t> cpts, const Segments& in, Segments& out, RunRule rule);

}  // namespace leapfrog::pretok
