// Pre-tokenizers of byte-level BPE vocabularies: split text into words before BPE merging,
// exactly as llama.cpp splits it for the `tokenizer.ggml.pre` name in the GGUF.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace leapfrog {

enum class PreTokenizerKind {
  kDefault,        // llama.cpp's fallback: punctuation runs, GPT-2 regex, digit groups
  kGpt2,           // GPT-2 regex
  kLlama3,         // Llama 3 regex (digits in groups of up to 3)
  kQwen2,          // Llama 3 regex with single digits
  kQwen35,         // Qwen2 regex with marks inside words
  kDeepseekCoder,  // newline, letters, punctuation, CJK, digit splits
  kStarcoder,      // single digits, then GPT-2 regex
  kFalcon,         // punctuation runs, GPT-2 regex, 3-digit groups
};

struct PreTokenizerInfo {
  PreTokenizerKind kind = PreTokenizerKind::kDefault;
  bool ignore_merges = false;  // a word that is itself a token skips merging
  bool add_bos = false;        // default of add_bos_token for this pre-tokenizer
  bool clean_spaces = true;    // llama.cpp's clean_up_tokenization_spaces default
  bool no_bos = false;         // the vocabulary has no BOS token (chatglm)
};

// The pre-tokenizer llama.cpp uses for `name`; nullopt for names it does not support here.
std::optional<PreTokenizerInfo> find_pre_tokenizer(std::string_view name);
// Comma-separated list of the supported names, for error messages.
std::string supported_pre_tokenizer_names();

// Splits `cpts` into words; appends each word's length in code points to `lens`.
void pre_tokenize(PreTokenizerKind kind, std::span<const uint32_t> cpts,
                  std::vector<uint32_t>& lens);

}  // namespace leapfrog
