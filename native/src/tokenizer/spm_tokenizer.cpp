#include "tokenizer/spm_tokenizer.h"

#include <cstdio>
#include <queue>

#include "tokenizer/unicode.h"
#include "tokenizer/vocab.h"

namespace leapfrog {
namespace {

struct Symbol {
  uint32_t start;
  uint32_t n;  // 0 once merged into its left neighbour
  int32_t prev;
  int32_t next;
};

struct Bigram {
  int32_t left;
  int32_t right;
  float score;
  uint32_t size;
};

// Highest score first; on ties the leftmost pair.
struct LowerPriority {
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};

}  // namespace

SpmTokenizer::SpmTokenizer(const Vocab& vocab) : vocab_(vocab) {
  for (int b = 0; b < 256; ++b) {
    char hex[8];
    std::snprintf(hex, sizeof(hex), "<0x%02X>", b);
    int32_t id = vocab.find(hex);
    if (id < 0) id = vocab.find(std::string_view(reinterpret_cast<const char*>(&b), 1));
    if (id < 0) id = vocab.unk;
    byte_token_[b] = id;
  }
}

void SpmTokenizer::tokenize(std::string_view text, std::vector<int32_t>& out) const {
  std::vector<Symbol> sym;
  sym.reserve(text.size());
  for (size_t off = 0; off < text.size();) {
    const size_t n = std::min(unicode::utf8_len(text[off]), text.size() - off);
    const auto index = static_cast<int32_t>(sym.size());
    off += n;
    sym.push_back({static_cast<uint32_t>(off - n), static_cast<uint32_t>(n), index - 1,
                   off == text.size() ? -1 : index + 1});
  }
  std::priority_queue<Bigram, std::vector<Bigram>, LowerPriority> queue;
  auto try_add = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const std::string_view s = text.substr(sym[left].start, sym[left].n + sym[right].n);
    const int32_t id = vocab_.find(s);
    if (id < 0) return;
    queue.push({left, right, vocab_.score[id], static_cast<uint32_t>(s.size())});
  };
  for (int32_t i = 1; i < static_cast<int32_t>(sym.size()); ++i) try_add(i - 1, i);
  while (!queue.empty()) {
    const Bigram b = queue.top();
    queue.pop();
    Symbol& l = sym[b.left];
    Symbol& r = sym[b.right];
    if (l.n == 0 || r.n == 0 || l.n + r.n != b.size) continue;  // stale
    l.n += r.n;
    r.n = 0;
    l.next = r.next;
    if (r.next >= 0) sym[r.next].prev = b.left;
    try_add(l.prev, b.left);
    try_add(b.left, l.next);
  }
  for (int32_t i = sym.empty() ? -1 : 0; i != -1; i = sym[i].next) {
    const std::string_view s = text.substr(sym[i].start, sym[i].n);
    if (const int32_t id = vocab_.find(s); id >= 0) {
      out.push_back(id);
      continue;
    }
    for (char c : s) {  // byte fallback
      const int32_t id = byte_token_[static_cast<uint8_t>(c)];
      if (id >= 0) out.push_back(id);
    }
  }
}

}  // namespace leapfrog
