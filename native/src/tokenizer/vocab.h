// A tokenizer vocabulary read from GGUF metadata (`tokenizer.ggml.*`), with the defaults,
// special-token detection and attribute fix-ups llama.cpp's loader applies.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/pretokenizer.h"
#include "tokenizer/token_index.h"

namespace leapfrog {

class GgufFile;

enum class VocabType { kSpm, kBpe };

// Token attributes (a token can carry several, e.g. user-defined forced to control).
enum TokenAttr : uint16_t {
  kAttrUndefined = 0,
  kAttrUnknown = 1 << 0,
  kAttrUnused = 1 << 1,
  kAttrNormal = 1 << 2,
  kAttrControl = 1 << 3,
  kAttrUserDefined = 1 << 4,
  kAttrByte = 1 << 5,
  kAttrLstrip = 1 << 7,
  kAttrRstrip = 1 << 8,
};

struct FimTokens {
  int32_t pre = -1;  // prefix
  int32_t suf = -1;  // suffix
  int32_t mid = -1;  // middle
  int32_t pad = -1;
  int32_t rep = -1;  // repository name
  int32_t sep = -1;  // file separator
};

struct Vocab {
  std::string path;  // for error messages
  VocabType type = VocabType::kSpm;
  std::string model_name;  // tokenizer.ggml.model
  std::string pre_name;    // tokenizer.ggml.pre
  PreTokenizerInfo pre;    // BPE only

  // Token texts live in `arena`; `by_text` indexes views into it.
  std::string arena;
  std::vector<std::string_view> text;
  std::vector<float> score;
  std::vector<uint16_t> attr;
  TextIndex by_text;

  // BPE merges: (left id, right id) -> rank; merges whose halves are not tokens by text.
  PairIndex merge_rank;
  std::unordered_map<std::string, int32_t> merge_rank_by_text;  // "left right"

  int32_t bos = -1, eos = -1, eot = -1, eom = -1, unk = -1, sep = -1, pad = -1, mask = -1;
  FimTokens fim;
  bool add_bos = false, add_eos = false, add_space_prefix = false, clean_spaces = false;
  std::vector<int32_t> eog;             // end-of-generation ids, ascending
  std::vector<int32_t> special_by_len;  // control/user-defined/unknown ids, longest first
  std::string chat_template;

  // Reads the vocabulary; throws std::runtime_error("<path>: ...") on bad metadata.
  static Vocab load(const GgufFile& gguf);

  int32_t n_tokens() const { return static_cast<int32_t>(text.size()); }
  int32_t find(std::string_view s) const { return by_text.find(text, s); }
  int32_t find_merge(int32_t left, int32_t right) const {
    return merge_rank.find(static_cast<uint32_t>(left), static_cast<uint32_t>(right));
  }
  bool has_attr(int32_t id, uint16_t a) const { return (attr[id] & a) != 0; }
};

}  // namespace leapfrog
