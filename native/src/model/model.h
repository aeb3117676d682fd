// A loaded decoder-only transformer (the llama graph and its variations: model/arch.h) and
// its forward pass.
// Weights stay in the GGUF mapping; only the small 1-D tensors (norms, biases) are copied
// to f32. The graph calls the Backend interface and never touches a kernel directly.
// A Model is immutable after load: several sessions (and threads) may share it.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "gguf/gguf_file.h"
#include "model/hparams.h"
#include "model/moe_ffn.h"

namespace leapfrog {

class Model;

// Per-session working memory of the forward pass, sized for `max_batch` tokens over a
// context of `n_ctx`, in the backend's memory.
class ForwardScratch {
 public:
  // logit_rows: rows of logits a pass can return (0 or more than max_batch: max_batch).
  ForwardScratch(const Model& model, int max_batch, int n_ctx, int logit_rows = 0);
  ~ForwardScratch();
  int max_batch() const { return max_batch_; }
  int logit_rows() const { return logit_rows_; }

 private:
  friend class Model;
  int max_batch_, logit_rows_;
  std::unique_ptr<DeviceBuffer> mem_;
  DevicePtr<float> x, xb, q, k, v, att, gate, up, logits;
  DevicePtr<int32_t> tokens, positions;
  DevicePtr<uint8_t> mask;              // max_batch x n_ctx
  std::vector<int32_t> host_positions;  // the positions as uploaded
  std::vector<float> staging;           // logits copied to the host (GPU backends)
  std::unique_ptr<MoeScratch> moe;      // mixture-of-experts models only
};

// One forward call: tokens [0, n) written to KV slots [pos, pos + n).
struct ForwardBatch {
  const int32_t* tokens = nullptr;
  int n = 0;  // 1..scratch.max_batch()
  int pos = 0;
  // Optional RoPE positions per token (a token tree's depths); default pos + i.
  const int32_t* positions = nullptr;
  // Optional n x (pos + n) attention mask (nonzero = visible); default causal.
  const uint8_t* mask = nullptr;
  // Logits for every row (n x n_vocab: verifying a draft) or only the last (1 x n_vocab).
  bool all_logits = false;
};

// Why `be` cannot run a model of `hp` (a backend without the mixture-of-experts ops, or
// without the ops of the architectures beyond llama), or "" when it can.
std::string backend_refusal(const ModelHParams& hp, const Backend& be);

class Model {
 public:
  // Maps and validates `path`; throws GgufError ("<path>: <problem>") on any problem.
  static std::unique_ptr<Model> load(const std::string& path, std::shared_ptr<Backend> backend);

  const ModelHParams& hparams() const { return hp_; }
  const GgufFile& gguf() const { return *file_; }
  Backend& backend() const { return *backend_; }
  const std::string& path() const { return file_->path(); }
  KvLayout kv_layout(int n_ctx) const;
  size_t weight_bytes() const { return weight_bytes_; }  // bytes read per decoded token

  // Runs the batch as one backend pass; returns its logits (1 or n rows of n_vocab) in host
  // memory, valid until the scratch's next pass.
  const float* forward(const ForwardBatch& b, KvStorage& kv, ForwardScratch& s) const;

 private:
  // Norm weights and biases: in the backend's memory (null when the file has none).
  using Vec = DevicePtr<const float>;
  struct Layer {
    Vec attn_norm, ffn_norm, q_norm, k_norm, bq, bk, bv;
    WeightView wq, wk, wv, wo, gate, up, down;  // gate/up/down: dense FFN only
    MoeWeights moe;                             // mixture-of-experts FFN only
    // Beyond llama (model/arch_features.h): norm biases, output/FFN biases, gemma's
    // post-branch norms.
    Vec attn_norm_b, ffn_norm_b, bo, b_gate, b_up, b_down, attn_post_norm, ffn_post_norm;
  };
  // The layer's weights that are products (dense and expert), for residency.
  static std::vector<WeightView*> product_weights(Layer& L);
  Model() = default;
  void load_tensors();
  WeightView matrix(const std::string& name, int64_t cols, int64_t rows);
  // A 3-D expert tensor (GGUF shape [cols, rows, experts]) as one 2-D slice per expert.
  std::vector<WeightView> expert_matrices(const std::string& name, int64_t cols, int64_t rows,
                                          int64_t experts);
  // Queues a 1-D tensor for upload; `slot` is set by upload_vectors().
  void vector(const std::string& name, int64_t len, bool required, Vec& slot);
  void upload_vectors();
  void load_attention(const std::string& p, Layer& L);
  void load_ffn(const std::string& p, Layer& L);
  // The norm of the architecture (RMS or LayerNorm) over rows of n_embd.
  void norm(DevicePtr<const float> x, const Vec& w, const Vec& b, int n, DevicePtr<float> y) const;
  // The feed-forward branch of layer L on the normalised xb (n rows), added into the
  // residual stream x (xb is clobbered): dense, or the mixture of experts (moe_ffn.h).
  void ffn(const Layer& L, ForwardScratch& s, int n) const;
  void make_weights_resident();

  std::unique_ptr<GgufFile> file_;
  std::shared_ptr<Backend> backend_;
  ModelHParams hp_;
  WeightView tok_embd_, output_;
  Vec output_norm_, output_norm_b_;
  std::vector<Layer> layers_;
  std::vector<std::unique_ptr<DeviceBuffer>> weight_memory_;  // backend copies of the matrices
  std::unique_ptr<DeviceBuffer> vector_memory_;               // every 1-D tensor, f32
  std::vector<std::pair<std::vector<float>, Vec*>> pending_vectors_;
  size_t weight_bytes_ = 0;
};

}  // namespace leapfrog
