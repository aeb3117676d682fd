#include "backend/cpu/cpu_kv.h"

#include <cstring>
#include <stdexcept>
#include <vector>

namespace leapfrog::cpu {

CpuKvStorage::CpuKvStorage(const KvLayout& layout, QuantizeFn to_f16)
    : layout_(layout), to_f16_(to_f16) {
  const size_t heads = size_t(layout.n_layers) * layout.n_kv_heads;
  k_.resize(heads * blocks() * key_block_stride());
  v_.resize(heads * layout.n_ctx * layout.head_dim);
}

void CpuKvStorage::store(int layer, int pos, int n, DevicePtr<const float> k_d,
                         DevicePtr<const float> v_d) {
  const float *k = k_d.get(), *v = v_d.get();
  if (pos < 0 || pos + n > layout_.n_ctx) throw std::out_of_range("KV store past the context");
  const int hd = layout_.head_dim, kv_dim = layout_.kv_dim();
  // A position's keys converted whole, then spread over their heads' blocks.
  thread_local std::vector<uint16_t> row;
  row.resize(kv_dim);
  for (int i = 0; i < n; ++i) {
    const size_t src = static_cast<size_t>(i) * kv_dim;
    to_f16_(k + src, row.data(), kv_dim);
    for (int h = 0; h < layout_.n_kv_heads; ++h) {
      to_f16_(v + src + h * hd, v_.data() + value_at(layer, pos + i, h * hd), hd);
      uint16_t* slot = k_.data() + key_at(layer, pos + i, h * hd);
      for (int d = 0; d < hd; ++d) slot[d * kKeyBlock] = row[h * hd + d];
    }
  }
}

void CpuKvStorage::move(int from, int to) {
  if (from == to) return;
  const int hd = layout_.head_dim;
  for (int l = 0; l < layout_.n_layers; ++l) {
    for (int h = 0; h < layout_.n_kv_heads; ++h) {
      std::memmove(v_.data() + value_at(l, to, h * hd), v_.data() + value_at(l, from, h * hd),
                   hd * sizeof(uint16_t));
      const uint16_t* src = k_.data() + key_at(l, from, h * hd);
      uint16_t* dst = k_.data() + key_at(l, to, h * hd);
      for (int d = 0; d < hd; ++d) dst[d * kKeyBlock] = src[d * kKeyBlock];
    }
  }
}

}  // namespace leapfrog::cpu
