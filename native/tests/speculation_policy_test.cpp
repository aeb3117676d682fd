// The speculation policy's pieces without a model run: the budget controller weighs each
// drafter by its own acceptance, and `auto` keeps a lookup behind the draft model for the
// passes where the model does not pay.
#include <memory>
#include <string>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "engine/session.h"
#include "model/model.h"
#include "random_model.h"
#include "spec/budget.h"
#include "spec/policy.h"
#include "test_harness.h"

using namespace leapfrog;
using namespace lftest;

TEST(budget_weighs_each_drafter_by_its_own_acceptance) {
  BudgetController b(16);
  // A pass of n tokens costs 1 + 0.1 n ms: extra rows are cheap, so a good drafter pays.
  for (int n = 1; n <= 17; ++n) b.record_pass(n, 1.0 + 0.1 * n);
  // Drafter 0 is refuted every time; drafter 1 has not been heard from.
  for (int i = 0; i < 40; ++i) b.record_verdict(0, 8, 0);
  CHECK(b.acceptance(0) < 0.1);
  CHECK_EQ(b.choose(0, 0.0), 0);
  CHECK(b.choose(1, 0.0) > 0);
  // A drafter whose tokens cost as much as a pass gets nothing, however good.
  for (int i = 0; i < 40; ++i) b.record_verdict(1, 4, 2);
  CHECK(b.choose(1, 0.0) > 0);
  CHECK_EQ(b.choose(1, 5.0), 0);
}

namespace {

std::vector<std::string> names(const DraftPolicy& p) {
  std::vector<std::string> out;
  for (const Drafter* d : p.order) out.emplace_back(d->name());
  return out;
}

}  // namespace

TEST(auto_asks_long_repeats_then_the_draft_model_then_short_repeats) {
  Spec sp;
  TmpFile f{write_model(sp, "policy")};
  auto model = Model::load(f.path, std::make_shared<CpuBackend>());
  Session draft(*model, {});
  SpeculationConfig spec;
  spec.mode = SpecMode::Auto;
  CHECK((names(make_draft_policy(spec, &draft, {})) ==
         std::vector<std::string>{"ngram", "draft", "ngram"}));
  CHECK((names(make_draft_policy(spec, nullptr, {})) == std::vector<std::string>{"ngram"}));
  spec.mode = SpecMode::Draft;
  CHECK((names(make_draft_policy(spec, &draft, {})) == std::vector<std::string>{"draft"}));
  spec.mode = SpecMode::Ngram;
  CHECK((names(make_draft_policy(spec, &draft, {})) == std::vector<std::string>{"ngram"}));
}

TEST_MAIN()
