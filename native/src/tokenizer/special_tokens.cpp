#include "tokenizer/special_tokens.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>

#include "tokenizer/vocab.h"

namespace leapfrog {
namespace {

using Texts = std::initializer_list<std::string_view>;

// The token of the first text in `texts` that the vocabulary has.
int32_t find_any(const Vocab& v, Texts texts) {
  for (std::string_view t : texts) {
    if (const int32_t id = v.find(t); id >= 0) return id;
  }
  return -1;
}

void detect_by_text(Vocab& v, int32_t& id, Texts texts) {
  if (id >= 0) return;
  id = find_any(v, texts);
  if (id >= 0) v.attr[id] |= kAttrControl;
}

void build_eog(Vocab& v) {
  std::vector<int32_t> eog;
  for (int32_t id : {v.fim.pad, v.fim.rep, v.fim.sep}) {
    if (id >= 0) eog.push_back(id);
  }
  for (std::string_view t : {"<|eot_id|>",
                             "<|im_end|>",
                             "<|end|>",
                             "<|return|>",
                             "<|call|>",
                             "<|flush|>",
                             "<|calls|>",
                             "<end_of_turn>",
                             "<|endoftext|>",
                             "</s>",
                             "<|eom_id|>",
                             "<EOT>",
                             "_<EOT>",
                             "[EOT]",
                             "[EOS]",
                             "<|end_of_text|>",
                             "<end_of_utterance>",
                             "<eos>",
                             "<turn|>",
                             "<|tool_response>",
                             "<｜end▁of▁sentence｜>",
                             "[e~["}) {
    const int32_t id = v.find(t);
    if (id < 0) continue;
    eog.push_back(id);
    v.attr[id] |= kAttrControl;
  }
  for (int32_t id : {v.eos, v.eot, v.eom}) {
    if (id >= 0) eog.push_back(id);
  }
  std::sort(eog.begin(), eog.end());
  eog.erase(std::unique(eog.begin(), eog.end()), eog.end());
  auto has = [&](std::string_view t) {
    const int32_t id = v.find(t);
    return id >= 0 && std::binary_search(eog.begin(), eog.end(), id);
  };
  auto drop = [&](int32_t id, uint16_t new_attr) {
    eog.erase(std::remove(eog.begin(), eog.end(), id), eog.end());
    v.attr[id] = new_attr;
  };
  // o200k_harmony / solar-open: "<|end|>" ends a message, not the generation.
  if (has("<|end|>") &&
      ((has("<|return|>") && has("<|call|>")) || (has("<|calls|>") && has("<|flush|>")))) {
    drop(v.find("<|end|>"), kAttrUserDefined);
  }
  // Gemma 4: "</s>" is not an end of generation there.
  if (has("<|tool_response>") && has("</s>")) drop(v.find("</s>"), kAttrNormal);
  v.eog = std::move(eog);
}

void apply_model_attrs(Vocab& v, std::string model_name) {
  std::transform(model_name.begin(), model_name.end(), model_name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  auto set = [&](std::string_view text, uint16_t a, bool on) {
    const int32_t id = v.find(text);
    if (id < 0) return;
    v.attr[id] = on ? (v.attr[id] | a) : (v.attr[id] & ~a);
  };
  const std::string& pre = v.pre_name;
  if (pre.find("jina-v2-de") != std::string::npos || pre.find("jina-v2-es") != std::string::npos ||
      pre.find("jina-v2-code") != std::string::npos) {
    set("<mask>", kAttrLstrip, true);
  } else if (model_name.find("phi-3") != std::string::npos ||
             model_name.find("phi3") != std::string::npos) {
    for (int32_t id : v.special_by_len) v.attr[id] |= kAttrRstrip;
    set("</s>", kAttrRstrip, true);
    for (std::string_view t : {"<unk>", "<s>", "<|endoftext|>"}) set(t, kAttrRstrip, false);
  } else if (model_name.find("modern-bert") != std::string::npos) {
    set("[MASK]", kAttrLstrip, true);
  }
}

}  // namespace

void detect_special_tokens(Vocab& v, const std::string& model_name) {
  detect_by_text(
      v, v.eot,
      {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>",
       "<EOT>", "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>", "<end_of_utterance>"});
  detect_by_text(v, v.eom, {"<|eom_id|>"});
  detect_by_text(v, v.fim.pre,
                 {"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>",
                  "▁<PRE>", "<|code_prefix|>", "<|prefix|>"});
  detect_by_text(v, v.fim.suf,
                 {"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>",
                  "▁<SUF>", "<|code_suffix|>", "<|suffix|>"});
  detect_by_text(v, v.fim.mid,
                 {"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>",
                  "▁<MID>", "<|code_middle|>", "<|middle|>"});
  detect_by_text(v, v.fim.pad, {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"});
  detect_by_text(v, v.fim.rep,
                 {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"});
  detect_by_text(v, v.fim.sep, {"<|file_sep|>"});

  // Control tokens named "unused..." are unused.
  for (int32_t id = 0; id < v.n_tokens(); ++id) {
    if ((v.attr[id] & kAttrControl) && v.text[id].find("unused") != std::string_view::npos) {
      v.attr[id] |= kAttrUnused;
    }
  }
  build_eog(v);
  // gpt-oss: these always render.
  for (std::string_view t : {"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"}) {
    if (int32_t id = v.find(t); id >= 0) v.attr[id] = kAttrUserDefined;
  }

  v.special_by_len.clear();
  for (int32_t id = 0; id < v.n_tokens(); ++id) {
    if (v.attr[id] & (kAttrControl | kAttrUserDefined | kAttrUnknown)) {
      v.special_by_len.push_back(id);
    }
  }
  std::stable_sort(v.special_by_len.begin(), v.special_by_len.end(),
                   [&](int32_t a, int32_t b) { return v.text[a].size() > v.text[b].size(); });
  apply_model_attrs(v, model_name);
}

}  // namespace leapfrog
