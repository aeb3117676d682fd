// What sets the architectures beyond llama/qwen apart (starcoder2, granite, phi3, gemma):
// norms with bias, other feed-forward shapes, metadata multipliers, soft-capping and
// sliding-window attention. The defaults describe llama, so the original graphs read none.
#pragma once
#include <vector>

namespace leapfrog {

enum class NormKind {
  Rms,    // x / rms(x) * w
  Layer,  // (x - mean) / stddev * w + b (starcoder2)
};

enum class FfnKind {
  SiluGated,  // down(silu(gate x) * up x)
  GeluGated,  // down(gelu(gate x) * up x): gemma
  Gelu,       // down(gelu(up x + b) + b): starcoder2
};

struct ArchFeatures {
  NormKind norm = NormKind::Rms;
  FfnKind ffn = FfnKind::SiluGated;
  bool fused_up_gate = false;     // phi3: ffn_up holds the gate rows, then the up rows
  bool post_norms = false;        // gemma2/3: attn_post_norm and ffn_post_norm on each branch
  bool tied_output_only = false;  // gemma2: output.weight is never read (tied to the embedding)
  float embedding_scale = 0;      // the looked-up embeddings times this (0: none)
  float residual_scale = 0;       // granite: each branch's output times this before the add
  float logit_scale = 0;          // granite: logits divided by this (0: none)
  // Attention's score scale (0: 1/sqrt(head_dim)); applied to Q before attention where
  // llama.cpp does so (phi3, gemma), else to the scores.
  float attention_scale = 0;
  bool scale_q = false;
  float attn_softcap = 0;        // scores = cap * tanh(scores / cap) (gemma2; 0: none)
  float final_softcap = 0;       // logits = cap * tanh(logits / cap) (gemma2; 0: none)
  int sliding_window = 0;        // keys more than window-1 positions back are hidden (0: none)
  std::vector<bool> swa_layers;  // which layers use the window (empty: none)
  // RoPE of the sliding-window layers (gemma: a smaller base than the global layers').
  float rope_freq_base_swa = 0, rope_freq_scale_swa = 1;

  bool is_swa(int layer) const {
    return sliding_window > 0 && layer < static_cast<int>(swa_layers.size()) && swa_layers[layer];
  }
};

}  // namespace leapfrog
