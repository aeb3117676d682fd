// The backends this build can run on this machine: what the backend op test
// (tests/backend_ops_test.cpp) checks against the reference, and what tools may list. A new
// backend joins with one entry in registry.cpp.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"

namespace leapfrog {

struct BackendEntry {
  std::string name;  // "cpu:avx2", "cuda", …
  std::function<std::shared_ptr<Backend>()> create;
};

// Every runnable backend (each CPU instruction-set level; GPU backends whose library and
// device are present). `unavailable` collects one line per backend built but not runnable
// here, saying why (tests print it as a visible skip).
std::vector<BackendEntry> available_backends(int cpu_threads,
                                             std::vector<std::string>* unavailable = nullptr);

// The reference all backends are checked against: scalar CPU code, products through
// weights dequantized to f32 (format/dequant.h) with double accumulation.
std::shared_ptr<Backend> reference_backend();

}  // namespace leapfrog
