// Random-weight llama / qwen2 / qwen3 models written as GGUF at test time (one per weight
// type): they load, the fast kernels agree with the f32 reference path and with each other
// across instruction sets, and malformed models fail with a message naming file and problem.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "engine/session.h"
#include "format/fp16.h"
#include "host_ptr.h"
#include "model/model.h"
#include "random_model.h"
#include "reference_decode.h"
#include "spec/generate.h"
#include "test_harness.h"

using namespace leapfrog;
using namespace leapfrog::format;
using namespace lftest;

namespace {

// The GGUF writer, the random models and TmpFile: random_model.h.

std::vector<float> logits_after(const std::string& path, CpuBackendOptions o,
                                const std::vector<int32_t>& prompt) {
  auto model = Model::load(path, std::make_shared<CpuBackend>(o));
  Session s(*model, {});
  auto l = s.forward(prompt, true);
  return std::vector<float>(l.begin(), l.end());
}

double rel_err(const std::vector<float>& a, const std::vector<float>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i)
    num += (a[i] - b[i]) * double(a[i] - b[i]), den += double(b[i]) * b[i];
  return std::sqrt(num / den);
}

const GgmlType kTypes[] = {GgmlType::F32,  GgmlType::F16,  GgmlType::BF16, GgmlType::Q8_0,
                           GgmlType::Q4_0, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K};

void check_arch(Spec sp) {
  const std::vector<int32_t> prompt = {1, 17, 42, 99, 5, 250, 7, 8, 9, 10, 11, 12};
  for (GgmlType t : kTypes) {
    sp.type = t;
    const std::string tn(ggml_type_traits(uint32_t(t))->name);
    TmpFile f{write_model(sp, sp.arch + "_" + tn)};
    CpuBackendOptions ref_o;
    ref_o.reference_matmul = true;
    auto ref = logits_after(f.path, ref_o, prompt);
    for (cpu::Isa isa : cpu::runnable_isas()) {
      CpuBackendOptions o;
      o.isa = isa;
      auto got = logits_after(f.path, o, prompt);
      // 8-bit activations cost ~1% per matmul; f16/bf16 activations far less.
      const double tol = t == GgmlType::F32    ? 1e-4
                         : t == GgmlType::F16  ? 5e-3
                         : t == GgmlType::BF16 ? 2e-2
                                               : 6e-2;
      const double e = rel_err(got, ref);
      if (std::getenv("LF_VERBOSE"))
        std::fprintf(stderr, "%s %s %s rel err %.2e (ref[0]=%g)\n", sp.arch.c_str(), tn.c_str(),
                     cpu::isa_name(isa), e, ref[0]);
      if (!(e < tol)) {
        throw lftest::FailTest{sp.arch + " " + tn + " " + cpu::isa_name(isa) +
                               ": logits differ from the f32 reference by " + std::to_string(e)};
      }
    }
  }
}

std::string load_error(const Spec& sp, const std::string& name,
                       std::shared_ptr<Backend> be = std::make_shared<CpuBackend>()) {
  TmpFile f{write_model(sp, name)};
  try {
    Model::load(f.path, be);
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    if (msg.find(f.path) == std::string::npos) throw lftest::FailTest{"no path in: " + msg};
    return msg;
  }
  throw lftest::FailTest{"model loaded without error"};
}

void expect_contains(const std::string& msg, const std::string& part) {
  if (msg.find(part) == std::string::npos)
    throw lftest::FailTest{"'" + msg + "' lacks '" + part + "'"};
}

}  // namespace

TEST(llama_all_types_fast_paths_match_reference) { check_arch(Spec{}); }

TEST(qwen2_biases_tied_output_all_types) {
  Spec sp;
  sp.arch = "qwen2";
  sp.tied = true;
  check_arch(sp);
}

TEST(qwen3_qk_norm_and_wide_heads_all_types) {
  Spec sp;
  sp.arch = "qwen3";
  sp.key_length = 128;  // head size differs from embd / heads (64)
  check_arch(sp);
}

