#include "model/arch.h"

#include <array>

namespace leapfrog {

namespace {

// Rope styles as llama.cpp assigns them (llama_model_rope_type): llama and granite rotate
// adjacent pairs (their converters permute Q/K rows to match), the rest rotate halves.
constexpr std::array kArchs = {
    ArchInfo{"llama", RopeStyle::Normal},
    ArchInfo{"qwen2", RopeStyle::NeoX},
    ArchInfo{"qwen3", RopeStyle::NeoX},
    ArchInfo{"qwen3moe", RopeStyle::NeoX},  // qwen3's attention, a mixture-of-experts FFN
    ArchInfo{"starcoder2", RopeStyle::NeoX, true, read_starcoder2_features, true},
    ArchInfo{"granite", RopeStyle::Normal, false, read_granite_features, true},
    ArchInfo{"phi3", RopeStyle::NeoX, false, read_phi3_features, true},
    ArchInfo{"gemma", RopeStyle::NeoX, false, read_gemma_features, true},
    ArchInfo{"gemma2", RopeStyle::NeoX, false, read_gemma_features, true},
    ArchInfo{"gemma3", RopeStyle::NeoX, false, read_gemma_features, true},
};

}  // namespace

const ArchInfo* find_arch(std::string_view name) {
  for (const ArchInfo& a : kArchs) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

std::string supported_arch_names() {
  std::string s;
  for (const ArchInfo& a : kArchs) s += (s.empty() ? "" : ", ") + std::string(a.name);
  return s;
}

}  // namespace leapfrog
