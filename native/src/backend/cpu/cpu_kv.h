// KV storage in host memory, f16. Values are laid out [layer][position][kv_dim] (a position's
// values for all heads contiguous: the weighted sum reads them position by position); keys
// [layer][block of kKeyBlock positions][kv_dim][position in the block], as the attention
// kernels' scores read them (attention_task.h).
#pragma once
#include <vector>

#include "backend/backend.h"
#include "backend/cpu/attention_task.h"
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

  // The keys of `layer`: dimension c (of all heads) of position j at
  // keys(layer) + (j / kKeyBlock) * key_block_stride() + c * kKeyBlock + j % kKeyBlock.
  const uint16_t* keys(int layer) const { return k_.data() + layer * layer_keys(); }
  size_t key_block_stride() const { return size_t(kKeyBlock) * layout_.kv_dim(); }
  // Dimension c of position pos's key.
  uint16_t key(int layer, int pos, int c) const {
    return keys(layer)[pos / kKeyBlock * key_block_stride() + c * kKeyBlock + pos % kKeyBlock];
  }
  const uint16_t* v(int layer, int pos) const { return v_.data() + offset(layer, pos); }

 private:
  size_t offset(int layer, int pos) const {
    return (static_cast<size_t>(layer) * layout_.n_ctx + pos) * layout_.kv_dim();
  }
  size_t layer_keys() const {
    return size_t(layout_.n_ctx + kKeyBlock - 1) / kKeyBlock * key_block_stride();
  }
  uint16_t* key_slot(int layer, int pos) {
    return k_.data() + layer * layer_keys() + pos / kKeyBlock * key_block_stride() +
           pos % kKeyBlock;
  }
  KvLayout layout_;
  QuantizeFn to_f16_;
  std::vector<uint16_t> k_, v_;
};

}  // namespace leapfrog::cpu
