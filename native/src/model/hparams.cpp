#include "model/hparams.h"

#include <cmath>
#include <string>

#include "model/arch.h"

namespace leapfrog {

namespace {

int positive_int(const GgufFile& f, const std::string& key, int64_t v) {
  if (v <= 0 || v > (1 << 30)) {
    f.fail("metadata key '" + key + "' has an implausible value " + std::to_string(v));
  }
  return static_cast<int>(v);
}

// RoPE scaling as llama.cpp reads it: rope.scaling.type (default linear, which with no
// factor is no scaling), rope.scaling.factor (or the older rope.scale_linear),
// rope.scaling.attn_factor, and for YaRN rope.scaling.original_context_length (default the
// training context) with ext_factor 1, beta_fast 32, beta_slow 1 and the attention-magnitude
// factor of its context setup (llama-context.cpp): get_mscale(factor) cancelled against the
// rope kernel's own 1 + 0.1 ln(factor).
void read_rope_scaling(const GgufFile& f, const std::string& a, ModelHParams& hp) {
  const std::string scaling = std::string(f.get_string(a + "rope.scaling.type").value_or("linear"));
  float factor = 0;
  if (auto fac = f.get_float(a + "rope.scaling.factor")) {
    factor = static_cast<float>(*fac);
  } else if (auto lin = f.get_float(a + "rope.scale_linear")) {  // older files
    factor = static_cast<float>(*lin);
  }
  if (factor < 0 || !std::isfinite(factor)) f.fail("rope.scaling.factor must be positive");
  RopeParams& r = hp.rope;
  r.freq_scale = factor == 0 ? 1.0f : 1.0f / factor;
  if (scaling == "none") {
    r.freq_scale = 1;
  } else if (scaling == "yarn") {
    r.ext_factor = 1;
    const float fac = 1.0f / r.freq_scale;
    const float mscale = fac <= 1.0f ? 1.0f : 0.1f * std::log(fac) + 1.0f;
    r.attn_factor = mscale / (1.0f + 0.1f * std::log(fac));
  } else if (scaling != "linear") {
    f.fail("unsupported RoPE scaling type '" + scaling + "' (supported: none, linear, yarn)");
  }
  r.attn_factor *= static_cast<float>(f.get_float(a + "rope.scaling.attn_factor").value_or(1.0));
  r.n_ctx_orig = hp.n_ctx_train;
  if (auto orig = f.get_int(a + "rope.scaling.original_context_length")) {
    r.n_ctx_orig = positive_int(f, a + "rope.scaling.original_context_length", *orig);
  }
}

// qwen3moe's experts as llama.cpp reads them: expert_count, expert_used_count,
// expert_feed_forward_length (default feed_forward_length / expert_used_count), and the
// top-k weights renormalised (its graph passes norm_w = true for this architecture).
void read_experts(const GgufFile& f, const std::string& a, ModelHParams& hp) {
  const auto req = [&](const std::string& k) {
    return positive_int(f, a + k, f.require_int(a + k));
  };
  hp.n_expert = req("expert_count");
  hp.n_expert_used = req("expert_used_count");
  if (hp.n_expert_used > hp.n_expert || hp.n_expert > 4096) {
    f.fail("expert_used_count " + std::to_string(hp.n_expert_used) + " does not fit expert_count " +
           std::to_string(hp.n_expert));
  }
  if (auto v = f.get_int(a + "expert_feed_forward_length")) {
    hp.n_ff_exp = positive_int(f, a + "expert_feed_forward_length", *v);
  } else {
    hp.n_ff_exp = req("feed_forward_length") / hp.n_expert_used;
  }
  hp.expert_weights_norm = true;
}

}  // namespace

ModelHParams read_hparams(const GgufFile& f) {
  ModelHParams hp;
  hp.arch = std::string(f.require_string("general.architecture"));
  const ArchInfo* info = find_arch(hp.arch);
  if (!info) {
    f.fail("unsupported architecture '" + hp.arch + "' (supported: " + supported_arch_names() +
           ")");
  }
  const std::string a = hp.arch + ".";
  auto req = [&](const std::string& k) { return positive_int(f, a + k, f.require_int(a + k)); };
  auto opt = [&](const std::string& k, int def) {
    auto v = f.get_int(a + k);
    return v ? positive_int(f, a + k, *v) : def;
  };

  hp.n_ctx_train = req("context_length");
  hp.n_embd = req("embedding_length");
  hp.n_layer = req("block_count");
  if (hp.arch == "qwen3moe") {
    read_experts(f, a, hp);
    hp.n_ff = opt("feed_forward_length", hp.n_ff_exp);  // the dense size, unused
  } else {
    hp.n_ff = req("feed_forward_length");
  }
  hp.n_head = req("attention.head_count");
  hp.n_head_kv = opt("attention.head_count_kv", hp.n_head);
  if (hp.n_head % hp.n_head_kv != 0) {
    f.fail("attention.head_count " + std::to_string(hp.n_head) +
           " is not a multiple of head_count_kv " + std::to_string(hp.n_head_kv));
  }
  if (!f.get_int(a + "attention.key_length") && hp.n_embd % hp.n_head != 0) {
    f.fail("embedding_length is not a multiple of attention.head_count");
  }
  hp.head_dim = opt("attention.key_length", hp.n_embd / hp.n_head);
  hp.head_dim_v = opt("attention.value_length", hp.head_dim);
  if (hp.head_dim > 1024 || hp.head_dim_v > 1024 || hp.head_dim % 2 != 0) {
    f.fail("unsupported attention head size " + std::to_string(hp.head_dim));
  }
  hp.rms_eps = static_cast<float>(
      f.require_float(a + (info->layer_norm_eps ? "attention.layer_norm_epsilon"
                                                : "attention.layer_norm_rms_epsilon")));
  hp.rope.style = info->rope_style;
  hp.rope.n_dims = opt("rope.dimension_count", hp.head_dim);
  if (hp.rope.n_dims > hp.head_dim || hp.rope.n_dims % 2 != 0) {
    f.fail("rope.dimension_count " + std::to_string(hp.rope.n_dims) + " does not fit head size " +
           std::to_string(hp.head_dim));
  }
  hp.rope.freq_base = static_cast<float>(f.get_float(a + "rope.freq_base").value_or(10000.0));
  read_rope_scaling(f, a, hp);

  if (auto v = f.get_int("tokenizer.ggml.bos_token_id")) hp.bos_token = static_cast<int32_t>(*v);
  if (auto v = f.get_int("tokenizer.ggml.eos_token_id")) hp.eos_token = static_cast<int32_t>(*v);
  if (info->read_features) info->read_features(f, hp);
  return hp;
}

}  // namespace leapfrog
