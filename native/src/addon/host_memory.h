// How much host memory a model load may take: refuses a model larger than memory before
// a byte of it is mapped in, instead of letting it thrash or be killed by the OOM killer.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace leapfrog::addon {

// Bytes of memory available to a new load: LEAPFROG_MEMORY_LIMIT_BYTES when set (tests, and
// users who know better), else MemAvailable (Linux) or the physical memory (macOS); nullopt
// where unknown, and then no check is made.
std::optional<uint64_t> available_host_memory();

// Throws "<path>: the model needs N bytes (x GiB) of memory, M bytes (y GiB) available ..."
// when `needed` exceeds what is available.
void check_host_memory(const std::string& path, uint64_t needed);

}  // namespace leapfrog::addon
