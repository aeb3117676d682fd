// A generation session over one model: owns the KV cache and the forward scratch, keeps
// the cache between requests (prefix reuse) and exposes the primitives speculative
// decoding needs (a batched forward that returns every row's logits, and truncate).
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <vector>

#include "engine/generation_config.h"
#include "engine/kv_cache.h"
#include "model/model.h"

namespace leapfrog {

struct SessionParams {
  int n_ctx = 4096;                // 0: the model's training context
  int max_batch = kMaxPassTokens;  // tokens per forward pass; longer prompts run in chunks
  // Rows of logits one pass can return (0: max_batch). A drafting session reads one row per
  // pass: with 1, its scratch holds no max_batch rows of logits (for a 151,936-token
  // vocabulary 39 MB, resident from the start: cpu_backend.cpp, HostBuffer).
  int logit_rows = 0;
};

class AbortedError : public std::runtime_error {
 public:
  AbortedError() : std::runtime_error("aborted") {}
};

class Session {
 public:
  Session(const Model& model, const SessionParams& params = {});

  const Model& model() const { return model_; }
  int n_ctx() const { return cache_.n_ctx(); }
  int n_past() const { return cache_.size(); }
  const std::vector<int32_t>& tokens() const { return cache_.tokens(); }
  int n_vocab() const { return model_.hparams().n_vocab; }

  // Appends `ids` at position n_past() and runs them (in chunks of max_batch). Returns
  // logits: the last row only (1 x n_vocab) or every row (ids.size() x n_vocab). The
  // returned view is valid until the next call. Checks `abort` before every chunk
  // (throws AbortedError; the cache then holds only the chunks that completed).
  std::span<const float> forward(std::span<const int32_t> ids, bool all_logits,
                                 const std::atomic<bool>* abort = nullptr);

  // Runs a token tree after the cached context in one pass: node i follows node parents[i]
  // (-1: follows the context's last token), sits at RoPE position n_past + depth and sees
  // the context plus its own ancestors. Parents must precede children; at most max_batch
  // nodes. Returns every node's logits. The cache then holds all nodes, in node order;
  // keep_path() keeps one branch.
  std::span<const float> forward_tree(std::span<const int32_t> ids,
                                      std::span<const int32_t> parents,
                                      const std::atomic<bool>* abort = nullptr);
  // Keeps the nodes `path` (increasing node indices, a root-to-node chain) of the tree that
  // forward_tree() placed at position `start`, moving their KV to start, start + 1, ...
  // and dropping every other node.
  void keep_path(int start, std::span<const int32_t> path);

  // Drops cached positions >= n (roll back rejected draft tokens).
  void truncate(int n) { cache_.truncate(n); }
  void clear() { cache_.truncate(0); }

  // Truncates the cache to the longest prefix it shares with `prompt`, always leaving at
  // least one prompt token to run (its logits start generation). Returns the kept length.
  int reuse_prefix(std::span<const int32_t> prompt);

 private:
  const Model& model_;
  SessionParams params_;
  KvCache cache_;
  ForwardScratch scratch_;
  std::vector<float> logits_;
  std::vector<uint8_t> tree_mask_;
  std::vector<int32_t> tree_pos_;
};

}  // namespace leapfrog
