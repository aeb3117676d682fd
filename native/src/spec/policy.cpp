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
  if (lookup && model) {
    // Where the draft model does not pay (the budget gives it nothing: its acceptance is
    // low for its cost on this machine), shorter repeats are still worth a pass: without
    // this, `auto` could be slower than `ngram` alone.
    auto short_matches = std::make_unique<NgramDrafter>(2);
    short_matches->set_corpus({corpus.begin(), corpus.end()});
    p.order.push_back(short_matches.get());
    p.owned.push_back(std::move(short_matches));
  }
  return p;
}

}  // namespace leapfrog
