// Picks a backend by name ("auto", "cpu"); GPU backends plug in here later.
#pragma once
#include <memory>
#include <string>

#include "backend/backend.h"

namespace leapfrog {

struct BackendOptions {
  std::string kind = "auto";  // auto | cpu | cuda | metal
  int threads = 0;            // CPU threads; 0 = physical cores
};

// Throws std::invalid_argument for an unknown or unavailable kind.
std::shared_ptr<Backend> create_backend(const BackendOptions& opts);

}  // namespace leapfrog
