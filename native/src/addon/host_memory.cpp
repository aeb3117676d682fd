#include "addon/host_memory.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#if defined(__APPLE__)
#include <sys/sysctl.h>
#include <sys/types.h>
#endif

namespace leapfrog::addon {

namespace {

constexpr const char* kLimitEnv = "LEAPFROG_MEMORY_LIMIT_BYTES";
#if defined(__APPLE__)
constexpr const char* kSystemSource = "physical memory";
#else
constexpr const char* kSystemSource = "MemAvailable";
#endif

std::optional<uint64_t> parse_bytes(const char* s) {
  if (!s || !*s) return std::nullopt;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(s, &end, 10);
  if (*end != '\0' || s[0] == '-') return std::nullopt;
  return static_cast<uint64_t>(v);
}

std::optional<uint64_t> system_available() {
#if defined(__linux__)
  // MemAvailable: what can be had without swapping (free plus reclaimable page cache).
  std::ifstream in("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return std::nullopt;
#elif defined(__APPLE__)
  // No cheap "available" figure: the physical memory, so a model larger than the machine's
  // memory is still refused.
  uint64_t bytes = 0;
  size_t len = sizeof bytes;
  if (sysctlbyname("hw.memsize", &bytes, &len, nullptr, 0) == 0 && bytes > 0) return bytes;
  return std::nullopt;
#else
  return std::nullopt;
#endif
}

}  // namespace

std::optional<uint64_t> available_host_memory() {
  if (const char* s = std::getenv(kLimitEnv)) {
    const auto v = parse_bytes(s);
    if (!v) {
      throw std::runtime_error(std::string(kLimitEnv) + "='" + s + "' is not a number of bytes");
    }
    return v;
  }
  return system_available();
}

void check_host_memory(const std::string& path, uint64_t needed) {
  const auto available = available_host_memory();
  if (!available || needed <= *available) return;
  const bool from_env = std::getenv(kLimitEnv) != nullptr;
  char msg[320];
  std::snprintf(msg, sizeof msg,
                ": the model needs %llu bytes (%.2f GiB) of memory, but only %llu bytes "
                "(%.2f GiB) are available (%s); close other programs or pick a smaller model",
                static_cast<unsigned long long>(needed), needed / 1073741824.0,
                static_cast<unsigned long long>(*available), *available / 1073741824.0,
                from_env ? kLimitEnv : kSystemSource);
  throw std::runtime_error(path + msg);
}

}  // namespace leapfrog::addon
