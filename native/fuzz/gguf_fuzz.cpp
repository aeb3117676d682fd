// libFuzzer target for the GGUF reader: any byte string either parses or raises GgufError.
// Build: cmake -DLEAPFROG_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ (see scripts/fuzz.sh).
#include <cstddef>
#include <cstdint>

#include "gguf/gguf_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    auto file = leapfrog::GgufFile::parse(data, size, "fuzz.gguf");
    // Touch what a loader would touch: metadata and every tensor's bytes.
    volatile uint64_t sink = 0;
    for (const auto& [key, value] : file->metadata()) sink += key.size() + value.strs.size();
    for (const auto& t : file->tensors()) {
      if (t.n_bytes) sink += t.data[0] + t.data[t.n_bytes - 1];
    }
    (void)sink;
  } catch (const leapfrog::GgufError&) {
  }
  return 0;
}
