// Tensor element types as GGUF numbers them, and their block layouts (facts of the format).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace leapfrog {

enum class GgmlType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  IQ4_NL = 20,
  IQ4_XS = 23,
  BF16 = 30,
};

struct GgmlTypeTraits {
  std::string_view name;
  uint32_t block_size;  // weights per block
  uint32_t type_size;   // bytes per block
  bool supported;       // this engine can compute with it
};

// Traits for a raw type number; nullptr when the number is not a known type.
const GgmlTypeTraits* ggml_type_traits(uint32_t type);

// Bytes of one row of `n` weights (n must be a multiple of the block size).
size_t ggml_row_bytes(GgmlType type, uint64_t n);

}  // namespace leapfrog
