// The step every table's rms_norm (Kernels::rms_norm) ends a row's sum with, so that all give
// the same scale: the eight chains of squares combined ((0 + 4) + (2 + 6)) + ((1 + 5) + (3 + 7)),
// their mean as a float, and 1 / sqrt(mean + eps). Internal linkage: included by files built
// for different instruction sets (see packed_blocks.h).
#pragma once
#include <cmath>

namespace leapfrog::cpu {

namespace {

inline float rms_scale(const double (&s)[8], int dim, float eps) {
  const double sum = ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]));
  const float mean = static_cast<float>(sum / dim);
  return 1.0f / std::sqrt(mean + eps);
}

}  // namespace

}  // namespace leapfrog::cpu
