// Unicode helpers for the tokenizers: code point flags (general category as llama.cpp groups
// it, plus White_Space), simple lower-casing and UTF-8 conversion with llama.cpp's lenient
// decoding rules.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace leapfrog::unicode {

// Category flags (exactly one per code point) and the whitespace bit.
enum CpFlag : uint16_t {
  kUndefined = 0x01,
  kNumber = 0x02,       // \p{N}
  kLetter = 0x04,       // \p{L}
  kSeparator = 0x08,    // \p{Z}
  kMark = 0x10,         // \p{M}
  kPunctuation = 0x20,  // \p{P}
  kSymbol = 0x40,       // \p{S}
  kControl = 0x80,      // \p{C}
  kWhitespace = 0x100,  // \s (White_Space)
};

// Flags of a code point; code points past U+10FFFF are undefined.
uint16_t flags(uint32_t cp);
inline bool is_whitespace(uint32_t cp) { return flags(cp) & kWhitespace; }
inline bool is_letter(uint32_t cp) { return flags(cp) & kLetter; }
inline bool is_number(uint32_t cp) { return flags(cp) & kNumber; }

// Simple lower-case mapping (the code point itself when it has none).
uint32_t to_lower(uint32_t cp);

// Length of the UTF-8 sequence a lead byte announces (1 for continuation bytes), the way
// llama.cpp counts characters when it splits text into symbols.
inline size_t utf8_len(char lead) {
  static constexpr uint8_t kLen[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return kLen[static_cast<uint8_t>(lead) >> 4];
}

// Decodes UTF-8 into code points like llama.cpp does: an invalid or truncated sequence costs
// one byte and becomes U+FFFD; overlong forms are accepted as they decode.
void decode_utf8(std::string_view text, std::vector<uint32_t>& out);

// Appends the UTF-8 encoding of `cp` (code points above U+10FFFF are skipped).
void append_utf8(std::string& out, uint32_t cp);

// Length of the longest prefix of `bytes` that is valid UTF-8 and ends on a character
// boundary; `incomplete_tail` is set when the rest is the start of a character that more
// bytes could still complete.
size_t valid_utf8_prefix(std::string_view bytes, bool* incomplete_tail);

}  // namespace leapfrog::unicode
