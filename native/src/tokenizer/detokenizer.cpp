// Ids back to text: per-token pieces (llama.cpp's token_to_piece), whole sequences and the
// streaming detokenizer that never splits a UTF-8 character.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tokenizer/byte_encoding.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

namespace leapfrog {
namespace {

constexpr std::string_view kSpmSpace = "\xE2\x96\x81";

std::string unescape_spaces(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (s.substr(i, kSpmSpace.size()) == kSpmSpace) {
      out.push_back(' ');
      i += kSpmSpace.size();
    } else {
      out.push_back(s[i++]);
    }
  }
  return out;
}

// Byte-level BPE text -> bytes; code points outside GPT-2's byte alphabet are reported inline
// the way llama.cpp does.
std::string decode_byte_level(std::string_view s) {
  thread_local std::vector<uint32_t> cpts;
  unicode::decode_utf8(s, cpts);
  std::string out;
  for (uint32_t cp : cpts) {
    const int b = byte_encoding::cp_to_byte(cp);
    if (b >= 0) {
      out.push_back(static_cast<char>(b));
      continue;
    }
    std::string utf8;
    unicode::append_utf8(utf8, cp);
    out += "[UNK_BYTE_0x";
    for (char c : utf8) {
      char hex[3];
      std::snprintf(hex, sizeof(hex), "%02x", static_cast<uint8_t>(c));
      out += hex;
    }
    out.append(s);
    out += "]";
  }
  return out;
}

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

}  // namespace

// The piece with render_special (the cache llama.cpp keeps, too).
std::string Tokenizer::make_piece(int32_t id) const {
  const uint16_t attr = vocab_.attr[id];
  const std::string_view text = vocab_.text[id];
  if (attr & (kAttrUnknown | kAttrControl | kAttrUserDefined)) return std::string(text);
  if (attr & kAttrNormal) {
    return vocab_.type == VocabType::kSpm ? unescape_spaces(text) : decode_byte_level(text);
  }
  if (attr & kAttrByte) {
    const std::string hex(text.substr(std::min<size_t>(3, text.size()), 2));
    return std::string(1, static_cast<char>(std::strtol(hex.c_str(), nullptr, 16)));
  }
  return "";  // unused and undefined tokens
}

std::string Tokenizer::token_to_piece(int32_t id, bool render_special) const {
  if (!valid(id)) return "";
  if (!render_special && (vocab_.attr[id] & (kAttrUnknown | kAttrControl))) return "";
  return piece_arena_.substr(piece_offset_[id], piece_offset_[id + 1] - piece_offset_[id]);
}

std::string Tokenizer::detokenize(std::span<const int32_t> ids, bool render_special) const {
  std::string out;
  for (int32_t id : ids) {
    if (!valid(id)) continue;
    if (!render_special && (vocab_.attr[id] & (kAttrUnknown | kAttrControl))) continue;
    out.append(piece_arena_, piece_offset_[id], piece_offset_[id + 1] - piece_offset_[id]);
  }
  return out;
}

std::string Tokenizer::detokenize_like_llama(std::span<const int32_t> ids, bool remove_special,
                                             bool unparse_special) const {
  bool remove_space = vocab_.add_space_prefix;
  if (remove_special && vocab_.add_bos && !ids.empty() && ids.front() == vocab_.bos) {
    remove_space = false;
    ids = ids.subspan(1);
  }
  if (remove_special && vocab_.add_eos && !ids.empty() && ids.back() == vocab_.eos) {
    ids = ids.first(ids.size() - 1);
  }
  std::string text;
  for (int32_t id : ids) {
    std::string piece = token_to_piece(id, unparse_special);
    if (remove_space && !piece.empty() && piece[0] == ' ') piece.erase(0, 1);
    remove_space = false;
    text += piece;
  }
  if (!vocab_.clean_spaces || text.empty()) return text;
  // clean_up_tokenization_spaces, pass by pass as llama.cpp does it.
  std::string a(1, text[0]);
  for (size_t i = 1; i < text.size(); ++i) {  // " ?", " !", " .", " ,"
    const char x = text[i];
    if (text[i - 1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',')) a.pop_back();
    a.push_back(x);
  }
  std::string b(1, a[0]);
  for (size_t i = 1; i < a.size(); ++i) {  // " ' " -> "'"
    const char x = a[i];
    b.push_back(x);
    if (x == '\'' && i + 1 < a.size() && a[i - 1] == ' ' && a[i + 1] == ' ') {
      b.erase(b.size() - 2, 1);  // the space before
      a[++i] = '\0';             // and the one after
    }
  }
  std::string c(1, b[0]);
  for (size_t i = 1; i < b.size(); ++i) {  // " 's", " 'm", " 're", " 've"
    const char x = b[i];
    if (b[i - 1] == ' ' && x == '\'' && i + 1 < b.size()) {
      const char x1 = b[i + 1];
      const char x2 = i + 2 < b.size() ? b[i + 2] : '\0';
      if (x1 == 's' || x1 == 'm' || ((x1 == 'r' || x1 == 'v') && x2 == 'e' && i + 2 < b.size())) {
        c.pop_back();
      }
    }
    c.push_back(x);
  }
  return c;
}

std::string StreamingDetokenizer::push(int32_t id) {
  pending_ += tokenizer_.token_to_piece(id, render_special_);
  std::string out;
  size_t start = 0;
  while (start < pending_.size()) {
    bool incomplete = false;
    const std::string_view rest = std::string_view(pending_).substr(start);
    const size_t n = unicode::valid_utf8_prefix(rest, &incomplete);
    out.append(rest.substr(0, n));
    start += n;
    if (start == pending_.size() || incomplete) break;
    out.append(kReplacement);  // a byte no continuation can make valid
    ++start;
  }
  pending_.erase(0, start);
  return out;
}

std::string StreamingDetokenizer::flush() {
  std::string out;
  if (!pending_.empty()) out.append(kReplacement);
  pending_.clear();
  return out;
}

}  // namespace leapfrog
