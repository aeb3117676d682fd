#include "backend/cuda_loader.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "backend/cuda/cuda_abi.h"

namespace leapfrog {

namespace {

constexpr const char* kLibName = "libleapfrog_cuda.so";

std::string dir_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

// Where to look: $LEAPFROG_CUDA_LIB, then beside the module holding this code (the addon, a
// tool or a test), then beside the executable, then the system's library path.
std::vector<std::string> candidates() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("LEAPFROG_CUDA_LIB"); env && *env) {
    out.push_back(env);
    return out;
  }
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&create_cuda_backend), &info) && info.dli_fname) {
    const std::string d = dir_of(info.dli_fname);
    if (!d.empty()) out.push_back(d + kLibName);
  }
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = 0;
    const std::string p = dir_of(exe) + kLibName;
    if (out.empty() || out.back() != p) out.push_back(p);
  }
  out.push_back(kLibName);
  return out;
}

struct Library {
  bool loaded = false;
  std::string error;  // why not loaded
  cuda_abi::ProbeFn probe = nullptr;
  cuda_abi::CreateFn create = nullptr;
};

const Library& library() {
  static Library lib;
  static std::once_flag once;
  std::call_once(once, [] {
    std::string first_error, looked;
    const bool from_env = std::getenv("LEAPFROG_CUDA_LIB") && *std::getenv("LEAPFROG_CUDA_LIB");
    for (const std::string& path : candidates()) {
      const bool explicit_path = path.find('/') != std::string::npos;
      if (explicit_path && !from_env && access(path.c_str(), F_OK) != 0) {
        looked += (looked.empty() ? "" : ", ") + dir_of(path);
        continue;  // not built there
      }
      void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!h) {
        const char* e = dlerror();
        // A bare name that the system's path does not find: say where we looked instead.
        if (first_error.empty() && (explicit_path || from_env)) {
          first_error = e ? e : (path + ": dlopen failed");
        }
        continue;
      }
      auto key = reinterpret_cast<cuda_abi::KeyFn>(dlsym(h, "leapfrog_cuda_key"));
      lib.probe = reinterpret_cast<cuda_abi::ProbeFn>(dlsym(h, "leapfrog_cuda_probe"));
      lib.create = reinterpret_cast<cuda_abi::CreateFn>(dlsym(h, "leapfrog_cuda_create"));
      if (!key || !lib.probe || !lib.create) {
        lib.error = path + " is not Leapfrog's CUDA library (entry points missing)";
        return;
      }
      if (key() != cuda_abi::key()) {
        lib.error = path + " was built from another version of Leapfrog (rebuild it)";
        return;
      }
      lib.loaded = true;
      return;
    }
    lib.error = !first_error.empty()
                    ? first_error
                    : std::string(kLibName) + " not found in " + (looked.empty() ? "." : looked) +
                          " or the library path" +
                          (cuda_built() ? ""
                                        : " (this build has no CUDA backend: nvcc was not found or "
                                          "LEAPFROG_CUDA=OFF)");
  });
  return lib;
}

}  // namespace

bool cuda_built() {
#ifdef LEAPFROG_CUDA_BUILT
  return true;
#else
  return false;
#endif
}

bool cuda_available(std::string* why) {
  const Library& lib = library();
  if (!lib.loaded) {
    if (why) *why = lib.error;
    return false;
  }
  char msg[512] = {0};
  const bool ok = lib.probe(0, msg, sizeof msg) == 0;
  if (why) *why = msg;
  return ok;
}

std::shared_ptr<Backend> create_cuda_backend(const CudaBackendOptions& opts) {
  const Library& lib = library();
  if (!lib.loaded) throw std::runtime_error("CUDA not available: " + lib.error);
  char msg[512] = {0};
  Backend* be = lib.create(opts.device, msg, sizeof msg);
  if (!be) throw std::runtime_error(std::string("CUDA not available: ") + msg);
  return std::shared_ptr<Backend>(be);
}

}  // namespace leapfrog
