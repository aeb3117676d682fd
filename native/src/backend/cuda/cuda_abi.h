// The C entry points of libleapfrog_cuda.so, which the core opens at run time
// (backend/cuda_loader.cpp). Plain C types only: no CUDA header is needed to read this.
// The Backend object itself crosses the boundary as a C++ pointer: the library and the core
// are built by the same compiler from the same backend.h, checked by the key below.
#pragma once
#include <cstddef>
#include <cstdint>

#include "backend/backend.h"

namespace leapfrog::cuda_abi {

// 2: Backend gained the mixture-of-experts ops (a longer vtable, which no size shows).
// 3: and the architecture ops (layer_norm, gelu, geglu, scale, softcap) after them.
// 4: and Backend::counters() after those.
// 5: and Backend::load_weights after load_weight (all of a model's weights in one call).
constexpr int kVersion = 5;

// Changes whenever the structs that cross the boundary change size (a stale library).
constexpr uint32_t key() {
  return uint32_t(kVersion) ^ uint32_t(sizeof(WeightView)) << 4 ^
         uint32_t(sizeof(AttentionArgs)) << 10 ^ uint32_t(sizeof(KvLayout)) << 16 ^
         uint32_t(sizeof(RopeParams)) << 20 ^ uint32_t(sizeof(PassShape)) << 25 ^
         uint32_t(sizeof(ResidentWeight)) << 27;
}

using KeyFn = uint32_t (*)();
// 0 when a device is usable (its name in msg), else nonzero with the reason in msg.
using ProbeFn = int (*)(int device, char* msg, size_t len);
// A new backend on `device`, or null with the reason in msg. The caller deletes it.
using CreateFn = Backend* (*)(int device, char* msg, size_t len);

}  // namespace leapfrog::cuda_abi
