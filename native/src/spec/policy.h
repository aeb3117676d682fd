// The one place speculation is decided: which drafters a request gets, and in which order
// the loop asks them (spec/speculative.h). Front ends pass a SpeculationConfig; nothing
// outside spec/ builds a drafter.
#pragma once
#include <memory>
#include <span>
#include <vector>

#include "engine/generation_config.h"
#include "engine/session.h"
#include "spec/drafter.h"

namespace leapfrog {

struct DraftPolicy {
  std::vector<std::unique_ptr<Drafter>> owned;
  // Asked in turn each pass (free lookups first): the draft verified is the one expected to
  // yield the most tokens per ms, or with a fixed budget the first proposal
  // (spec/speculative.h).
  std::vector<Drafter*> order;
};

// `draft` is the draft model's session, or null when none is loaded; `corpus` is the
// lookup text beyond the prompt and output (GenerationConfig::corpus).
DraftPolicy make_draft_policy(const SpeculationConfig& spec, Session* draft,
                              std::span<const int32_t> corpus);

}  // namespace leapfrog
