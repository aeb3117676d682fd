// One request's generation configuration, and what a generation reports. The TypeScript
// side's table of defaults (engine/protocol.ts) mirrors these structs field for field; the
// addon exports these defaults so a test holds the two tables together.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "sampling/sampler.h"

namespace leapfrog {

// The most tokens one forward pass runs: the target's own token plus a draft of at most
// kMaxDraftBudget tokens (verification), or one chunk of a long prompt.
constexpr int kMaxPassTokens = 64;
constexpr int kMaxDraftBudget = kMaxPassTokens - 1;

enum class SpecMode {
  Off,    // plain decoding: no drafter
  Auto,   // lookup first (free), then the draft model when one is loaded
  Ngram,  // lookup over the prompt, the output and the request's corpus
  Draft,  // the draft model alone (plain decoding when none is loaded)
};
const char* spec_mode_name(SpecMode mode);
std::optional<SpecMode> parse_spec_mode(std::string_view name);

struct SpeculationConfig {
  SpecMode mode = SpecMode::Auto;
  int budget = 16;       // largest draft per pass, 0..kMaxDraftBudget
  bool adaptive = true;  // the budget controller picks 0..budget; false: always `budget`
  bool tree = false;     // drafters may branch where unsure; verified with a tree mask
};

struct GenerationConfig {
  int max_tokens = 128;
  SamplingParams sampling;
  SpeculationConfig speculation;
  // Generation stops at one of these; it reaches on_token only with emit_stop_token.
  // Empty: the model's EOS token when it has one.
  std::vector<int32_t> stop_tokens;
  bool emit_stop_token = false;
  // Text beyond the prompt and the output that lookup drafting may copy from (the
  // completion's chunks of other open files); -1 separates chunks.
  std::vector<int32_t> corpus;

  // Throws std::invalid_argument naming the first field out of range.
  void validate() const;
};

struct GenerationStats {
  double prompt_ms = 0;
  double decode_ms = 0;
  double draft_ms = 0;      // of decode_ms: drafting
  double verify_ms = 0;     //   and target passes
  int prompt_tokens = 0;    // tokens in the prompt
  int reused_tokens = 0;    // of which came from the cache (not recomputed)
  int generated = 0;        // tokens passed to on_token
  int target_passes = 0;    // forward passes of the target during decoding
  int drafted = 0;          // tokens proposed by drafters
  int accepted = 0;         //   and accepted
  int max_pass_tokens = 0;  // most tokens one decoding pass verified (1 + the draft)
  bool aborted = false;
  bool stopped_by_token = false;
  double tokens_per_second() const { return decode_ms > 0 ? generated * 1000.0 / decode_ms : 0; }
};

}  // namespace leapfrog
