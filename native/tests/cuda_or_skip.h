// The CUDA backend for a test, or a visible skip where there is no library, driver or device.
#pragma once
#include <cstdio>
#include <memory>
#include <string>

#include "backend/cuda_loader.h"
#include "test_harness.h"

namespace lftest {

inline std::shared_ptr<leapfrog::Backend> cuda_or_skip() {
  static std::shared_ptr<leapfrog::Backend> be;
  static std::string why;
  static bool tried = false;
  if (!tried) {
    tried = true;
    try {
      be = leapfrog::create_cuda_backend();
    } catch (const std::exception& e) {
      why = e.what();
      std::printf("# skipped: no CUDA device (%s)\n", why.c_str());
    }
  }
  if (!be) SKIP("no CUDA device (" + why + ")");
  return be;
}

}  // namespace lftest