TEST(qwen3_hparams_and_greedy_generation_runs) {
  Spec sp;
  sp.arch = "qwen3";
  sp.key_length = 128;
  TmpFile f{write_model(sp, "qwen3_gen")};
  auto model = Model::load(f.path, std::make_shared<CpuBackend>());
  CHECK_EQ(model->hparams().head_dim, 128);
  CHECK(model->hparams().rope.style == RopeStyle::NeoX);
  Session s(*model, {});
  std::atomic<bool> abort{false};
  GenerationConfig gp;
  gp.speculation.mode = SpecMode::Off;
  gp.max_tokens = 20;
  gp.stop_tokens = {-1};
  std::vector<int32_t> a, b;
  stream_generate(
      s, nullptr, gp, std::vector<int32_t>{1, 2, 3},
      [&](int32_t t) {
        a.push_back(t);
        return true;
      },
      abort);
  // The product's loop against the independent reference loop of the tests.
  Session s2(*model, {});
  b = lftest::reference_decode(s2, {1, 2, 3}, gp.sampling, gp.max_tokens, {-1});
  CHECK_EQ(a.size(), size_t(20));
  CHECK(a == b);
}

// The draft model reads the prompt in the prompt phase, as the target does, so drafting's
// measured cost per token (which the budget weighs) is not the prompt's; the output stays
// that of plain decoding.
TEST(draft_model_reads_the_prompt_before_decoding) {
  Spec sp;
  sp.arch = "qwen2";
  sp.tied = true;
  sp.type = GgmlType::Q8_0;
  TmpFile f{write_model(sp, "draft_prefill")};
  auto model = Model::load(f.path, std::make_shared<CpuBackend>());
  std::vector<int32_t> prompt;
  for (int i = 0; i < 40; ++i) prompt.push_back((i * 53 + 3) % int(sp.vocab));
  std::atomic<bool> abort{false};
  GenerationConfig gp;
  gp.max_tokens = 12;
  gp.stop_tokens = {-1};
  gp.speculation.mode = SpecMode::Off;
  Session plain(*model, {});
  std::vector<int32_t> want;
  stream_generate(
      plain, nullptr, gp, prompt,
      [&](int32_t t) {
        want.push_back(t);
        return true;
      },
      abort);

  gp.speculation.mode = SpecMode::Draft;
  gp.speculation.budget = 4;
  gp.speculation.adaptive = false;
  Session target(*model, {}), draft(*model, {});
  std::vector<int32_t> got;
  int draft_cache_at_first_token = -1;
  const GenerationStats st = stream_generate(
      target, &draft, gp, prompt,
      [&](int32_t t) {
        if (got.empty()) draft_cache_at_first_token = draft.n_past();
        got.push_back(t);
        return true;
      },
      abort);
  CHECK_EQ(draft_cache_at_first_token, int(prompt.size()));
  CHECK(got == want);
  CHECK(st.drafted > 0);
}

TEST(qwen3moe_fast_paths_match_reference) {
  Spec sp;
  sp.arch = "qwen3moe";
  check_arch(sp);
}

