// The architectures the engine runs, by GGUF `general.architecture`: one table (arch.cpp),
// each family's metadata reader in its own file (arch_<family>.cpp).
#pragma once
#include <string>
#include <string_view>

#include "backend/backend.h"
#include "gguf/gguf_file.h"

namespace leapfrog {

struct ModelHParams;

struct ArchInfo {
  std::string_view name;
  RopeStyle rope_style;
  // Reads `<arch>.attention.layer_norm_epsilon` (LayerNorm) rather than the RMS one.
  bool layer_norm_eps = false;
  // Fills hp.features from the family's metadata (null: llama's defaults).
  void (*read_features)(const GgufFile& f, ModelHParams& hp) = nullptr;
  // Uses the Backend ops beyond llama's (layer_norm, gelu, scale, soft-capping, windows).
  bool needs_arch_ops = false;
};

// The entry for `name`, or null when the engine does not run it.
const ArchInfo* find_arch(std::string_view name);
// "llama, qwen2, ...": for error messages.
std::string supported_arch_names();

// The family readers (arch_<family>.cpp).
void read_starcoder2_features(const GgufFile& f, ModelHParams& hp);
void read_granite_features(const GgufFile& f, ModelHParams& hp);
void read_phi3_features(const GgufFile& f, ModelHParams& hp);
void read_gemma_features(const GgufFile& f, ModelHParams& hp);

}  // namespace leapfrog
