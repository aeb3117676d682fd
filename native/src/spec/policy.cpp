#include "spec/policy.h"

#include "spec/model_drafter.h"
#include "spec/ngram_drafter.h"

namespace leapfrog {

DraftPolicy make_draft_policy(const SpeculationConfig& spec, Session* draft,
                              std::span<const int32_t> corpus) {
  DraftPolicy p;
  const bool lookup = spec.mode == SpecMode::Auto || spec.mode == SpecMode::Ngram;
  const bool model = (spec.mode == SpecMode::Auto || spec.mode == SpecMode::Draft) && draft;
  if (lookup) {
    // With a draft model behind it, lookup speaks up only on matches of 3+ tokens: a
    // 2-token repeat predicts worse than the draft model does.
    auto ngram = std::make_unique<NgramDrafter>(model ? 3 : 2);
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
