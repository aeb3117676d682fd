// KV storage in host memory, f16, one KV head after another so that an attention task (one
// KV head: attention_task.h) reads its keys and values as two contiguous streams. Interleaved
// heads ([position][kv_dim]) had each task use half of every stretch of memory it touched and
// the hardware prefetchers fetch the other half too: one row of 7 heads over 1024 positions,
// the cache in memory, 0.055 ms against 0.033 with one head's data contiguous (lf_attnbench
// --flush-mib 64 --kv-heads 2 / 1, Zen 5, session 20).
//   keys   [layer][kv head][block of kKeyBlock positions][head_dim][position in the block]
//          (dimension-major inside a block, as the kernels' scores read them)
//   values [layer][kv head][position][head_dim]
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

  // KV head `head`'s keys in `layer`: dimension d of position j at
  // keys(layer, head) + (j / kKeyBlock) * key_block_stride() + d * kKeyBlock + j % kKeyBlock.
  const uint16_t* keys(int layer, int head) const { return k_.data() + head_keys(layer, head); }
  size_t key_block_stride() const { return size_t(kKeyBlock) * layout_.head_dim; }
  // Its values: position j's at values(layer, head) + j * head_dim.
  const uint16_t* values(int layer, int head) const { return v_.data() + head_values(layer, head); }
  // Dimension 0 of KV head `head`'s key at position pos; dimension d at + d * kKeyBlock.
  const uint16_t* key_column(int layer, int head, int pos) const {
    return k_.data() + key_at(layer, pos, head * layout_.head_dim);
  }
  // Element c (of kv_dim, heads one after another) of position pos's key or value.
  uint16_t key(int layer, int pos, int c) const { return k_[key_at(layer, pos, c)]; }
  uint16_t value(int layer, int pos, int c) const { return v_[value_at(layer, pos, c)]; }

 private:
  size_t blocks() const { return size_t(layout_.n_ctx + kKeyBlock - 1) / kKeyBlock; }
  size_t head_keys(int layer, int head) const {
    return (size_t(layer) * layout_.n_kv_heads + head) * blocks() * key_block_stride();
  }
  size_t head_values(int layer, int head) const {
    return (size_t(layer) * layout_.n_kv_heads + head) * layout_.n_ctx * layout_.head_dim;
  }
  size_t key_at(int layer, int pos, int c) const {
    const int hd = layout_.head_dim;
    return head_keys(layer, c / hd) + size_t(pos / kKeyBlock) * key_block_stride() +
           size_t(c % hd) * kKeyBlock + pos % kKeyBlock;
  }
  size_t value_at(int layer, int pos, int c) const {
    const int hd = layout_.head_dim;
    return head_values(layer, c / hd) + size_t(pos) * hd + c % hd;
  }
  KvLayout layout_;
  QuantizeFn to_f16_;
  std::vector<uint16_t> k_, v_;
};

}  // namespace leapfrog::cpu
