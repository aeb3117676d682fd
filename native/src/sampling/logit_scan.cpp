#include "sampling/logit_scan.h"

#include <bit>
#include <cmath>
#include <cstring>

namespace leapfrog {

namespace {

using F32x4 = float __attribute__((vector_size(16)));
using I32x4 = int32_t __attribute__((vector_size(16)));

inline F32x4 load4(const float* p) {
  F32x4 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// e^x for x in [-87, 0]: 2^n e^r with n = trunc(x log2 e) and r = x - n ln 2 in (-ln 2, 0],
// e^r by its Taylor polynomial of degree 6 (relative error below 4e-5), 2^n built in the
// exponent bits.
inline F32x4 exp4(F32x4 x) {
  const I32x4 n = __builtin_convertvector(x * 1.44269504f, I32x4);
  const F32x4 r = x - __builtin_convertvector(n, F32x4) * 0.693147181f;
  F32x4 p = r * (1.0f / 720) + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  return p * std::bit_cast<F32x4>((n + 127) << 23);
}

}  // namespace

int32_t argmax_logit(const float* logits, int n) {
  if (n <= 0) return 0;
  // The maximum four lanes at a time (comparisons with a NaN are false, so NaNs never win),
  // then the first index that holds it.
  float m = -INFINITY;
  int i = 0;
  if (n >= 4) {
    F32x4 mv = F32x4{} - INFINITY;
    for (; i + 4 <= n; i += 4) {
      const F32x4 v = load4(logits + i);
      mv = v > mv ? v : mv;
    }
    for (int k = 0; k < 4; ++k) m = mv[k] > m ? mv[k] : m;
  }
  for (; i < n; ++i) m = logits[i] > m ? logits[i] : m;
  for (int32_t j = 0; j < n; ++j) {
    if (logits[j] == m) return j;
  }
  return 0;  // every logit NaN
}

double softmax_denominator(const float* logits, int n, float m) {
  F32x4 acc = {0, 0, 0, 0};
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    const F32x4 x = load4(logits + i) - m;
    acc += exp4(x < -87.0f ? F32x4{} - 87.0f : x);
  }
  double sum = double(acc[0]) + acc[1] + acc[2] + acc[3];
  for (; i < n; ++i) sum += std::exp(static_cast<double>(logits[i] - m));
  return sum;
}

}  // namespace leapfrog
