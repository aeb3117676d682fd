// A drafter proposes tokens that the target model will probably produce next; the target
// then checks them all in one batched pass (spec/speculative.h). Proposals are
// deterministic (a token, not a distribution), which keeps sampled verification exact with
// the simple rule of spec/verify.h.
#pragma once
#include <atomic>
#include <cstdint>
#include <span>
#include <vector>

#include "spec/learned.h"

namespace leapfrog {

// A draft shaped as a tree: node i holds tokens[i] and follows node parents[i] (-1: the
// root, the token the target has just chosen). Parents come before their children.
struct DraftTree {
  std::vector<int32_t> tokens;
  std::vector<int32_t> parents;
  void clear() {
    tokens.clear();
    parents.clear();
  }
  size_t size() const { return tokens.size(); }
};

class Drafter {
 public:
  virtual ~Drafter() = default;
  virtual const char* name() const = 0;
  // Appends up to `max_len` tokens likely to follow `context` (the prompt and every token
  // emitted so far) to `out`. May propose fewer, or none.
  virtual void propose(std::span<const int32_t> context, int max_len, std::vector<int32_t>& out,
                       const std::atomic<bool>& abort) = 0;
  // A tree of up to `max_nodes` nodes. By default the chain from propose(); drafters that
  // know where they are unsure branch there.
  virtual void propose_tree(std::span<const int32_t> context, int max_nodes, DraftTree& out,
                            const std::atomic<bool>& abort) {
    std::vector<int32_t> chain;
    propose(context, max_nodes, chain, abort);
    for (size_t i = 0; i < chain.size(); ++i) {
      out.tokens.push_back(chain[i]);
      out.parents.push_back(static_cast<int32_t>(i) - 1);
    }
  }
  // Reads the prompt ahead of decoding, so that drafting's measured cost is that of drafting
  // and not the prompt's (a drafter with state of its own, such as a draft model's KV cache).
  virtual void prefill(std::span<const int32_t> /*prompt*/, const std::atomic<bool>& /*abort*/) {}
  // What became of this drafter's last chain (propose): the first `accepted` of its
  // `drafted` tokens were accepted, and the next, if any, refuted. Drafters that learn from
  // it (a draft model calibrating where it stops) override it.
  virtual void verdict(int /*drafted*/, int /*accepted*/) {}
  // How sure the drafter is of its last proposal, as a band in [0, kAcceptanceBands): the
  // budget keeps one acceptance per band, so a drafter whose drafts differ in kind (a
  // lookup's long match and its one-token match) is not priced by their average. A drafter
  // that costs nothing is asked for its longest draft first and its band then decides how
  // much of the draft is verified (spec/speculative.cpp, draft()).
  virtual int band() const { return 0; }
  // The acceptance a band starts from, before any verdict (optimistic, so each gets tried).
  virtual double prior_acceptance(int /*band*/) const { return 0.7; }
  // Cost of drafting one token, in milliseconds (0 for lookups): the budget weighs it.
  virtual double ms_per_token() const { return 0; }
  // Cost of starting a draft after `context`, beyond ms_per_token per token (ms): a draft
  // model must first read the tokens emitted since it last ran.
  virtual double setup_ms(std::span<const int32_t> /*context*/) const { return 0; }
  // What it has learned, from and into a session's memory across generations (learned.h):
  // a drafter whose estimates start from guesses (a draft model's costs) overrides them.
  virtual void recall(const SpeculationLearned& /*learned*/) {}
  virtual void remember(SpeculationLearned& /*learned*/) const {}
};

}  // namespace leapfrog
