// Dequantization of GGUF rows to f32: the reference definition of every supported type.
#pragma once
#include <cstdint>

#include "gguf/ggml_types.h"

namespace leapfrog::format {

// Writes `n` f32 values decoded from a row of `type` starting at `src` (n a multiple of the
// block size). Throws std::invalid_argument for an unsupported type.
void dequantize_row(GgmlType type, const void* src, float* dst, int64_t n);

}  // namespace leapfrog::format
