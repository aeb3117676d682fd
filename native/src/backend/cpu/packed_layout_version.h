// The version of the CPU backend's packed weight layouts (Kernels::Packed: packed_layouts.h,
// packed_*.cpp, the kernels_*.cpp tables), part of every packed-weight cache key
// (packed_cache.h). Bump it whenever any pack() writes different bytes for the same weight,
// or a table's group / group_bytes change: cache files written by the old layout then no
// longer match and are rewritten instead of being read by kernels that expect the new one.
// The key also holds a fingerprint of the bytes pack() writes for a fixed input
// (CpuBackend::load_weights), which catches a layout change whose bump was forgotten.
#pragma once
#include <cstdint>

namespace leapfrog::cpu {

inline constexpr uint32_t kPackedLayoutVersion = 1;

}  // namespace leapfrog::cpu