// A batched pass groups its rows by expert (model/moe_ffn.cpp): each row's logits must be
// exactly those of running the tokens one at a time (the CPU's batched products and
// attention are bit-identical per row, and each row sums its experts in the same order).
TEST(qwen3moe_batched_pass_equals_row_by_row) {
  Spec sp;
  sp.arch = "qwen3moe";
  sp.experts = 16;
  sp.experts_used = 4;
  for (GgmlType t : {GgmlType::Q8_0, GgmlType::Q4_K}) {
    sp.type = t;
    TmpFile f{write_model(sp, "moe_batch")};
    auto model = Model::load(f.path, std::make_shared<CpuBackend>());
    CHECK_EQ(model->hparams().n_expert, 16);
    CHECK_EQ(model->hparams().n_expert_used, 4);
    CHECK(model->hparams().expert_weights_norm);
    std::vector<int32_t> ids;
    for (int i = 0; i < 24; ++i) ids.push_back((i * 37 + 5) % int(sp.vocab));
    Session batched(*model, {}), single(*model, {});
    auto all = batched.forward(ids, true);
    const std::vector<float> rows(all.begin(), all.end());
    const size_t V = model->hparams().n_vocab;
    for (size_t i = 0; i < ids.size(); ++i) {
      auto one = single.forward(std::span<const int32_t>(&ids[i], 1), false);
      if (!std::equal(one.begin(), one.end(), rows.begin() + i * V)) {
        throw lftest::FailTest{std::string(ggml_type_traits(uint32_t(t))->name) + ": row " +
                               std::to_string(i) + " of the batched pass differs"};
      }
    }
  }
}

// A backend with only the base ops: neither the mixture-of-experts ops nor those of the
// architectures beyond llama (as CUDA for now). Nothing of it runs for such a model, since
// the loader refuses it before touching a weight.
class BaseOpsBackend final : public Backend {
 public:
  std::string name() const override { return "stub"; }
  int threads() const override { return 1; }
  std::unique_ptr<DeviceBuffer> alloc(size_t) override { fail(); }
  void upload(DevicePtr<void>, const void*, size_t) override { fail(); }
  void download(void*, DevicePtr<const void>, size_t) override { fail(); }
  ResidentWeight load_weight(const WeightView&, WeightUse) override { fail(); }
  void matmul(const WeightView&, DevicePtr<const float>, int, DevicePtr<float>) override { fail(); }
  void get_rows(const WeightView&, DevicePtr<const int32_t>, int, DevicePtr<float>) override {
    fail();
  }
  void rms_norm(DevicePtr<const float>, DevicePtr<const float>, int, int, float,
                DevicePtr<float>) override {
    fail();
  }
  void rope(DevicePtr<float>, int, int, int, DevicePtr<const int32_t>, const RopeParams&) override {
    fail();
  }
  void swiglu(DevicePtr<float>, DevicePtr<const float>, int, int) override { fail(); }
  void add_bias(DevicePtr<float>, DevicePtr<const float>, int, int) override { fail(); }
  void add(DevicePtr<float>, DevicePtr<const float>, size_t) override { fail(); }
  std::unique_ptr<KvStorage> create_kv(const KvLayout&) override { fail(); }
  void attention(KvStorage&, const AttentionArgs&) override { fail(); }

 private:
  [[noreturn]] static void fail() { throw lftest::FailTest{"the stub backend was used"}; }
};

TEST(qwen3moe_refused_by_a_backend_without_moe_ops) {
  Spec sp;
  sp.arch = "qwen3moe";
  TmpFile f{write_model(sp, "moe_refused")};
  try {
    Model::load(f.path, std::make_shared<BaseOpsBackend>());
  } catch (const std::runtime_error& e) {
    expect_contains(e.what(), f.path);
    expect_contains(e.what(),
                    "stub: architecture qwen3moe (mixture of experts) is not supported yet; use "
                    "--backend cpu");
    return;
  }
  throw lftest::FailTest{"a backend without MoE ops loaded a qwen3moe model"};
}

