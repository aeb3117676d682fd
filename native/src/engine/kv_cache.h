// A session's KV cache: the backend's storage plus the token ids it holds, so a new
// request can keep the common prefix and a rejected draft can be rolled back.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "backend/backend.h"

namespace leapfrog {

class KvCache {
 public:
  KvCache(Backend& backend, const KvLayout& layout)
      : storage_(backend.create_kv(layout)), n_ctx_(layout.n_ctx) {
    tokens_.reserve(n_ctx_);
  }

  KvStorage& storage() { return *storage_; }
  int n_ctx() const { return n_ctx_; }
  int size() const { return static_cast<int>(tokens_.size()); }  // positions filled
  const std::vector<int32_t>& tokens() const { return tokens_; }

  // Forget positions >= n (rejected draft tokens, or a diverging new prompt). The stored
  // values beyond n are simply overwritten by the next forward pass.
  void truncate(int n) {
    if (n < size()) tokens_.resize(n < 0 ? 0 : n);
  }
  // Records that positions [size(), size() + ids.size()) now hold these tokens.
  void append(std::span<const int32_t> ids) {
    tokens_.insert(tokens_.end(), ids.begin(), ids.end());
  }

  // Length of the common prefix of the cached tokens and `prompt`.
  int common_prefix(std::span<const int32_t> prompt) const {
    size_t n = 0;
    while (n < tokens_.size() && n < prompt.size() && tokens_[n] == prompt[n]) ++n;
    return static_cast<int>(n);
  }

 private:
  std::unique_ptr<KvStorage> storage_;
  int n_ctx_;
  std::vector<int32_t> tokens_;
};

}  // namespace leapfrog
