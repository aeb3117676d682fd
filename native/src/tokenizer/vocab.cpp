#include "tokenizer/vocab.h"

#include <algorithm>
#include <cstdio>
#include <initializer_list>
#include <stdexcept>

#include "gguf/gguf_file.h"
#include "tokenizer/special_tokens.h"

namespace leapfrog {
namespace {

[[noreturn]] void fail(const GgufFile& gguf, const std::string& what) {
  throw std::runtime_error(gguf.path() + ": " + what);
}

void warn(const GgufFile& gguf, const std::string& what) {
  std::fprintf(stderr, "leapfrog: warning: %s: %s\n", gguf.path().c_str(), what.c_str());
}

const GgufValue* find_array(const GgufFile& gguf, std::string_view key, bool strings) {
  const GgufValue* v = gguf.find(key);
  if (!v) return nullptr;
  const bool ok = v->is_array() && (strings ? v->elem_type == GgufValueType::STRING
                                            : v->elem_type != GgufValueType::STRING &&
                                                  v->elem_type != GgufValueType::ARRAY);
  if (!ok) fail(gguf, "metadata key '" + std::string(key) + "' has the wrong type");
  return v;
}

uint16_t attr_from_type(double type) {
  switch (static_cast<int>(type)) {
    case 1:
      return kAttrNormal;
    case 2:
      return kAttrUnknown;
    case 3:
      return kAttrControl;
    case 4:
      return kAttrUserDefined;
    case 5:
      return kAttrUnused;
    case 6:
      return kAttrByte;
    default:
      return kAttrUndefined;
  }
}

void read_kind(const GgufFile& gguf, Vocab& v) {
  auto model = gguf.get_string("tokenizer.ggml.model");
  if (!model) fail(gguf, "missing metadata key 'tokenizer.ggml.model' (no tokenizer in this file)");
  v.model_name = std::string(*model);
  v.pre_name = std::string(gguf.get_string("tokenizer.ggml.pre").value_or(""));
  if (v.model_name == "llama") {
    v.type = VocabType::kSpm;
    v.bos = 1, v.eos = 2, v.unk = 0;
    v.add_space_prefix = true, v.add_bos = true, v.add_eos = false, v.clean_spaces = false;
  } else if (v.model_name == "gpt2") {
    v.type = VocabType::kBpe;
    v.bos = 11, v.eos = 11, v.unk = -1;
    if (v.pre_name.empty()) {
      warn(gguf, "no tokenizer.ggml.pre; using the 'default' pre-tokenizer");
      v.pre = *find_pre_tokenizer("default");
    } else if (auto info = find_pre_tokenizer(v.pre_name)) {
      v.pre = *info;
    } else {
      fail(gguf, "unknown pre-tokenizer '" + v.pre_name +
                     "' (tokenizer.ggml.pre); supported: " + supported_pre_tokenizer_names());
    }
    v.add_space_prefix = false, v.add_bos = v.pre.add_bos, v.clean_spaces = v.pre.clean_spaces;
    if (v.pre.no_bos) v.bos = -1;
  } else {
    fail(gguf, "unknown tokenizer model '" + v.model_name +
                   "' (tokenizer.ggml.model); supported: llama, gpt2");
  }
  if (auto b = gguf.get_bool("tokenizer.ggml.add_space_prefix")) v.add_space_prefix = *b;
}

void read_tokens(const GgufFile& gguf, Vocab& v) {
  const GgufValue* tokens = find_array(gguf, "tokenizer.ggml.tokens", true);
  if (!tokens) fail(gguf, "missing metadata key 'tokenizer.ggml.tokens' (no tokenizer vocabulary)");
  const size_t n = tokens->strs.size();
  if (n == 0 || n > INT32_MAX) fail(gguf, "tokenizer.ggml.tokens has no usable tokens");
  const GgufValue* scores = find_array(gguf, "tokenizer.ggml.scores", false);
  const GgufValue* types = find_array(gguf, "tokenizer.ggml.token_type", false);
  if (scores && scores->nums.size() < n) fail(gguf, "tokenizer.ggml.scores is shorter than tokens");
  if (types && types->nums.size() < n)
    fail(gguf, "tokenizer.ggml.token_type is shorter than tokens");

  size_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    total += tokens->strs[i].empty() ? 24 : tokens->strs[i].size();
  }
  v.arena.reserve(total);
  std::vector<std::pair<size_t, size_t>> spans(n);
  for (size_t i = 0; i < n; ++i) {
    std::string_view s = tokens->strs[i];
    std::string name;
    if (s.empty()) {
      name = "[EMPTY_" + std::to_string(i) + "]";
      s = name;
    }
    spans[i] = {v.arena.size(), s.size()};
    v.arena.append(s);
  }
  v.text.resize(n);
  v.score.assign(n, 0.0f);
  v.attr.assign(n, kAttrNormal);
  v.by_text.reset(n);
  for (size_t i = 0; i < n; ++i) {
    v.text[i] = std::string_view(v.arena).substr(spans[i].first, spans[i].second);
  }
  for (size_t i = 0; i < n; ++i) {
    if (const int32_t dup = v.by_text.insert(v.text, static_cast<int32_t>(i)); dup >= 0) {
      fail(gguf, "duplicate token '" + std::string(v.text[i]) + "' in tokenizer.ggml.tokens (ids " +
                     std::to_string(dup) + " and " + std::to_string(i) + ")");
    }
    if (scores) v.score[i] = static_cast<float>(scores->nums[i]);
    if (types) v.attr[i] = attr_from_type(types->nums[i]);
  }
}

void read_merges(const GgufFile& gguf, Vocab& v) {
  const GgufValue* merges = find_array(gguf, "tokenizer.ggml.merges", true);
  if (!merges)
    fail(gguf, "missing metadata key 'tokenizer.ggml.merges' (needed by a gpt2 tokenizer)");
  v.merge_rank.reset(merges->strs.size());
  for (size_t i = 0; i < merges->strs.size(); ++i) {
    std::string_view m = merges->strs[i];
    const size_t space = m.find(' ', 1);
    if (space == std::string_view::npos) continue;  // llama.cpp keeps it as ("", ""): never used
    const int32_t left = v.find(m.substr(0, space)), right = v.find(m.substr(space + 1));
    const auto rank = static_cast<int32_t>(i);
    if (left >= 0 && right >= 0) {
      v.merge_rank.insert(static_cast<uint32_t>(left), static_cast<uint32_t>(right), rank);
    } else {
      v.merge_rank_by_text.try_emplace(std::string(m), rank);
    }
  }
}

void read_special_ids(const GgufFile& gguf, Vocab& v) {
  const std::pair<const char*, int32_t*> keys[] = {
      {"tokenizer.ggml.bos_token_id", &v.bos},
      {"tokenizer.ggml.eos_token_id", &v.eos},
      {"tokenizer.ggml.eot_token_id", &v.eot},
      {"tokenizer.ggml.eom_token_id", &v.eom},
      {"tokenizer.ggml.unknown_token_id", &v.unk},
      {"tokenizer.ggml.seperator_token_id", &v.sep},
      {"tokenizer.ggml.padding_token_id", &v.pad},
      {"tokenizer.ggml.mask_token_id", &v.mask},
      {"tokenizer.ggml.fim_pre_token_id", &v.fim.pre},
      {"tokenizer.ggml.fim_suf_token_id", &v.fim.suf},
      {"tokenizer.ggml.fim_mid_token_id", &v.fim.mid},
      {"tokenizer.ggml.fim_pad_token_id", &v.fim.pad},
      {"tokenizer.ggml.fim_rep_token_id", &v.fim.rep},
      {"tokenizer.ggml.fim_sep_token_id", &v.fim.sep},
      {"tokenizer.ggml.prefix_token_id", &v.fim.pre},  // deprecated names
      {"tokenizer.ggml.suffix_token_id", &v.fim.suf},
      {"tokenizer.ggml.middle_token_id", &v.fim.mid},
  };
  for (auto [key, id] : keys) {
    if (*id >= v.n_tokens()) *id = -1;  // a default outside this vocabulary
    auto value = gguf.get_int(key);
    if (!value) continue;
    if (*value < 0 || *value >= v.n_tokens()) {
      // UINT32_MAX is how converters write "none": keep the default quietly.
      if (*value == -1 || *value == UINT32_MAX) continue;
      warn(gguf, std::string(key) + " = " + std::to_string(*value) + " is out of range; ignored");
    } else {
      *id = static_cast<int32_t>(*value);
    }
  }
  if (auto b = gguf.get_bool("tokenizer.ggml.add_bos_token")) v.add_bos = *b;
  if (auto b = gguf.get_bool("tokenizer.ggml.add_eos_token")) v.add_eos = *b;
  if (v.add_bos && v.bos < 0)
    fail(gguf, "add_bos_token is true but the vocabulary has no BOS token");
  if (v.add_eos && v.eos < 0)
    fail(gguf, "add_eos_token is true but the vocabulary has no EOS token");
}

}  // namespace

Vocab Vocab::load(const GgufFile& gguf) {
  Vocab v;
  v.path = gguf.path();
  read_kind(gguf, v);
  read_tokens(gguf, v);
  if (v.type == VocabType::kBpe) read_merges(gguf, v);
  read_special_ids(gguf, v);
  detect_special_tokens(v, std::string(gguf.get_string("general.name").value_or("")));
  v.chat_template = std::string(gguf.get_string("tokenizer.chat_template").value_or(""));
  return v;
}

}  // namespace leapfrog
