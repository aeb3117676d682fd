// Byte-level BPE tokenization (GGUF model "gpt2"): pre-tokenize into words, map bytes to
// GPT-2's printable code points, merge pairs by rank, as llama.cpp's llm_tokenizer_bpe does.
#pragma once
#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

namespace leapfrog {

struct Vocab;

class BpeTokenizer {
 public:
  explicit BpeTokenizer(const Vocab& vocab);
  void tokenize(std::string_view text, std::vector<int32_t>& out) const;

 private:
  struct Scratch;
  // Merges one byte-encoded word.
  void tokenize_word(std::string_view word, Scratch& scratch, std::vector<int32_t>& out) const;
  int32_t rank(std::string_view left, int32_t left_id, std::string_view right,
               int32_t right_id) const;

  const Vocab& vocab_;
  std::array<int32_t, 256> byte_token_;  // token of each byte's GPT-2 code point, or -1
};

}  // namespace leapfrog
