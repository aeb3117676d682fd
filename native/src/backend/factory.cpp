#include "backend/factory.h"

#include <stdexcept>

#include "backend/cpu/cpu_backend.h"
#include "backend/cuda_loader.h"

namespace leapfrog {

std::shared_ptr<Backend> create_backend(const BackendOptions& opts) {
  // auto: CUDA where its library and a device are present (whether the model fits is the
  // caller's check), else the CPU.
  if (opts.kind == "cuda" || (opts.kind == "auto" && cuda_built() && cuda_available())) {
    try {
      return create_cuda_backend();
    } catch (const std::runtime_error& e) {
      if (opts.kind == "cuda") throw std::invalid_argument(e.what());
    }
  }
  if (opts.kind == "auto" || opts.kind == "cpu") {
    CpuBackendOptions o;
    o.threads = opts.threads;
    return std::make_shared<CpuBackend>(o);
  }
  if (opts.kind == "metal") {
    throw std::invalid_argument("backend '" + opts.kind + "' is not available in this build");
  }
  throw std::invalid_argument("unknown backend '" + opts.kind + "' (auto, cpu, cuda, metal)");
}

}  // namespace leapfrog
