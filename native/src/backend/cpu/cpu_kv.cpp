#include "backend/cpu/cpu_kv.h"

#include <cstring>
#include <stdexcept>

namespace leapfrog::cpu {

CpuKvStorage::CpuKvStorage(const KvLayout& layout, QuantizeFn to_f16)
    : layout_(layout), to_f16_(to_f16) {
  const size_t n = static_cast<size_t>(layout.n_layers) * layout.n_ctx * layout.kv_dim();
  k_.resize(n);
  v_.resize(n);
}

void CpuKvStorage::store(int layer, int pos, int n, DevicePtr<const float> k_d,
                         DevicePtr<const float> v_d) {
  const float *k = k_d.get(), *v = v_d.get();
  if (pos < 0 || pos + n > layout_.n_ctx) throw std::out_of_range("KV store past the context");
  const size_t count = static_cast<size_t>(n) * layout_.kv_dim();
  uint16_t* kd = k_.data() + offset(layer, pos);
  uint16_t* vd = v_.data() + offset(layer, pos);
  to_f16_(k, kd, static_cast<int64_t>(count));
  to_f16_(v, vd, static_cast<int64_t>(count));
}

void CpuKvStorage::move(int from, int to) {
  if (from == to) return;
  const size_t bytes = layout_.kv_dim() * sizeof(uint16_t);
  for (int l = 0; l < layout_.n_layers; ++l) {
    std::memmove(k_.data() + offset(l, to), k_.data() + offset(l, from), bytes);
    std::memmove(v_.data() + offset(l, to), v_.data() + offset(l, from), bytes);
  }
}

}  // namespace leapfrog::cpu
