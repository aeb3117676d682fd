#include "addon/generation_job.h"

#include <atomic>
#include <chrono>
#include <thread>

#include "addon/js_convert.h"
#include "spec/model_drafter.h"
#include "spec/ngram_drafter.h"
#include "spec/speculative.h"
#include "tokenizer/tokenizer.h"

namespace leapfrog::addon {

namespace {

// What the engine thread sends to the JavaScript thread.
struct Event {
  enum Kind { Token, Done, Failed } kind = Token;
  int32_t id = -1;  // -1 with text: trailing bytes flushed at the end
  std::string text;
  SpecStats stats;
  std::string error;

  static Event* token(int32_t id, std::string text) {
    auto* e = new Event();
    e->id = id;
    e->text = std::move(text);
    return e;
  }
};

struct Job {
  std::shared_ptr<SessionState> state;
  std::vector<int32_t> prompt;
  JobParams params;
  std::atomic<bool> abort{false};
  Napi::ThreadSafeFunction tsfn;
  Napi::Promise::Deferred deferred;
  std::string callback_error;  // a throw from the JS callback, reported as the rejection

  explicit Job(Napi::Env env) : deferred(Napi::Promise::Deferred::New(env)) {}
};

Napi::Object stats_to_js(Napi::Env env, const SpecStats& spec) {
  const GenerateStats& s = spec.base;
  Napi::Object o = Napi::Object::New(env);
  o.Set("promptTokens", s.prompt_tokens);
  o.Set("reusedTokens", s.reused_tokens);
  o.Set("promptMs", s.prompt_ms);
  o.Set("decodeMs", s.decode_ms);
  o.Set("generated", s.generated);
  o.Set("targetPasses", s.target_passes);
  o.Set("drafted", s.drafted);
  o.Set("accepted", s.accepted);
  o.Set("draftMs", spec.draft_ms);
  o.Set("verifyMs", spec.verify_ms);
  o.Set("aborted", s.aborted);
  return o;
}

// Runs on the JavaScript thread for every event.
void deliver(Napi::Env env, Napi::Function on_token, Job* job, Event* ev) {
  std::unique_ptr<Event> owned(ev);
  if (env == nullptr) return;  // the environment is going away
  switch (ev->kind) {
    case Event::Token:
      if (!job->callback_error.empty()) return;
      try {
        on_token.Call({Napi::Number::New(env, ev->id), Napi::String::New(env, ev->text)});
      } catch (const Napi::Error& e) {
        job->callback_error = e.Message();
        job->abort = true;
      }
      return;
    case Event::Done:
      if (!job->callback_error.empty()) {
        job->deferred.Reject(Napi::Error::New(env, job->callback_error).Value());
      } else {
        job->deferred.Resolve(stats_to_js(env, ev->stats));
      }
      return;
    case Event::Failed:
      job->deferred.Reject(Napi::Error::New(env, ev->error).Value());
      return;
  }
}

void run(std::shared_ptr<Job> job) {
  SessionState& st = *job->state;
  const Tokenizer& tok = *st.target->tokenizer;
  StreamingDetokenizer detok(tok, /*render_special=*/false);
  GenerateParams gp = job->params.generate;
  if (job->params.stop_at_eog) gp.stop_tokens = tok.eog_ids();
  // Each delivery holds the job, so queued events outlive this thread safely.
  auto send = [&](Event* ev) {
    job->tsfn.BlockingCall(
        ev, [job](Napi::Env env, Napi::Function fn, Event* e) { deliver(env, fn, job.get(), e); });
  };
  const auto on_token = [&](int32_t id) {
    send(Event::token(id, detok.push(id)));
    return !job->abort.load();
  };
  try {
    SpecStats stats;
    const std::string& mode = job->params.spec;
    if (mode == "off") {
      stats.base = st.session->generate(job->prompt, gp, on_token, job->abort);
      stats.verify_ms = stats.base.decode_ms;
    } else {
      // auto: lookup first (free), then the draft model when there is one. With a draft
      // model behind it, lookup only speaks up on matches of 3+ tokens: a 2-token repeat
      // predicts worse than the draft model does.
      std::unique_ptr<ModelDrafter> model_drafter;
      if (st.draft_session) model_drafter = std::make_unique<ModelDrafter>(*st.draft_session);
      NgramDrafter ngram(mode == "auto" && model_drafter ? 3 : 2);
      std::vector<Drafter*> drafters;
      if (mode == "ngram" || mode == "auto") drafters.push_back(&ngram);
      if ((mode == "draft" || mode == "auto") && model_drafter) {
        drafters.push_back(model_drafter.get());
      }
      SpecParams sp;
      sp.budget = job->params.budget;
      sp.adaptive = job->params.adaptive;
      sp.tree = job->params.tree;
      stats =
          generate_speculative(*st.session, drafters, sp, job->prompt, gp, on_token, job->abort);
    }
    std::string tail = detok.flush();
    if (!tail.empty()) send(Event::token(-1, std::move(tail)));
    stats.base.aborted = stats.base.aborted || job->abort.load();
    auto* done = new Event();
    done->kind = Event::Done;
    done->stats = stats;
    st.busy = false;  // before `done` settles, so its handler may start the next generation
    send(done);
  } catch (const std::exception& e) {
    auto* failed = new Event();
    failed->kind = Event::Failed;
    failed->error = e.what();
    st.busy = false;
    send(failed);
  }
  job->tsfn.Release();
}

}  // namespace

JobParams job_params_from_js(const Napi::Object& p) {
  JobParams jp;
  GenerateParams& g = jp.generate;
  g.max_tokens = static_cast<int>(number_field(p, "maxTokens", 128));
  SamplingParams& s = g.sampling;
  s.temperature = static_cast<float>(number_field(p, "temperature", 0));
  s.top_k = static_cast<int>(number_field(p, "topK", 40));
  s.top_p = static_cast<float>(number_field(p, "topP", 0.95));
  s.min_p = static_cast<float>(number_field(p, "minP", 0.05));
  s.repeat_penalty = static_cast<float>(number_field(p, "repeatPenalty", 1));
  s.repeat_last_n = static_cast<int>(number_field(p, "repeatLastN", 64));
  s.seed = static_cast<uint64_t>(number_field(p, "seed", 0));
  Napi::Value eog = p.Get("stopAtEog");
  jp.stop_at_eog = eog.IsUndefined() ? true : eog.ToBoolean().Value();
  Napi::Value spec = p.Get("spec");
  if (spec.IsString()) jp.spec = spec.As<Napi::String>().Utf8Value();
  jp.budget = static_cast<int>(number_field(p, "budget", 16));
  Napi::Value adaptive = p.Get("adaptiveBudget");
  jp.adaptive = adaptive.IsUndefined() ? true : adaptive.ToBoolean().Value();
  jp.tree = p.Get("tree").ToBoolean().Value();
  if (jp.spec != "off" && jp.spec != "auto" && jp.spec != "ngram" && jp.spec != "draft") {
    throw Napi::RangeError::New(p.Env(), "spec must be off, auto, ngram or draft");
  }
  if (jp.budget < 0 || jp.budget > 63) {
    throw Napi::RangeError::New(p.Env(), "budget must be between 0 and 63");
  }
  if (g.max_tokens < 0) throw Napi::RangeError::New(p.Env(), "maxTokens must be >= 0");
  return jp;
}

Napi::Value start_generation(Napi::Env env, std::shared_ptr<SessionState> state,
                             std::vector<int32_t> prompt, const JobParams& params,
                             Napi::Function on_token) {
  auto job = std::make_shared<Job>(env);
  job->state = std::move(state);
  job->prompt = std::move(prompt);
  job->params = params;
  job->tsfn = Napi::ThreadSafeFunction::New(env, on_token, "leapfrog.generate", 0, 1);

  Napi::Object handle = Napi::Object::New(env);
  handle.Set("done", job->deferred.Promise());
  std::weak_ptr<Job> weak = job;
  handle.Set("abort", Napi::Function::New(env, [weak](const Napi::CallbackInfo&) {
               if (auto j = weak.lock()) j->abort = true;
             }));
  // The job (and through it the session and models) lives until the thread ends.
  std::thread([job] { run(job); }).detach();
  return handle;
}

}  // namespace leapfrog::addon
