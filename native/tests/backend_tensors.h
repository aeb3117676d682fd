// Host data in a backend's memory, for the backend tests: each backend's own alloc, upload and
// download, so the same test runs on the CPU and in a GPU's device memory.
#pragma once
#include <algorithm>
#include <memory>
#include <random>
#include <vector>

#include "backend/backend.h"

namespace lftest {

template <class T>
struct Tensor {
  std::unique_ptr<leapfrog::DeviceBuffer> mem;
  size_t count = 0;
  leapfrog::DevicePtr<T> ptr() const { return mem->as<T>(); }
};

template <class T>
Tensor<T> to_backend(leapfrog::Backend& be, const std::vector<T>& host) {
  Tensor<T> t{be.alloc(std::max<size_t>(host.size(), 1) * sizeof(T)), host.size()};
  be.upload(t.ptr(), host.data(), host.size());
  return t;
}

template <class T>
std::vector<T> to_host(leapfrog::Backend& be, const Tensor<T>& t) {
  std::vector<T> out(t.count);
  be.download(out.data(), leapfrog::DevicePtr<const T>(t.ptr()), t.count);
  return out;
}

inline std::vector<float> randn(size_t n, std::mt19937& rng, float scale = 1) {
  std::normal_distribution<float> nd(0, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = nd(rng);
  return v;
}

}  // namespace lftest
