#include "tokenizer/tokenizer.h"

#include <algorithm>

#include "gguf/gguf_file.h"
#include "tokenizer/bpe_tokenizer.h"
#include "tokenizer/special_tokens.h"
#include "tokenizer/spm_tokenizer.h"

namespace leapfrog {
namespace {

// U+2581 LOWER ONE EIGHTH BLOCK, SentencePiece's visible space.
constexpr std::string_view kSpmSpace = "\xE2\x96\x81";

void escape_spaces(std::string_view in, std::string& out) {
  for (char c : in) {
    if (c == ' ') {
      out.append(kSpmSpace);
    } else {
      out.push_back(c);
    }
  }
}

}  // namespace

std::unique_ptr<Tokenizer> Tokenizer::from_gguf(const GgufFile& gguf) {
  return std::make_unique<Tokenizer>(Vocab::load(gguf));
}

Tokenizer::Tokenizer(Vocab vocab) : vocab_(std::move(vocab)) {
  if (vocab_.type == VocabType::kSpm) {
    spm_ = std::make_unique<SpmTokenizer>(vocab_);
  } else {
    bpe_ = std::make_unique<BpeTokenizer>(vocab_);
  }
  piece_offset_.reserve(vocab_.n_tokens() + 1);
  for (int32_t id = 0; id < vocab_.n_tokens(); ++id) {
    piece_offset_.push_back(static_cast<uint32_t>(piece_arena_.size()));
    piece_arena_ += make_piece(id);
  }
  piece_offset_.push_back(static_cast<uint32_t>(piece_arena_.size()));
}

Tokenizer::~Tokenizer() = default;

std::vector<int32_t> Tokenizer::tokenize(std::string_view text, bool add_special,
                                         bool parse_special) const {
  std::vector<int32_t> out;
  out.reserve(text.size() / 3 + 4);
  if (add_special && vocab_.add_bos && vocab_.bos >= 0) out.push_back(vocab_.bos);
  const std::vector<Fragment> frags = split_special_tokens(vocab_, text, parse_special);
  bool prev_special = true;  // SPM: a space prefix before the first text and after specials
  std::string escaped;
  for (const Fragment& f : frags) {
    if (f.token >= 0) {
      out.push_back(f.token);
      prev_special = true;
      continue;
    }
    const std::string_view piece = text.substr(f.offset, f.length);
    if (spm_) {
      escaped.clear();
      if (vocab_.add_space_prefix && prev_special) escaped.append(kSpmSpace);
      escape_spaces(piece, escaped);
      spm_->tokenize(escaped, out);
    } else {
      bpe_->tokenize(piece, out);
    }
    prev_special = false;
  }
  if (add_special && vocab_.add_eos && vocab_.eos >= 0) out.push_back(vocab_.eos);
  return out;
}

bool Tokenizer::is_eog(int32_t id) const {
  return std::binary_search(vocab_.eog.begin(), vocab_.eog.end(), id);
}

}  // namespace leapfrog
