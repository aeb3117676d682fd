// What speculation learns while it decodes, carried from one generation to the next by a
// front end that keeps a session (the addon's sessions: the editor's completions, chat, the
// server): what target passes of each size cost on this machine, how often each drafter's
// tokens are accepted, what the draft model's steps cost and where its chains should stop.
// Without it every generation relearned all of it from optimistic guesses, and an editor's
// completion (tens of tokens) is often over before the estimates settle.
#pragma once
#include <array>
#include <map>
#include <string>

#include "engine/generation_config.h"

namespace leapfrog {

// How many confidence bands a drafter may sort its drafts into (Drafter::band): the budget
// keeps one acceptance per drafter and band.
inline constexpr int kAcceptanceBands = 3;

struct SpeculationLearned {
  // BudgetController's: running cost (ms) of a target pass over n tokens (0: not measured),
  // and the most tokens any pass has had (a larger one is the first to grow its buffers).
  std::array<double, kMaxPassTokens + 1> pass_ms{};
  int largest_pass = 0;
  // Passes recorded, and the count at each size's last measurement (stale sizes drift).
  long passes = 0;
  std::array<long, kMaxPassTokens + 1> pass_measured_at{};
  // Per drafter (Drafter::name()) and band: the per-token acceptance the budget weighs its
  // drafts by.
  std::map<std::string, std::array<double, kAcceptanceBands>> acceptance;

  // ModelDrafter's, once it has run: its chains' first-forward and per-token costs, catch-up
  // cost per token, and acceptance per draft-probability band.
  struct DraftModel {
    bool known = false;
    double first_ms = 0, ms_per_token = 0, catch_up_ms_per_token = 0;
    std::array<double, 4> accepted{};
  } draft_model;
};

}  // namespace leapfrog
