// Special tokens: finding them by text when the metadata does not name them, and cutting
// their texts out of the input before the text is tokenized.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace leapfrog {

struct Vocab;

// Fills eot/eom/FIM ids found by text, marks them (and other end-of-generation texts) as
// control tokens, builds vocab.eog and vocab.special_by_len, and applies llama.cpp's per-model
// strip attributes. `model_name` is general.name.
void detect_special_tokens(Vocab& vocab, const std::string& model_name);

// A piece of the input: special token `token`, or (token < 0) raw text [offset, offset+length).
struct Fragment {
  int32_t token;
  uint32_t offset;
  uint32_t length;
};

// Cuts special-token texts out of `text`, longest token first. Control and unknown tokens are
// only recognized with parse_special; user-defined tokens always are (as in llama.cpp).
std::vector<Fragment> split_special_tokens(const Vocab& vocab, std::string_view text,
                                           bool parse_special);

}  // namespace leapfrog
