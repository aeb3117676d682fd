// A run-time count turned into a compile-time one, for kernels templated on how many rows
// or (row, head) pairs they hold: with_count<Lo, Hi>(n, f) calls
// f(std::integral_constant<int, n>{}) for n in [Lo, Hi] (nothing outside it). Internal
// linkage, like the kernels' other headers: each instruction set's file has its own copy.
#pragma once
#include <type_traits>

namespace leapfrog::cpu {

namespace {

template <int Lo, int Hi, class F>
inline void with_count(int n, F&& f) {
  if (n == Hi) return f(std::integral_constant<int, Hi>{});
  if constexpr (Hi > Lo) with_count<Lo, Hi - 1>(n, f);
}

}  // namespace

}  // namespace leapfrog::cpu
