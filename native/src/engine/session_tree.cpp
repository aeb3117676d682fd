// Token-tree passes of a Session (see session.h): one batched forward over a draft tree
// with an ancestor mask, and compaction of the accepted branch.
#include <string>

#include "engine/session.h"

namespace leapfrog {

std::span<const float> Session::forward_tree(std::span<const int32_t> ids,
                                             std::span<const int32_t> parents,
                                             const std::atomic<bool>* abort) {
  const int n = static_cast<int>(ids.size());
  const int n_vocab = model_.hparams().n_vocab;
  if (n == 0 || parents.size() != ids.size()) {
    throw std::invalid_argument("forward_tree: need one parent per node");
  }
  if (n > scratch_.logit_rows()) {
    throw std::invalid_argument("forward_tree: " + std::to_string(n) +
                                " nodes exceed the batch of " +
                                std::to_string(scratch_.logit_rows()));
  }
  const int pos = n_past();
  if (pos + n > n_ctx()) throw std::length_error("context is full: the tree does not fit");
  for (int32_t id : ids) {
    if (id < 0 || id >= n_vocab) throw std::out_of_range("token id outside the vocabulary");
  }
  if (abort && abort->load(std::memory_order_relaxed)) throw AbortedError();
  const int kv_len = pos + n;
  tree_mask_.assign(static_cast<size_t>(n) * kv_len, 0);
  tree_pos_.resize(n);
  for (int i = 0; i < n; ++i) {
    const int p = parents[i];
    if (p >= i || p < -1) throw std::invalid_argument("forward_tree: parents must precede nodes");
    uint8_t* row = tree_mask_.data() + static_cast<size_t>(i) * kv_len;
    std::fill(row, row + pos, 1);  // the whole context
    if (p >= 0) {
      // A node sees what its parent sees, plus itself.
      const uint8_t* parent_row = tree_mask_.data() + static_cast<size_t>(p) * kv_len;
      std::copy(parent_row + pos, parent_row + kv_len, row + pos);
    }
    row[pos + i] = 1;
    tree_pos_[i] = p >= 0 ? tree_pos_[p] + 1 : pos;
  }
  ForwardBatch b;
  b.tokens = ids.data();
  b.n = n;
  b.pos = pos;
  b.positions = tree_pos_.data();
  b.mask = tree_mask_.data();
  b.all_logits = true;
  const float* out = model_.forward(b, cache_.storage(), scratch_);
  cache_.append(ids);
  return {out, static_cast<size_t>(n) * n_vocab};
}

void Session::keep_path(int start, std::span<const int32_t> path) {
  std::vector<int32_t> kept;
  kept.reserve(path.size());
  for (size_t j = 0; j < path.size(); ++j) {
    const int from = start + path[j];
    const int to = start + static_cast<int>(j);
    if (from < to || from >= n_past()) throw std::invalid_argument("keep_path: bad path");
    if (from != to) cache_.storage().move(from, to);
    kept.push_back(cache_.tokens()[from]);
  }
  cache_.truncate(start);
  cache_.append(kept);
}

}  // namespace leapfrog
