#include "model/hparams.h"

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
  hp.n_ff = req("feed_forward_length");
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
  float factor = 1;
  std::string scaling = std::string(f.get_string(a + "rope.scaling.type").value_or("none"));
  if (auto fac = f.get_float(a + "rope.scaling.factor")) factor = static_cast<float>(*fac);
  if (auto lin = f.get_float(a + "rope.scale_linear")) {  // older files
    scaling = "linear";
    factor = static_cast<float>(*lin);
  }
  if (scaling == "linear") {
    if (!(factor > 0)) f.fail("rope.scaling.factor must be positive");
    hp.rope.freq_scale = 1.0f / factor;
  } else if (scaling != "none") {
    f.fail("unsupported RoPE scaling type '" + scaling + "' (supported: none, linear)");
  }

  if (auto v = f.get_int("tokenizer.ggml.bos_token_id")) hp.bos_token = static_cast<int32_t>(*v);
  if (auto v = f.get_int("tokenizer.ggml.eos_token_id")) hp.eos_token = static_cast<int32_t>(*v);
  if (info->read_features) info->read_features(f, hp);
  return hp;
}

}  // namespace leapfrog
