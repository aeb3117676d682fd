#include "backend/factory.h"

#include <stdexcept>

#include "backend/cpu/cpu_backend.h"

namespace leapfrog {

std::shared_ptr<Backend> create_backend(const BackendOptions& opts) {
  if (opts.kind == "auto" || opts.kind == "cpu") {
    CpuBackendOptions o;
    o.threads = opts.threads;
    return std::make_shared<CpuBackend>(o);
  }
  if (opts.kind == "cuda" || opts.kind == "metal") {
    throw std::invalid_argument("backend '" + opts.kind + "' is not available in this build");
  }
  throw std::invalid_argument("unknown backend '" + opts.kind + "' (auto, cpu, cuda, metal)");
}

}  // namespace leapfrog
