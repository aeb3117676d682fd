#include "tokenizer/pretokenizer.h"

#include <array>

#include "tokenizer/pretok_scanners.h"

namespace leapfrog {
namespace {

struct NameEntry {
  std::string_view name;
  PreTokenizerInfo info;
};

using K = PreTokenizerKind;

// Names as llama.cpp's vocabulary loader maps them (llama-vocab.cpp), for the kinds above.
constexpr PreTokenizerInfo kLlama3Info{K::kLlama3, true, true, true, false};
constexpr PreTokenizerInfo kQwen2Info{K::kQwen2, false, false, false, false};
constexpr PreTokenizerInfo kGpt2Info{K::kGpt2, false, false, true, false};
constexpr PreTokenizerInfo kStarcoderInfo{K::kStarcoder, false, false, true, false};

const std::array kNames = {
    NameEntry{"default", {K::kDefault, false, false, true, false}},
    NameEntry{"llama3", kLlama3Info},
    NameEntry{"llama-v3", kLlama3Info},
    NameEntry{"llama-bpe", kLlama3Info},
    NameEntry{"falcon3", kLlama3Info},
    NameEntry{"falcon-h1", kLlama3Info},
    NameEntry{"pixtral", kLlama3Info},
    NameEntry{"midm-2.0", kLlama3Info},
    NameEntry{"lfm2", kLlama3Info},
    NameEntry{"dbrx", {K::kLlama3, false, false, true, false}},
    NameEntry{"smaug-bpe", {K::kLlama3, false, false, true, false}},
    NameEntry{"chatglm-bpe", {K::kLlama3, false, false, true, true}},
    NameEntry{"glm4", {K::kLlama3, false, false, true, true}},
    NameEntry{"qwen2", kQwen2Info},
    NameEntry{"deepseek-r1-qwen", kQwen2Info},
    NameEntry{"kormo", kQwen2Info},
    NameEntry{"f2llmv2", kQwen2Info},
    NameEntry{"stablelm2", {K::kQwen2, false, false, true, false}},
    NameEntry{"megrez", {K::kQwen2, false, false, true, false}},
    NameEntry{"hunyuan", kQwen2Info},
    NameEntry{"solar-open", kQwen2Info},
    NameEntry{"qwen35", {K::kQwen35, false, false, false, false}},
    NameEntry{"deepseek-coder", {K::kDeepseekCoder, false, false, false, false}},
    NameEntry{"falcon", {K::kFalcon, false, false, true, false}},
    NameEntry{"starcoder", kStarcoderInfo},
    NameEntry{"refact", kStarcoderInfo},
    NameEntry{"command-r", {K::kStarcoder, false, false, false, false}},
    NameEntry{"smollm", {K::kStarcoder, false, false, false, false}},
    NameEntry{"codeshell", kStarcoderInfo},
    NameEntry{"exaone", kStarcoderInfo},
    NameEntry{"minerva-7b", kStarcoderInfo},
    NameEntry{"mellum2", kStarcoderInfo},
    NameEntry{"gpt-2", kGpt2Info},
    NameEntry{"phi-2", kGpt2Info},
    NameEntry{"jina-es", kGpt2Info},
    NameEntry{"jina-de", kGpt2Info},
    NameEntry{"gigachat", kGpt2Info},
    NameEntry{"jina-v2-es", kGpt2Info},
    NameEntry{"jina-v2-de", kGpt2Info},
    NameEntry{"jina-v1-en", kGpt2Info},
    NameEntry{"jina-v2-code", kGpt2Info},
    NameEntry{"roberta-bpe", kGpt2Info},
    NameEntry{"a.x-4.0", kGpt2Info},
    NameEntry{"mellum", kGpt2Info},
    NameEntry{"modern-bert", kGpt2Info},
    NameEntry{"mpt", kGpt2Info},
    NameEntry{"olmo", kGpt2Info},
    NameEntry{"jais", kGpt2Info},
    NameEntry{"exaone4", kGpt2Info},
    NameEntry{"trillion", {K::kGpt2, false, false, false, false}},
    NameEntry{"granite-docling", {K::kGpt2, false, false, false, false}},
};

}  // namespace

std::optional<PreTokenizerInfo> find_pre_tokenizer(std::string_view name) {
  for (const auto& entry : kNames) {
    if (entry.name == name) return entry.info;
  }
  return std::nullopt;
}

std::string supported_pre_tokenizer_names() {
  std::string names;
  for (const auto& entry : kNames) {
    if (!names.empty()) names += ", ";
    names += entry.name;
  }
  return names;
}

void pre_tokenize(PreTokenizerKind kind, std::span<const uint32_t> cpts,
                  std::vector<uint32_t>& lens) {
  using namespace pretok;
  Segments a{static_cast<uint32_t>(cpts.size())}, b;
  if (cpts.empty()) return;
  // Each stage refines `a` into `b`; then they swap.
  auto runs = [&](RunRule rule) {
    b.clear();
    split_runs(cpts, a, b, rule);
    a.swap(b);
  };
  auto gpt2 = [&] {
    b.clear();
    split_gpt2(cpts, a, b);
    a.swap(b);
  };
  auto words = [&](WordSplitOptions options) {
    b.clear();
    split_llama3_style(cpts, a, b, options);
    a.swap(b);
  };
  switch (kind) {
    case K::kDefault:
      runs({RunClass::kDefaultPunct});
      gpt2();
      runs({RunClass::kNumber});
      runs({RunClass::kAsciiDigit, false, 3, 3});
      break;
    case K::kGpt2:
      gpt2();
      break;
    case K::kLlama3:
      words({3, false});
      break;
    case K::kQwen2:
      words({1, false});
      break;
    case K::kQwen35:
      words({1, true});
      break;
    case K::kDeepseekCoder:
      runs({RunClass::kNewline, false, 1, 1});
      runs({RunClass::kLetter, true});
      runs({RunClass::kPunctuation, true});
      runs({RunClass::kCjk});
      runs({RunClass::kNumber, false, 1, 1});
      break;
    case K::kStarcoder:
      runs({RunClass::kNumber, false, 1, 1});
      gpt2();
      break;
    case K::kFalcon:
      runs({RunClass::kFalconPunct});
      gpt2();
      runs({RunClass::kAsciiDigit, false, 3, 3});
      break;
  }
  lens.insert(lens.end(), a.begin(), a.end());
}

}  // namespace leapfrog
