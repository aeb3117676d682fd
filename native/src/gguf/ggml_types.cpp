#include "gguf/ggml_types.h"

#include <stdexcept>

namespace leapfrog {

namespace {

// Indexed by the GGUF type number. Block sizes and bytes per block are facts of the format.
struct Entry {
  uint32_t id;
  GgmlTypeTraits traits;
};

constexpr Entry kTypes[] = {
    {0, {"F32", 1, 4, true}},       {1, {"F16", 1, 2, true}},
    {2, {"Q4_0", 32, 18, true}},    {3, {"Q4_1", 32, 20, true}},
    {6, {"Q5_0", 32, 22, true}},    {7, {"Q5_1", 32, 24, true}},
    {8, {"Q8_0", 32, 34, true}},    {9, {"Q8_1", 32, 36, false}},
    {10, {"Q2_K", 256, 84, true}},  {11, {"Q3_K", 256, 110, true}},
    {12, {"Q4_K", 256, 144, true}}, {13, {"Q5_K", 256, 176, true}},
    {14, {"Q6_K", 256, 210, true}}, {15, {"Q8_K", 256, 292, false}},
    {20, {"IQ4_NL", 32, 18, true}}, {23, {"IQ4_XS", 256, 136, true}},
    {30, {"BF16", 1, 2, true}},
};

}  // namespace

const GgmlTypeTraits* ggml_type_traits(uint32_t type) {
  for (const Entry& e : kTypes) {
    if (e.id == type) return &e.traits;
  }
  return nullptr;
}

size_t ggml_row_bytes(GgmlType type, uint64_t n) {
  const GgmlTypeTraits* t = ggml_type_traits(static_cast<uint32_t>(type));
  if (!t || n % t->block_size != 0) throw std::invalid_argument("bad row length for type");
  return static_cast<size_t>(n / t->block_size) * t->type_size;
}

}  // namespace leapfrog