TEST(rope_scaling_hparams) {
  // The keys as llama.cpp reads them. YaRN's attention factor cancels the kernel's own
  // 1 + 0.1 ln(factor) (so the net cos/sin factor is 1 + 0.1 ln(factor)).
  const auto rope_of = [](const std::string& type, float factor, uint32_t orig) {
    Spec sp;
    sp.arch = "qwen3";
    sp.rope_scaling = type;
    sp.rope_factor = factor;
    sp.rope_orig = orig;
    TmpFile f{write_model(sp, "rope_" + type)};
    return Model::load(f.path, std::make_shared<CpuBackend>())->hparams().rope;
  };
  RopeParams r = rope_of("", 1, 0);
  CHECK(r.ext_factor == 0.0f && r.freq_scale == 1.0f && r.attn_factor == 1.0f);
  CHECK_EQ(r.n_ctx_orig, 512);  // the training context
  r = rope_of("linear", 2, 0);
  CHECK(r.ext_factor == 0.0f && r.freq_scale == 0.5f && r.attn_factor == 1.0f);
  r = rope_of("none", 4, 0);
  CHECK(r.freq_scale == 1.0f);
  r = rope_of("yarn", 4, 128);
  CHECK(r.ext_factor == 1.0f && r.freq_scale == 0.25f && r.beta_fast == 32.0f &&
        r.beta_slow == 1.0f);
  CHECK(std::fabs(r.attn_factor - 1.0f) < 1e-6f);
  CHECK(std::fabs(rope_mscale(r) - (1 + 0.1f * std::log(4.0f))) < 1e-6f);
  CHECK_EQ(r.n_ctx_orig, 128);
  const YarnCorrDims d = yarn_corr_dims(r);  // head 64, base 1e6, context 128
  CHECK(d.low == 0.0f && d.high == 7.0f);
  Spec sp;
  sp.rope_scaling = "longrope";
  expect_contains(load_error(sp, "rope"), "unsupported RoPE scaling type 'longrope'");
}

TEST(bad_models_fail_with_clear_messages) {
  Spec sp;
  sp.wrong_shape_tensor = "blk.1.attn_q.weight";
  expect_contains(load_error(sp, "shape"),
                  "tensor 'blk.1.attn_q.weight' has shape [256, 128], expected [256, 256]");
  sp = Spec{};
  sp.wrong_type_tensor = "blk.0.ffn_up.weight";
  expect_contains(load_error(sp, "type"), "unsupported tensor type Q8_1 in 'blk.0.ffn_up.weight'");
  sp = Spec{};
  sp.arch = "gptj";
  expect_contains(load_error(sp, "arch"), "unsupported architecture 'gptj'");
  sp = Spec{};
  sp.missing_tensor = "blk.1.ffn_down.weight";
  expect_contains(load_error(sp, "missing"), "blk.1.ffn_down.weight");
  sp = Spec{};
  sp.missing_key = "llama.block_count";
  expect_contains(load_error(sp, "key"), "llama.block_count");
  sp = Spec{};
  sp.arch = "qwen3moe";
  sp.missing_key = "qwen3moe.expert_used_count";
  expect_contains(load_error(sp, "moe_key"), "qwen3moe.expert_used_count");
}

TEST(arch_refusals_are_one_clear_line) {
  Spec sp;
  sp.arch = "phi3";
  sp.extra_tensors = {"rope_factors_long.weight"};
  expect_contains(load_error(sp, "phi3-longrope"),
                  "phi3 long-context RoPE factors (rope_factors_long/short) are not supported");
  sp = Spec{};
  sp.arch = "granite";
  expect_contains(load_error(sp, "granite-no-scale"), "missing metadata key 'granite.logit_scale'");
  sp = Spec{};
  sp.arch = "gemma2";
  sp.extra_f32 = {{"gemma2.final_logit_softcapping", -1.0f}};
  expect_contains(load_error(sp, "gemma2-cap"), "soft-capping values must be positive");
  sp = Spec{};
  sp.arch = "granite";
  sp.extra_f32 = {{"granite.logit_scale", 4.0f}};
  expect_contains(load_error(sp, "granite-stub", std::make_shared<BaseOpsBackend>()),
                  "stub: architecture 'granite' is not supported yet; use --backend cpu");
  // llama needs none of those ops: the same backend gets as far as the weights.
  try {
    TmpFile f{write_model(Spec{}, "llama-stub")};
    Model::load(f.path, std::make_shared<BaseOpsBackend>());
  } catch (const lftest::FailTest& e) {
    expect_contains(e.why, "the stub backend was used");
  }
}

TEST_MAIN()
