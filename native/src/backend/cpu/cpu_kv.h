// KV storage in host memory, f16, laid out [layer][position][kv_dim] for K and for V so a
// position's keys for all heads are contiguous (one write per token, streaming reads).
#pragma once
#include <vector>

#include "backend/backend.h"

namespace leapfrog::cpu {

class CpuKvStorage final : public KvStorage {
 public:
  explicit CpuKvStorage(const KvLayout& layout);
  const KvLayout& layout() const override { return layout_; }
  void store(int layer, int pos, int n, DevicePtr<const float> k,
             DevicePtr<const float> v) override;
  void move(int from, int to) override;

  const uint16_t* k(int layer, int pos) const { return k_.data() + offset(layer, pos); }
  const uint16_t* v(int layer, int pos) const { return v_.data() + offset(layer, pos); }

 private:
  size_t offset(int layer, int pos) const {
    return (static_cast<size_t>(layer) * layout_.n_ctx + pos) * layout_.kv_dim();
  }
  KvLayout layout_;
  std::vector<uint16_t> k_, v_;
};

}  // namespace leapfrog::cpu
