#include "tokenizer/bpe_tokenizer.h"

#include <algorithm>
#include <string>
#include <unordered_map>

#include "tokenizer/byte_encoding.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/unicode.h"
#include "tokenizer/vocab.h"

namespace leapfrog {
namespace {

struct Symbol {
  uint32_t start;
  uint32_t n;  // 0 once merged into its left neighbour
  int32_t prev;
  int32_t next;
  int32_t id;  // token of the symbol's text, -1 when it is not a token
};

struct Bigram {
  int32_t left;
  int32_t right;
  int32_t rank;
  uint32_t size;
};

// Lowest rank first; on ties the leftmost pair.
struct LowerPriority {
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  }
};

}  // namespace

struct BpeTokenizer::Scratch {
  std::vector<uint32_t> cpts;
  std::vector<uint32_t> word_lens;
  std::string word;
  std::vector<int32_t> byte_ids;  // token of each byte of `word` (one per symbol)
  std::vector<Symbol> sym;
  std::vector<Bigram> heap;
  // Words already merged in this call (source files repeat identifiers and indentation).
  std::unordered_map<std::string, std::pair<uint32_t, uint32_t>> seen;
  std::vector<int32_t> seen_ids;
};

BpeTokenizer::BpeTokenizer(const Vocab& vocab) : vocab_(vocab) {
  std::string encoded;
  for (int b = 0; b < 256; ++b) {
    encoded.clear();
    byte_encoding::append_encoded(encoded, static_cast<uint8_t>(b));
    byte_token_[b] = vocab.find(encoded);
  }
}

int32_t BpeTokenizer::rank(std::string_view left, int32_t left_id, std::string_view right,
                           int32_t right_id) const {
  if (left_id >= 0 && right_id >= 0) return vocab_.find_merge(left_id, right_id);
  if (vocab_.merge_rank_by_text.empty()) return -1;
  std::string key;
  key.reserve(left.size() + right.size() + 1);
  key.append(left).append(" ").append(right);
  auto it = vocab_.merge_rank_by_text.find(key);
  return it == vocab_.merge_rank_by_text.end() ? -1 : it->second;
}

void BpeTokenizer::tokenize_word(std::string_view word, Scratch& s,
                                 std::vector<int32_t>& out) const {
  if (vocab_.pre.ignore_merges) {
    if (const int32_t id = vocab_.find(word); id >= 0) {
      out.push_back(id);
      return;
    }
  }
  auto& sym = s.sym;
  sym.clear();
  for (size_t off = 0; off < word.size();) {  // one symbol per encoded byte
    const size_t n = std::min(unicode::utf8_len(word[off]), word.size() - off);
    const auto index = static_cast<int32_t>(sym.size());
    sym.push_back({static_cast<uint32_t>(off), static_cast<uint32_t>(n), index - 1,
                   off + n == word.size() ? -1 : index + 1, s.byte_ids[index]});
    off += n;
  }
  auto text = [&](const Symbol& x) { return word.substr(x.start, x.n); };
  auto& heap = s.heap;  // a binary heap, as std::priority_queue keeps it
  heap.clear();
  auto try_add = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const int32_t r = rank(text(sym[left]), sym[left].id, text(sym[right]), sym[right].id);
    if (r < 0) return;
    heap.push_back({left, right, r, sym[left].n + sym[right].n});
    std::push_heap(heap.begin(), heap.end(), LowerPriority{});
  };
  for (int32_t i = 1; i < static_cast<int32_t>(sym.size()); ++i) try_add(i - 1, i);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), LowerPriority{});
    const Bigram b = heap.back();
    heap.pop_back();
    Symbol& l = sym[b.left];
    Symbol& r = sym[b.right];
    if (l.n == 0 || r.n == 0 || l.n + r.n != b.size) continue;  // stale
    l.n += r.n;
    r.n = 0;
    l.next = r.next;
    if (r.next >= 0) sym[r.next].prev = b.left;
    l.id = vocab_.find(text(l));
    try_add(l.prev, b.left);
    try_add(b.left, l.next);
  }
  for (int32_t i = sym.empty() ? -1 : 0; i != -1; i = sym[i].next) {
    if (sym[i].id >= 0) {
      out.push_back(sym[i].id);
      continue;
    }
    for (char c : text(sym[i])) {  // llama.cpp's fallback: single-byte texts, when tokens
      if (const int32_t id = vocab_.find(std::string_view(&c, 1)); id >= 0) out.push_back(id);
    }
  }
}

void BpeTokenizer::tokenize(std::string_view text, std::vector<int32_t>& out) const {
  Scratch s;
  unicode::decode_utf8(text, s.cpts);
  pre_tokenize(vocab_.pre.kind, s.cpts, s.word_lens);
  std::string utf8;
  size_t start = 0;
  for (uint32_t len : s.word_lens) {
    s.word.clear();
    s.byte_ids.clear();
    for (size_t i = start; i < start + len; ++i) {
      utf8.clear();
      unicode::append_utf8(utf8, s.cpts[i]);
      for (char c : utf8) {
        byte_encoding::append_encoded(s.word, static_cast<uint8_t>(c));
        s.byte_ids.push_back(byte_token_[static_cast<uint8_t>(c)]);
      }
    }
    start += len;
    if (auto it = s.seen.find(s.word); it != s.seen.end()) {
      const auto [first, count] = it->second;
      out.insert(out.end(), s.seen_ids.begin() + first, s.seen_ids.begin() + first + count);
      continue;
    }
    const size_t before = out.size();
    tokenize_word(s.word, s, out);
    s.seen.emplace(s.word,
                   std::pair<uint32_t, uint32_t>(static_cast<uint32_t>(s.seen_ids.size()),
                                                 static_cast<uint32_t>(out.size() - before)));
    s.seen_ids.insert(s.seen_ids.end(), out.begin() + before, out.end());
  }
}

}  // namespace leapfrog
