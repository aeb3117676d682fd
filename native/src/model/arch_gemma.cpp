// gemma, gemma2, gemma3: embeddings scaled by sqrt(n_embd), GELU-gated FFN, Q scaled before
// attention; gemma2/3 add post-branch norms and sliding-window layers, gemma2 soft-caps
// attention scores and logits, gemma3 normalizes Q and K per head. As llama.cpp reads them
// (src/models/gemma*.cpp).
#include <cmath>
#include <string>

#include "model/arch.h"
#include "model/hparams.h"

namespace leapfrog {

namespace {

// Window layers: every layer but each n-th (`pattern` 2: even layers; 6: five of six),
// as llama.cpp's set_swa_pattern; `pattern` 0 or 1 marks every layer or none alike.
void read_window(const GgufFile& f, ModelHParams& hp, int default_window, int default_pattern) {
  const std::string a = hp.arch + ".";
  ArchFeatures& ft = hp.features;
  const std::string pattern_key = a + "attention.sliding_window_pattern";
  if (f.find(pattern_key) && !f.get_int(pattern_key)) {
    f.fail("metadata key '" + pattern_key + "' as a per-layer list is not supported");
  }
  const int64_t window = f.get_int(a + "attention.sliding_window").value_or(default_window);
  if (window < 0 || window > (1 << 30)) f.fail("implausible attention.sliding_window");
  ft.sliding_window = static_cast<int>(window);
  if (window == 0) return;
  const int64_t pattern = f.get_int(pattern_key).value_or(default_pattern);
  ft.swa_layers.resize(hp.n_layer);
  for (int l = 0; l < hp.n_layer; ++l) {
    ft.swa_layers[l] = pattern == 0 || (l % pattern < pattern - 1);
  }
}

}  // namespace

void read_gemma_features(const GgufFile& f, ModelHParams& hp) {
  const std::string a = hp.arch + ".";
  ArchFeatures& ft = hp.features;
  ft.ffn = FfnKind::GeluGated;
  ft.embedding_scale = std::sqrt(static_cast<float>(hp.n_embd));
  ft.scale_q = true;
  // Gemma's 27B models scale by n_embd / n_head, the others by the head size (llama.cpp
  // tells them apart by their layer count: 46 for gemma2, 62 for gemma3).
  const bool big =
      (hp.arch == "gemma2" && hp.n_layer == 46) || (hp.arch == "gemma3" && hp.n_layer == 62);
  ft.attention_scale =
      1.0f / std::sqrt(static_cast<float>(big ? hp.n_embd / hp.n_head : hp.head_dim));
  // gemma and gemma2 never read an output.weight: the projection is the embedding.
  ft.tied_output_only = hp.arch != "gemma3";
  if (hp.arch == "gemma") return;

  ft.post_norms = true;
  if (hp.arch == "gemma2") {
    // llama.cpp's defaults when the keys are absent: 50 and 30.
    ft.attn_softcap = static_cast<float>(f.get_float(a + "attn_logit_softcapping").value_or(50));
    ft.final_softcap = static_cast<float>(f.get_float(a + "final_logit_softcapping").value_or(30));
    if (!(ft.attn_softcap > 0) || !(ft.final_softcap > 0))
      f.fail("soft-capping values must be positive");
    read_window(f, hp, 4096, 2);
    // Window layers keep the global RoPE unless the file says otherwise.
    ft.rope_freq_base_swa = hp.rope.freq_base;
    ft.rope_freq_scale_swa = hp.rope.freq_scale;
  } else {
    ft.final_softcap = static_cast<float>(f.get_float(a + "final_logit_softcapping").value_or(0));
    if (ft.final_softcap < 0) f.fail("final_logit_softcapping must not be negative");
    read_window(f, hp, 0, 6);
    ft.rope_freq_base_swa = 10000;  // llama.cpp's default for gemma3's local layers
    ft.rope_freq_scale_swa = 1;
  }
  if (auto base = f.get_float(a + "rope.freq_base_swa")) {
    ft.rope_freq_base_swa = static_cast<float>(*base);
  }
}

}  // namespace leapfrog
