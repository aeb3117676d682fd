// The CUDA backend, opened at run time: libleapfrog_cuda.so (built where nvcc is found) is
// loaded only when asked for, so the core, the addon and the tools run on machines with no
// NVIDIA driver or CUDA runtime. No CUDA header is needed here.
#pragma once
#include <memory>
#include <string>

#include "backend/backend.h"

namespace leapfrog {

struct CudaBackendOptions {
  int device = 0;
};

// Throws std::runtime_error("CUDA not available: <reason>") when the library, the driver or
// a device is missing.
std::shared_ptr<Backend> create_cuda_backend(const CudaBackendOptions& opts = {});

// Whether create_cuda_backend would succeed for device 0 (loads the library; cheap after the
// first call). `why` gets the device's name, or the reason it is not available.
bool cuda_available(std::string* why = nullptr);

// Whether this build made the CUDA library (CMake found nvcc).
bool cuda_built();

}  // namespace leapfrog
