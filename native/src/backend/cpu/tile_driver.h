// How the int8 matrix products walk a block of output: weight rows R at a time (each loaded
// weight block serves C activation rows from registers), activation rows 4, then 2, then 1
// at a time. Tile::run<R, C>(w, ws, a, as, y, ldy, nb) computes one R x C tile over nb
// blocks of inputs; every (row, activation) pair runs the same operations in any tile, so
// the walk does not change results. Internal linkage: each instruction set's file has its own.
#pragma once
#include <cstddef>
#include <cstdint>

namespace leapfrog::cpu {

namespace {

// Weight rows [0, R) (row r at w + r * ws) x activation rows [0, n).
template <class Tile, int R>
inline void tile_columns(const uint8_t* w, size_t ws, const uint8_t* a, size_t as, int n, float* y,
                         size_t ldy, int64_t nb) {
  int i = 0;
  for (; i + 4 <= n; i += 4) Tile::template run<R, 4>(w, ws, a + i * as, as, y + i * ldy, ldy, nb);
  if (n - i >= 2) {
    Tile::template run<R, 2>(w, ws, a + i * as, as, y + i * ldy, ldy, nb);
    i += 2;
  }
  if (i < n) Tile::template run<R, 1>(w, ws, a + i * as, as, y + i * ldy, ldy, nb);
}

// All rows, two at a time (decoding included: two independent chains, and the kernels'
// prefetch of the next pair keeps the side-by-side streams fed).
template <class Tile>
inline void tile_rows_by_two(const uint8_t* w, size_t ws, int64_t rows, const uint8_t* a, size_t as,
                             int n, float* y, size_t ldy, int64_t nb) {
  int64_t r = 0;
  for (; r + 2 <= rows; r += 2) tile_columns<Tile, 2>(w + r * ws, ws, a, as, n, y + r, ldy, nb);
  for (; r < rows; ++r) tile_columns<Tile, 1>(w + r * ws, ws, a, as, n, y + r, ldy, nb);
}

// Kernels::gemm and Kernels::dot of a type with `kValues` inputs per block, from its tile.
template <class Tile, int kValues>
void gemm_tiled(const uint8_t* w, size_t ws, int64_t rows, const uint8_t* a, size_t as, int n,
                float* y, size_t ldy, int64_t cols) {
  tile_rows_by_two<Tile>(w, ws, rows, a, as, n, y, ldy, cols / kValues);
}
template <class Tile, int kValues>
float dot_tiled(const void* w, const void* a, int64_t n) {
  float out;
  Tile::template run<1, 1>(static_cast<const uint8_t*>(w), 0, static_cast<const uint8_t*>(a), 0,
                           &out, 0, n / kValues);
  return out;
}

}  // namespace

}  // namespace leapfrog::cpu
