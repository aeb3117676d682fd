// Portable products of the low-bit types (Q4_1, Q5_1, IQ4_NL on 32-value Q8_0 activations;
// Q2_K, Q3_K, IQ4_XS on 256-value Q8_K activations): the definition of what a faster path
// must compute. Each block's (or super-block's) integer sum is exact, and the float work per
// block is one fixed expression, as in llama.cpp's reference products.
#include <cstring>

#include "backend/cpu/kernels.h"
#include "backend/cpu/quant_blocks.h"
#include "backend/cpu/scalar_parts.h"
#include "format/fp16.h"

namespace leapfrog::cpu::scalar {

namespace {

// Sum over a 32-block of code(j) * a[j], the codes read from Q4_0-style nibbles (element j
// in the low nibble of qs[j], element j + 16 in the high one) and mapped by `value`.
template <class Value>
int nibble_block_sum(const uint8_t* qs, const int8_t* a, Value value) {
  int s = 0;
  for (int j = 0; j < kQK / 2; ++j) {
    s += value(qs[j] & 0xF, j) * a[j];
    s += value(qs[j] >> 4, j + kQK / 2) * a[j + kQK / 2];
  }
  return s;
}

// Q4_1/Q5_1: value = q * d + m, so a block's product is d * da * <q, a> + m * s, s the
// activation block's total (q8_block_total, quant_blocks.h).

// Q4_1 (kQ5 false) and Q5_1 (kQ5 true, the fifth bit of element j in bit j of qh).
template <class Block, bool kQ5>
float dot_qx_1(const void* w, const void* a, int64_t n) {
  const Block* x = static_cast<const Block*>(w);
  const ActQ8_0* y = static_cast<const ActQ8_0*>(a);
  float sum = 0;
  for (int64_t b = 0; b < n / kQK; ++b) {
    uint32_t qh = 0;
    if constexpr (kQ5) std::memcpy(&qh, x[b].qh, sizeof(qh));
    const int isum = nibble_block_sum(
        x[b].qs, y[b].qs, [&](int q, int j) { return q | static_cast<int>(((qh >> j) & 1) << 4); });
    sum += (f16_to_f32(x[b].d) * y[b].d) * static_cast<float>(isum) +
           f16_to_f32(x[b].m) * q8_block_total(y[b]);
  }
  return sum;
}

float dot_iq4_nl(const void* w, const void* a, int64_t n) {
  const BlockIQ4_NL* x = static_cast<const BlockIQ4_NL*>(w);
  const ActQ8_0* y = static_cast<const ActQ8_0*>(a);
  float sum = 0;
  for (int64_t b = 0; b < n / kQK; ++b) {
    const int isum =
        nibble_block_sum(x[b].qs, y[b].qs, [](int q, int) { return int{kIq4NlValues[q]}; });
    sum += static_cast<float>(isum) * (f16_to_f32(x[b].d) * y[b].d);
  }
  return sum;
}

// Q2_K/Q3_K's 2-bit layout: the product of 16-weight sub-block `sub` (0..15) with the
// activations at a (its 16 values), code(q, at) mapping the 2-bit code of byte `at` of the
// half's 32 bytes.
template <class Code>
int sub16_sum(const uint8_t* qs, int sub, const int8_t* a, Code code) {
  const uint8_t* q = qs + 32 * (sub / 8);
  const int shift = 2 * ((sub % 8) / 2);
  const int base = 16 * (sub % 2);
  int s = 0;
  for (int l = 0; l < 16; ++l) s += code((q[base + l] >> shift) & 3, base + l) * a[l];
  return s;
}

// Q2_K: value = d * sc * q - dmin * m per sub-block; the mins go through the activations'
// 16-value sums (one multiply per sub-block).
float dot_q2_k(const void* w, const void* a, int64_t n) {
  const BlockQ2_K* x = static_cast<const BlockQ2_K*>(w);
  const ActQ8_K* y = static_cast<const ActQ8_K*>(a);
  float sum = 0;
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    int sum_q = 0, sum_m = 0;
    for (int sub = 0; sub < 16; ++sub) {
      const int s = sub16_sum(x[b].qs, sub, y[b].qs + 16 * sub, [](int q, int) { return q; });
      sum_q += (x[b].scales[sub] & 0xF) * s;
      sum_m += (x[b].scales[sub] >> 4) * y[b].bsums[sub];
    }
    const float d = y[b].d * f16_to_f32(x[b].d);
    const float dmin = y[b].d * f16_to_f32(x[b].dmin);
    sum += d * static_cast<float>(sum_q) - dmin * static_cast<float>(sum_m);
  }
  return sum;
}

// Q3_K: value = d * (scale - 32) * (q - 4 unless the high bit is set).
float dot_q3_k(const void* w, const void* a, int64_t n) {
  const BlockQ3_K* x = static_cast<const BlockQ3_K*>(w);
  const ActQ8_K* y = static_cast<const ActQ8_K*>(a);
  float sum = 0;
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    int8_t scales[16];
    q3k_scales(x[b].scales, scales);
    int isum = 0;
    for (int sub = 0; sub < 16; ++sub) {
      // The high bit of the 32-weight run this sub-block is half of: bit (sub / 2).
      const uint8_t high = static_cast<uint8_t>(1u << (sub / 2));
      const int s = sub16_sum(x[b].qs, sub, y[b].qs + 16 * sub,
                              [&](int q, int at) { return q - (x[b].hmask[at] & high ? 0 : 4); });
      isum += scales[sub] * s;
    }
    sum += (f16_to_f32(x[b].d) * y[b].d) * static_cast<float>(isum);
  }
  return sum;
}

// IQ4_XS: value = d * (scale - 32) * kIq4NlValues[nibble], per 32-weight sub-block.
float dot_iq4_xs(const void* w, const void* a, int64_t n) {
  const BlockIQ4_XS* x = static_cast<const BlockIQ4_XS*>(w);
  const ActQ8_K* y = static_cast<const ActQ8_K*>(a);
  float sum = 0;
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    int isum = 0;
    for (int sub = 0; sub < 8; ++sub) {
      const int s = nibble_block_sum(x[b].qs + 16 * sub, y[b].qs + 32 * sub,
                                     [](int q, int) { return int{kIq4NlValues[q]}; });
      isum += iq4xs_scale(x[b], sub) * s;
    }
    sum += (f16_to_f32(x[b].d) * y[b].d) * static_cast<float>(isum);
  }
  return sum;
}

template <DotFn Dot>
void set(Kernels& t, GgmlType type) {
  t.dot[kernel_slot(type)] = Dot;
  t.gemm[kernel_slot(type)] = gemm_by_dot<Dot>;
}

}  // namespace

void install_lowbit(Kernels& t) {
  set<dot_qx_1<BlockQ4_1, false>>(t, GgmlType::Q4_1);
  set<dot_qx_1<BlockQ5_1, true>>(t, GgmlType::Q5_1);
  set<dot_iq4_nl>(t, GgmlType::IQ4_NL);
  set<dot_q2_k>(t, GgmlType::Q2_K);
  set<dot_q3_k>(t, GgmlType::Q3_K);
  set<dot_iq4_xs>(t, GgmlType::IQ4_XS);
}

}  // namespace leapfrog::cpu::scalar
