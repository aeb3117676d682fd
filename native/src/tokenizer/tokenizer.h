// Tokenizers built from GGUF metadata, token for token equal to llama.cpp's:
// SentencePiece-style ("llama") and byte-level BPE ("gpt2") with the pre-tokenizer the file
// names. Thread-safe for concurrent tokenize/detokenize calls once constructed.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace leapfrog {

class GgufFile;
class SpmTokenizer;
class BpeTokenizer;

class Tokenizer {
 public:
  // Throws std::runtime_error("<path>: <problem>") for a missing or unsupported tokenizer.
  static std::unique_ptr<Tokenizer> from_gguf(const GgufFile& gguf);
  explicit Tokenizer(Vocab vocab);
  ~Tokenizer();
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  // add_special: BOS/EOS as the metadata asks. parse_special: control-token texts in `text`
  // become their ids (user-defined token texts always do, as in llama.cpp).
  std::vector<int32_t> tokenize(std::string_view text, bool add_special, bool parse_special) const;

  // The bytes a token stands for (may be part of a UTF-8 character). Control and unknown
  // tokens render as their text only with render_special; unused tokens render as nothing.
  std::string token_to_piece(int32_t id, bool render_special) const;
  // The pieces concatenated (what a model's output reads as; no space clean-up).
  std::string detokenize(std::span<const int32_t> ids, bool render_special) const;
  // llama.cpp's llama_detokenize: also drops the leading space the SPM prefix adds, can drop
  // BOS/EOS (remove_special) and applies clean_up_tokenization_spaces where the vocab asks.
  std::string detokenize_like_llama(std::span<const int32_t> ids, bool remove_special,
                                    bool unparse_special) const;

  int32_t n_vocab() const { return vocab_.n_tokens(); }
  VocabType type() const { return vocab_.type; }
  std::string_view model() const { return vocab_.model_name; }
  std::string_view pre_tokenizer() const { return vocab_.pre_name; }
  int32_t bos() const { return vocab_.bos; }
  int32_t eos() const { return vocab_.eos; }
  int32_t eot() const { return vocab_.eot; }
  int32_t unk() const { return vocab_.unk; }
  int32_t pad() const { return vocab_.pad; }
  bool add_bos() const { return vocab_.add_bos; }
  bool add_eos() const { return vocab_.add_eos; }
  bool add_space_prefix() const { return vocab_.add_space_prefix; }
  const FimTokens& fim() const { return vocab_.fim; }
  const std::vector<int32_t>& eog_ids() const { return vocab_.eog; }
  bool is_eog(int32_t id) const;
  bool is_control(int32_t id) const { return valid(id) && vocab_.has_attr(id, kAttrControl); }
  bool is_byte(int32_t id) const { return valid(id) && vocab_.has_attr(id, kAttrByte); }
  std::string_view chat_template() const { return vocab_.chat_template; }
  std::string_view token_text(int32_t id) const { return valid(id) ? vocab_.text[id] : ""; }
  int32_t token_id(std::string_view text) const { return vocab_.find(text); }
  float token_score(int32_t id) const { return valid(id) ? vocab_.score[id] : 0.0f; }
  const Vocab& vocab() const { return vocab_; }

 private:
  bool valid(int32_t id) const { return id >= 0 && id < vocab_.n_tokens(); }
  std::string make_piece(int32_t id) const;

  Vocab vocab_;
  std::unique_ptr<SpmTokenizer> spm_;
  std::unique_ptr<BpeTokenizer> bpe_;
  std::string piece_arena_;             // every token's piece with render_special, back to back
  std::vector<uint32_t> piece_offset_;  // n_vocab + 1 offsets into piece_arena_
};

// Turns ids into text one at a time without ever splitting a UTF-8 character: push() returns
// only complete characters (bytes that can never become valid UTF-8 come out as U+FFFD),
// flush() returns what is left at the end.
class StreamingDetokenizer {
 public:
  StreamingDetokenizer(const Tokenizer& tokenizer, bool render_special)
      : tokenizer_(tokenizer), render_special_(render_special) {}
  std::string push(int32_t id);
  std::string flush();
  void reset() { pending_.clear(); }
  // Bytes held back because they end in an incomplete character.
  size_t pending_bytes() const { return pending_.size(); }

 private:
  const Tokenizer& tokenizer_;
  bool render_special_;
  std::string pending_;
};

}  // namespace leapfrog
