// Hyper-parameters of a decoder-only transformer, read from GGUF metadata.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "backend/backend.h"
#include "gguf/gguf_file.h"
#include "model/arch_features.h"

namespace leapfrog {

struct ModelHParams {
  std::string arch;  // llama, qwen2, qwen3, qwen3moe, starcoder2, granite, phi3, gemma, gemma2,
                     // gemma3 (model/arch.cpp)
  int n_vocab = 0;
  int n_ctx_train = 0;
  int n_embd = 0;
  int n_layer = 0;
  int n_ff = 0;
  int n_head = 0;
  int n_head_kv = 0;
  int head_dim = 0;       // key/query head size (qwen3 may differ from n_embd / n_head)
  int head_dim_v = 0;     // value head size
  float rms_eps = 1e-5f;  // the norms' epsilon (LayerNorm's too)
  RopeParams rope;
  // Mixture of experts (qwen3moe); 0 for dense models.
  int n_expert = 0;                  // experts per layer
  int n_expert_used = 0;             // experts each token is routed to (top-k)
  int n_ff_exp = 0;                  // feed-forward size of one expert
  bool expert_weights_norm = false;  // renormalise the top-k router weights to sum to 1
  std::optional<int32_t> bos_token, eos_token;
  ArchFeatures features;  // model/arch_*.cpp

  int q_dim() const { return n_head * head_dim; }
  int k_dim() const { return n_head_kv * head_dim; }
  int v_dim() const { return n_head_kv * head_dim_v; }
  bool moe() const { return n_expert > 0; }
};

// Reads and checks the hyper-parameters; throws GgufError naming the file and the problem
// (unsupported architecture, missing key, inconsistent values). n_vocab is filled in by
// the model loader from token_embd.
ModelHParams read_hparams(const GgufFile& f);

}  // namespace leapfrog
