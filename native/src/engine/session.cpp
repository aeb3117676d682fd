#include "engine/session.h"

#include <algorithm>
#include <string>

namespace leapfrog {

namespace {

int resolve_ctx(const Model& m, const SessionParams& p) {
  return p.n_ctx > 0 ? p.n_ctx : m.hparams().n_ctx_train;
}

}  // namespace

Session::Session(const Model& model, const SessionParams& params)
    : model_(model),
      params_(params),
      cache_(model.backend(), model.kv_layout(resolve_ctx(model, params))),
      scratch_(model, std::max(1, params.max_batch), cache_.n_ctx(), params.logit_rows) {}

std::span<const float> Session::forward(std::span<const int32_t> ids, bool all_logits,
                                        const std::atomic<bool>* abort) {
  const int n_vocab = model_.hparams().n_vocab;
  const int total = static_cast<int>(ids.size());
  if (total == 0) throw std::invalid_argument("forward: no tokens");
  if (n_past() + total > n_ctx()) {
    throw std::length_error("context is full: " + std::to_string(n_past()) + " + " +
                            std::to_string(total) + " tokens exceed n_ctx " +
                            std::to_string(n_ctx()));
  }
  for (int32_t id : ids) {
    if (id < 0 || id >= n_vocab) {
      throw std::out_of_range("token id " + std::to_string(id) + " outside the vocabulary (" +
                              std::to_string(n_vocab) + ")");
    }
  }
  // Passes that return every row's logits hold at most the scratch's rows of them.
  const int B = all_logits ? scratch_.logit_rows() : scratch_.max_batch();
  const bool one_pass = total <= B;
  if (all_logits && !one_pass) logits_.resize(static_cast<size_t>(total) * n_vocab);
  const float* out = nullptr;
  for (int done = 0; done < total;) {
    if (abort && abort->load(std::memory_order_relaxed)) throw AbortedError();
    const int n = std::min(B, total - done);
    ForwardBatch b;
    b.tokens = ids.data() + done;
    b.n = n;
    b.pos = n_past();
    b.all_logits = all_logits;
    out = model_.forward(b, cache_.storage(), scratch_);
    if (all_logits && !one_pass) {
      std::copy(out, out + static_cast<size_t>(n) * n_vocab,
                logits_.begin() + static_cast<size_t>(done) * n_vocab);
    }
    cache_.append(ids.subspan(done, n));
    done += n;
  }
  // One pass (every verification, most prompts): the rows stay where the pass left them.
  if (all_logits && !one_pass) return logits_;
  return {out, static_cast<size_t>(all_logits ? total : 1) * n_vocab};
}

int Session::reuse_prefix(std::span<const int32_t> prompt) {
  int keep = cache_.common_prefix(prompt);
  if (keep >= static_cast<int>(prompt.size())) keep = static_cast<int>(prompt.size()) - 1;
  cache_.truncate(std::max(keep, 0));
  return n_past();
}

}  // namespace leapfrog
