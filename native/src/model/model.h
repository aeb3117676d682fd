// A loaded decoder-only transformer (llama / qwen2 / qwen3 graphs) and its forward pass.
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

namespace leapfrog {

// Per-session working memory of the forward pass, sized for `max_batch` tokens.
class ForwardScratch {
 public:
  ForwardScratch(const ModelHParams& hp, int max_batch);
  int max_batch() const { return max_batch_; }

 private:
  friend class Model;
  int max_batch_;
  std::vector<float> x, xb, q, k, v, att, gate, up;
  std::vector<int32_t> positions;
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

  // Runs the batch; writes logits (1 or n rows of n_vocab) to `logits`.
  void forward(const ForwardBatch& b, KvStorage& kv, ForwardScratch& s, float* logits) const;

 private:
  struct Layer {
    std::vector<float> attn_norm, ffn_norm, q_norm, k_norm, bq, bk, bv;
    WeightView wq, wk, wv, wo, gate, up, down;
  };
  Model() = default;
  void load_tensors();
  WeightView matrix(const std::string& name, int64_t cols, int64_t rows);
  std::vector<float> vector(const std::string& name, int64_t len, bool required);
  void pack_weights();

  std::unique_ptr<GgufFile> file_;
  std::shared_ptr<Backend> backend_;
  ModelHParams hp_;
  WeightView tok_embd_, output_;
  std::vector<float> output_norm_;
  std::vector<Layer> layers_;
  std::vector<std::unique_ptr<PackedWeight>> packed_;  // backend layouts of the matrices
  size_t weight_bytes_ = 0;
};

}  // namespace leapfrog
