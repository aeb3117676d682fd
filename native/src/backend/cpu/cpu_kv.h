// KV storage in host memory, f16, laid out [layer][position][kv_dim] for K and for V so a
// position's keys for all heads are contiguous (one write per token, streaming reads).
#pragma once
#include <vector>

#include "backend/backend.h"
#include "backend/cpu/kernels.h"

namespace leapfrog::cpu {

class CpuKvStorage final : public KvStorage {
 public:
  // `to_f16`: this instruction set's f32 -> f16 rounding (Kernels::quantize[F16]), the same
  // rounding as format::f32_to_f16 eight or sixteen at a time. The scalar conversion was 1.4 %
  // of a 16-token pass's samples on the bundled model, on the calling thread alone.
  CpuKvStorage(const KvLayout& layout, QuantizeFn to_f16);
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
  QuantizeFn to_f16_;
  std::vector<uint16_t> k_, v_;
};

}  // namespace leapfrog::cpu
