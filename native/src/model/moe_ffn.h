// The mixture-of-experts feed-forward block (qwen3moe): a router picks, per token, the top-k
// of n_expert SwiGLU experts and the block's output is their weighted sum. A batched pass
// groups its rows by expert so each used expert's weights are read once per pass, whatever
// the number of tokens routed to it (verifying a draft of 16-32 tokens touches each expert's
// weights once, not once per token).
#pragma once
#include <memory>
#include <vector>

#include "backend/backend.h"
#include "model/hparams.h"

namespace leapfrog {

// One layer's experts: the router (n_expert x n_embd) and, per expert, 2-D slices of the
// 3-D expert tensors (each an ordinary weight to the backend).
struct MoeWeights {
  WeightView router;
  std::vector<WeightView> gate, up, down;  // n_expert each
};

// Per-session working memory of the block for up to `max_batch` tokens.
class MoeScratch {
 public:
  MoeScratch(Backend& be, const ModelHParams& hp, int max_batch);

 private:
  friend void moe_ffn(Backend&, const ModelHParams&, const MoeWeights&, DevicePtr<const float>, int,
                      DevicePtr<float>, MoeScratch&);
  std::unique_ptr<DeviceBuffer> mem_;
  DevicePtr<float> logits, xg, gate, up, y, weights;
  DevicePtr<int32_t> rows;
  // Host side of the routing: router probabilities, then the rows and weights grouped by
  // expert (uploaded once per layer) and each expert's [begin, end) in them.
  std::vector<float> host_logits, host_weights;
  std::vector<int32_t> host_rows;
  std::vector<int> expert_begin;
  // The grouped products' arguments (one entry per used expert's weight).
  std::vector<const WeightView*> w_list;
  std::vector<DevicePtr<const float>> x_list;
  std::vector<int> n_list;
  std::vector<DevicePtr<float>> y_list;
};

// x[i, :] += MoE(xb[i, :]) for i < n (xb: the normalised input, x: the residual stream).
void moe_ffn(Backend& be, const ModelHParams& hp, const MoeWeights& w, DevicePtr<const float> xb,
             int n, DevicePtr<float> x, MoeScratch& s);

}  // namespace leapfrog
