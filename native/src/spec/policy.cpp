#include "spec/policy.h"

#include "spec/model_drafter.h"
#include "spec/ngram_drafter.h"

namespace leapfrog {

DraftPolicy make_draft_policy(const SpeculationConfig& spec, Session* draft,
                              std::span<const int32_t> corpus) {
  DraftPolicy p;
  const bool lookup = spec.mode == SpecMode::Auto || spec.mode == SpecMode::Ngram;
  const bool model = (spec.mode == SpecMode::Auto || spec.mode == SpecMode::Draft) && draft;
  // Lookups come first: their proposals are free, and the loop runs a draft model only when
  // its expected rate beats the best lookup draft in hand (spec/speculative.cpp, draft()).
  const auto add_lookup = [&](int min_n, int max_n) {
    auto ngram = std::make_unique<NgramDrafter>(min_n, max_n);
    ngram->set_corpus({corpus.begin(), corpus.end()});
    p.order.push_back(ngram.get());
    p.owned.push_back(std::move(ngram));
  };
  if (lookup) {
    // With a draft model beside it, repeats of 3-8 tokens are one drafter and of exactly 2
    // another, each with its own acceptance: a 2-token repeat often predicts worse than the
    // draft model does, a longer one better.
    add_lookup(model ? 3 : 2, 8);
    if (model) add_lookup(2, 2);
  }
  if (model) {
    auto m = std::make_unique<ModelDrafter>(*draft);
    p.order.push_back(m.get());
    p.owned.push_back(std::move(m));
  }
  return p;
}

}  // namespace leapfrog
