// Cutting special-token texts out of the input (llama.cpp's tokenizer_st_partition).
#include <cctype>

#include "tokenizer/special_tokens.h"
#include "tokenizer/vocab.h"

namespace leapfrog {
namespace {

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// Splits one raw fragment on every occurrence of special token `id`.
void split_fragment(const Vocab& v, std::string_view text, int32_t id, Fragment frag,
                    std::vector<Fragment>& out) {
  const std::string_view tok = v.text[id];
  const uint16_t attr = v.attr[id];
  size_t off = frag.offset, len = frag.length;
  while (len > 0) {
    const size_t match = text.substr(0, off + len).find(tok, off);
    if (match == std::string_view::npos) {
      out.push_back({-1, static_cast<uint32_t>(off), static_cast<uint32_t>(len)});
      return;
    }
    size_t left_len = match - off;
    if (attr & kAttrLstrip) {
      while (left_len > 0 && is_space(text[off + left_len - 1])) --left_len;
    }
    if (left_len > 0)
      out.push_back({-1, static_cast<uint32_t>(off), static_cast<uint32_t>(left_len)});
    out.push_back({id, 0, 0});
    size_t right = match + tok.size();
    size_t right_len = off + len - right;
    if (attr & kAttrRstrip) {
      while (right_len > 0 && is_space(text[right])) ++right, --right_len;
    }
    off = right, len = right_len;
  }
}

}  // namespace

std::vector<Fragment> split_special_tokens(const Vocab& v, std::string_view text,
                                           bool parse_special) {
  std::vector<Fragment> frags, next;
  if (text.empty()) return frags;
  frags.push_back({-1, 0, static_cast<uint32_t>(text.size())});
  for (int32_t id : v.special_by_len) {
    if (!parse_special && (v.attr[id] & (kAttrControl | kAttrUnknown))) continue;
    if (v.text[id].empty()) continue;
    // Cheap test first: most special texts do not occur at all.
    bool present = false;
    for (const Fragment& f : frags) {
      if (f.token < 0 &&
          text.substr(f.offset, f.length).find(v.text[id]) != std::string_view::npos) {
        present = true;
        break;
      }
    }
    if (!present) continue;
    next.clear();
    for (const Fragment& f : frags) {
      if (f.token >= 0) {
        next.push_back(f);
      } else {
        split_fragment(v, text, id, f, next);
      }
    }
    frags.swap(next);
  }
  return frags;
}

}  // namespace leapfrog
