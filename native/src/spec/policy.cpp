#include "spec/policy.h"

#include "spec/model_drafter.h"
#include "spec/ngram_drafter.h"

namespace leapfrog {

DraftPolicy make_draft_policy(const SpeculationConfig& spec, Session* draft,
                              std::span<const int32_t> corpus) {
  DraftPolicy p;
  const bool lookup = spec.mode == SpecMode::Auto || spec.mode == SpecMode::Ngram;
  const bool model = (spec.mode == SpecMode::Auto || spec.mode == SpecMode::Draft) && draft;
  // The lookup comes first: its proposal is free, and the loop runs the draft model only
  // when its expected rate beats the lookup's draft in hand (spec/speculative.cpp, draft()).
  // It matches from one token on: each match length's band has its own acceptance
  // (NgramDrafter::band), and a one-token match's first token, accepted about a third of the
  // time, pays for its row where a pass of two tokens costs little more than one.
  if (lookup) {
    auto ngram = std::make_unique<NgramDrafter>(1);
    ngram->set_corpus({corpus.begin(), corpus.end()});
    p.order.push_back(ngram.get());
    p.owned.push_back(std::move(ngram));
  }
  if (model) {
    auto m = std::make_unique<ModelDrafter>(*draft);
    p.order.push_back(m.get());
    p.owned.push_back(std::move(m));
  }
  return p;
}

}  // namespace leapfrog
