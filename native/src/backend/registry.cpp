#include "backend/registry.h"

#include "backend/cpu/cpu_backend.h"
#include "backend/cuda_loader.h"

namespace leapfrog {

std::vector<BackendEntry> available_backends(int cpu_threads,
                                             std::vector<std::string>* unavailable) {
  std::vector<BackendEntry> out;
  for (cpu::Isa isa : cpu::runnable_isas()) {
    out.push_back({std::string("cpu:") + cpu::isa_name(isa), [isa, cpu_threads] {
                     return std::make_shared<CpuBackend>(
                         CpuBackendOptions{.threads = cpu_threads, .isa = isa});
                   }});
  }
  // GPU backends join here.
  if (cuda_built()) {
    std::string why;
    if (cuda_available(&why)) {
      out.push_back({"cuda:" + why, [] { return create_cuda_backend(); }});
    } else if (unavailable) {
      unavailable->push_back("cuda: CUDA not available: " + why);
    }
  }
  return out;
}

std::shared_ptr<Backend> reference_backend() {
  return std::make_shared<CpuBackend>(
      CpuBackendOptions{.threads = 1, .isa = cpu::Isa::Scalar, .reference_matmul = true});
}

}  // namespace leapfrog
