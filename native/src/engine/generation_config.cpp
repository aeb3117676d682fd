#include "engine/generation_config.h"

#include <stdexcept>
#include <string>

namespace leapfrog {

namespace {
constexpr std::pair<SpecMode, const char*> kModeNames[] = {{SpecMode::Off, "off"},
                                                           {SpecMode::Auto, "auto"},
                                                           {SpecMode::Ngram, "ngram"},
                                                           {SpecMode::Draft, "draft"}};
}  // namespace

const char* spec_mode_name(SpecMode mode) {
  for (const auto& [m, name] : kModeNames) {
    if (m == mode) return name;
  }
  return "?";
}

std::optional<SpecMode> parse_spec_mode(std::string_view name) {
  for (const auto& [m, n] : kModeNames) {
    if (name == n) return m;
  }
  return std::nullopt;
}

void GenerationConfig::validate() const {
  if (max_tokens < 0) throw std::invalid_argument("maxTokens must be >= 0");
  if (speculation.budget < 0 || speculation.budget > kMaxDraftBudget) {
    throw std::invalid_argument("budget must be between 0 and " + std::to_string(kMaxDraftBudget));
  }
  if (sampling.temperature < 0) throw std::invalid_argument("temperature must be >= 0");
  if (sampling.top_p < 0 || sampling.top_p > 1) {
    throw std::invalid_argument("topP must be between 0 and 1");
  }
  if (sampling.repeat_last_n < 0) throw std::invalid_argument("repeatLastN must be >= 0");
}

}  // namespace leapfrog
