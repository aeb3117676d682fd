// SentencePiece-style tokenization (GGUF model "llama"): score-driven bigram merging over
// UTF-8 characters with <0xXX> byte fallback, as llama.cpp's llm_tokenizer_spm does it.
#pragma once
#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

namespace leapfrog {

struct Vocab;

class SpmTokenizer {
 public:
  explicit SpmTokenizer(const Vocab& vocab);
  // `text` must already have its spaces escaped as U+2581.
  void tokenize(std::string_view text, std::vector<int32_t>& out) const;

 private:
  const Vocab& vocab_;
  std::array<int32_t, 256> byte_token_;  // <0xXX>, else the 1-byte text, else unk, else -1
};

}  // namespace leapfrog
