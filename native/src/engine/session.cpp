#include "engine/session.h"

#include <algorithm>
#include <chrono>
#include <string>

namespace leapfrog {

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

int resolve_ctx(const Model& m, const SessionParams& p) {
  return p.n_ctx > 0 ? p.n_ctx : m.hparams().n_ctx_train;
}

}  // namespace

Session::Session(const Model& model, const SessionParams& params)
    : model_(model),
      params_(params),
      cache_(model.backend(), model.kv_layout(resolve_ctx(model, params))),
      scratch_(model, std::max(1, params.max_batch), cache_.n_ctx()) {}

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
  const int B = scratch_.max_batch();
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

GenerateStats Session::generate(std::span<const int32_t> prompt, const GenerateParams& params,
                                const std::function<bool(int32_t)>& on_token,
                                const std::atomic<bool>& abort) {
  GenerateStats st;
  st.prompt_tokens = static_cast<int>(prompt.size());
  if (prompt.empty()) throw std::invalid_argument("generate: empty prompt");
  if (static_cast<int>(prompt.size()) > n_ctx()) {
    throw std::length_error("prompt of " + std::to_string(prompt.size()) +
                            " tokens is longer than the context (" + std::to_string(n_ctx()) + ")");
  }
  std::vector<int32_t> stops = params.stop_tokens;
  if (stops.empty() && model_.hparams().eos_token) stops.push_back(*model_.hparams().eos_token);
  Sampler sampler(params.sampling);
  const int n_vocab = model_.hparams().n_vocab;

  // Prefill: only the tokens after the reused prefix.
  auto t0 = std::chrono::steady_clock::now();
  st.reused_tokens = reuse_prefix(prompt);
  std::span<const float> logits;
  try {
    logits = forward(prompt.subspan(st.reused_tokens), false, &abort);
  } catch (const AbortedError&) {
    st.aborted = true;
    st.prompt_ms = ms_since(t0);
    return st;
  }
  st.prompt_ms = ms_since(t0);

  // Decode. One target pass per token for now; speculative decoding replaces the body:
  // draft k tokens, forward(draft, all_logits=true), accept the matching prefix, truncate.
  t0 = std::chrono::steady_clock::now();
  std::vector<int32_t> next(1);
  while (st.generated < params.max_tokens) {
    const int32_t tok = sampler.sample(logits.data(), n_vocab, cache_.tokens());
    const bool is_stop = std::find(stops.begin(), stops.end(), tok) != stops.end();
    if (is_stop) {
      st.stopped_by_token = true;
      if (params.emit_stop_token) {
        ++st.generated;
        on_token(tok);
      }
      break;
    }
    ++st.generated;
    if (!on_token(tok)) break;
    if (st.generated >= params.max_tokens || n_past() >= n_ctx()) break;
    if (abort.load(std::memory_order_relaxed)) {
      st.aborted = true;
      break;
    }
    next[0] = tok;
    try {
      logits = forward(next, false, &abort);
    } catch (const AbortedError&) {
      st.aborted = true;
      break;
    }
    ++st.target_passes;
  }
  st.decode_ms = ms_since(t0);
  return st;
}

}  // namespace leapfrog
