#include "addon/generation_job.h"

#include <atomic>
#include <chrono>
#include <thread>

#include "addon/js_convert.h"
#include "spec/generate.h"
#include "tokenizer/tokenizer.h"

namespace leapfrog::addon {

namespace {

// What the engine thread sends to the JavaScript thread.
struct Event {
  enum Kind { Token, Done, Failed } kind = Token;
  int32_t id = -1;  // -1 with text: trailing bytes flushed at the end
  std::string text;
  GenerationStats stats;
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

Napi::Object stats_to_js(Napi::Env env, const GenerationStats& s) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("promptTokens", s.prompt_tokens);
  o.Set("reusedTokens", s.reused_tokens);
  o.Set("promptMs", s.prompt_ms);
  o.Set("decodeMs", s.decode_ms);
  o.Set("generated", s.generated);
  o.Set("targetPasses", s.target_passes);
  o.Set("drafted", s.drafted);
  o.Set("accepted", s.accepted);
  o.Set("maxPassTokens", s.max_pass_tokens);
  o.Set("draftMs", s.draft_ms);
  o.Set("verifyMs", s.verify_ms);
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
  GenerationConfig config = job->params.config;
  if (job->params.stop_at_eog) config.stop_tokens = tok.eog_ids();
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
    GenerationStats stats = stream_generate(*st.session, st.draft_session.get(), config,
                                            job->prompt, on_token, job->abort, &st.learned);
    std::string tail = detok.flush();
    if (!tail.empty()) send(Event::token(-1, std::move(tail)));
    stats.aborted = stats.aborted || job->abort.load();
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
