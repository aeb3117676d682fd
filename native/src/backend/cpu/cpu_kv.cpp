#include "backend/cpu/cpu_kv.h"

#include <cstring>
#include <stdexcept>
#include <vector>

namespace leapfrog::cpu {

CpuKvStorage::CpuKvStorage(const KvLayout& layout, QuantizeFn to_f16)
    : layout_(layout), to_f16_(to_f16) {
  v_.resize(static_cast<size_t>(layout.n_layers) * layout.n_ctx * layout.kv_dim());
  k_.resize(static_cast<size_t>(layout.n_layers) * layer_keys());
}

void CpuKvStorage::store(int layer, int pos, int n, DevicePtr<const float> k_d,
                         DevicePtr<const float> v_d) {
  const float *k = k_d.get(), *v = v_d.get();
  if (pos < 0 || pos + n > layout_.n_ctx) throw std::out_of_range("KV store past the context");
  const int kv_dim = layout_.kv_dim();
  to_f16_(v, v_.data() + offset(layer, pos), static_cast<int64_t>(n) * kv_dim);
  // Keys one position at a time, converted whole and then spread over the block's rows.
  thread_local std::vector<uint16_t> row;
  row.resize(kv_dim);
  for (int i = 0; i < n; ++i) {
    to_f16_(k + static_cast<size_t>(i) * kv_dim, row.data(), kv_dim);
    uint16_t* slot = key_slot(layer, pos + i);
    for (int c = 0; c < kv_dim; ++c) slot[c * kKeyBlock] = row[c];
  }
}

void CpuKvStorage::move(int from, int to) {
  if (from == to) return;
  const int kv_dim = layout_.kv_dim();
  for (int l = 0; l < layout_.n_layers; ++l) {
    std::memmove(v_.data() + offset(l, to), v_.data() + offset(l, from), kv_dim * sizeof(uint16_t));
    const uint16_t* src = key_slot(l, from);
    uint16_t* dst = key_slot(l, to);
    for (int c = 0; c < kv_dim; ++c) dst[c * kKeyBlock] = src[c * kKeyBlock];
  }
}

}  // namespace leapfrog::cpu
