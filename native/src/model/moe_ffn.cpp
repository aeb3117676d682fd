#include "model/moe_ffn.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace leapfrog {

MoeScratch::MoeScratch(Backend& be, const ModelHParams& hp, int max_batch) {
  const size_t b = static_cast<size_t>(max_batch);
  const size_t routed = b * hp.n_expert_used;  // (token, expert) pairs of a pass
  // Per routed (token, expert) pair: its gathered input, gate, up and expert output.
  const size_t parts[] = {b * hp.n_expert,
                          routed * hp.n_embd,
                          routed * hp.n_ff_exp,
                          routed * hp.n_ff_exp,
                          routed * hp.n_embd,
                          routed,
                          routed};
  size_t total = 0;
  for (size_t p : parts) total += (p + 15) / 16 * 16;  // floats and int32s, 64-byte aligned
  mem_ = be.alloc(total * sizeof(float));
  size_t at = 0;
  const auto next = [&](size_t count) {
    DevicePtr<float> p = mem_->as<float>(at);
    at += (count + 15) / 16 * 16;
    return p;
  };
  logits = next(parts[0]);
  xg = next(parts[1]);
  gate = next(parts[2]);
  up = next(parts[3]);
  y = next(parts[4]);
  weights = next(parts[5]);
  rows = DevicePtr<int32_t>(reinterpret_cast<int32_t*>(next(parts[6]).get()));
  host_logits.resize(b * hp.n_expert);
  host_weights.resize(routed);
  host_rows.resize(routed);
  expert_begin.resize(hp.n_expert + 1);
}

namespace {

// llama.cpp's routing for softmax gating: probabilities over all experts, the top k (ties to
// the lower index), their probabilities renormalised to sum 1 when `norm` (the sum clamped
// at f16's smallest normal, as llama.cpp does).
void route_token(float* probs, int n_expert, int k, bool norm, int* top, float* weight) {
  const float mx = *std::max_element(probs, probs + n_expert);
  double sum = 0;
  for (int e = 0; e < n_expert; ++e) {
    probs[e] = std::exp(probs[e] - mx);
    sum += probs[e];
  }
  const float inv = static_cast<float>(1.0 / sum);
  for (int e = 0; e < n_expert; ++e) probs[e] *= inv;
  int order[4096];
  std::iota(order, order + n_expert, 0);
  std::partial_sort(order, order + k, order + n_expert, [&](int a, int b) {
    return probs[a] > probs[b] || (probs[a] == probs[b] && a < b);
  });
  float total = 0;
  for (int j = 0; j < k; ++j) {
    top[j] = order[j];
    weight[j] = probs[order[j]];
    total += weight[j];
  }
  if (norm) {
    total = std::max(total, 6.103515625e-5f);
    for (int j = 0; j < k; ++j) weight[j] /= total;
  }
}

}  // namespace

void moe_ffn(Backend& be, const ModelHParams& hp, const MoeWeights& w, DevicePtr<const float> xb,
             int n, DevicePtr<float> x, MoeScratch& s) {
  const int n_expert = hp.n_expert, k = hp.n_expert_used, E = hp.n_embd, F = hp.n_ff_exp;
  be.matmul(w.router, xb, n, s.logits);

  // The top-k choice runs on the host: on the CPU backend the router logits are already in
  // host memory (host_address, no copy); another backend pays one download per layer here.
  const size_t count = static_cast<size_t>(n) * n_expert;
  const DevicePtr<const float> logits = s.logits;
  float* probs = s.host_logits.data();
  if (const void* host = be.host_address(logits)) {
    std::copy_n(static_cast<const float*>(host), count, probs);
  } else {
    be.download(probs, logits, count);
  }
  int top[4096];
  float weight[4096];
  std::vector<int>& begin = s.expert_begin;
  std::fill(begin.begin(), begin.end(), 0);
  thread_local std::vector<int> chosen;  // token i's experts, then their weights
  thread_local std::vector<float> chosen_w;
  chosen.resize(static_cast<size_t>(n) * k);
  chosen_w.resize(chosen.size());
  for (int i = 0; i < n; ++i) {
    route_token(probs + static_cast<size_t>(i) * n_expert, n_expert, k, hp.expert_weights_norm, top,
                weight);
    for (int j = 0; j < k; ++j) {
      chosen[i * k + j] = top[j];
      chosen_w[i * k + j] = weight[j];
      ++begin[top[j] + 1];
    }
  }
  // Counting sort by expert: rows in token order within each expert.
  std::partial_sum(begin.begin(), begin.end(), begin.begin());
  thread_local std::vector<int> fill;
  fill.assign(begin.begin(), begin.end() - 1);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < k; ++j) {
      const int at = fill[chosen[i * k + j]]++;
      s.host_rows[at] = i;
      s.host_weights[at] = chosen_w[i * k + j];
    }
  }
  be.upload(s.rows, s.host_rows.data(), static_cast<size_t>(n) * k);
  be.upload(s.weights, s.host_weights.data(), static_cast<size_t>(n) * k);

  // The routed rows gathered in expert order, so each used expert's rows are contiguous;
  // then each used expert's weights once over its rows (all experts in one grouped product);
  // then the results added into the residual in that order (for a token: its experts in
  // increasing index, the same order whether it runs alone or in a batch).
  const int routed = n * k;
  be.gather_rows(xb, s.rows, routed, E, s.xg);
  s.w_list.clear(), s.x_list.clear(), s.n_list.clear(), s.y_list.clear();
  for (int e = 0; e < n_expert; ++e) {
    const int m = begin[e + 1] - begin[e];
    if (m == 0) continue;
    const size_t at = static_cast<size_t>(begin[e]);
    s.w_list.insert(s.w_list.end(), {&w.gate[e], &w.up[e]});
    s.x_list.insert(s.x_list.end(), 2, s.xg + at * E);
    s.n_list.insert(s.n_list.end(), 2, m);
    s.y_list.insert(s.y_list.end(), {s.gate + at * F, s.up + at * F});
  }
  be.matmul_grouped(s.w_list.data(), s.x_list.data(), s.n_list.data(), s.y_list.data(),
                    static_cast<int>(s.w_list.size()));
  be.swiglu(s.gate, s.up, routed, F);
  // The down products: one per used expert, reusing the lists' slots.
  int used = 0;
  for (int e = 0; e < n_expert; ++e) {
    const int m = begin[e + 1] - begin[e];
    if (m == 0) continue;
    const size_t at = static_cast<size_t>(begin[e]);
    s.w_list[used] = &w.down[e];
    s.x_list[used] = s.gate + at * F;
    s.n_list[used] = m;
    s.y_list[used] = s.y + at * E;
    ++used;
  }
  be.matmul_grouped(s.w_list.data(), s.x_list.data(), s.n_list.data(), s.y_list.data(), used);
  be.scatter_add_rows(s.y, s.rows, s.weights, routed, E, x);
}

}  // namespace leapfrog
