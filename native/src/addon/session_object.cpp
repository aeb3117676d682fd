#include "addon/session_object.h"

#include <thread>

#include "addon/generation_job.h"
#include "addon/js_convert.h"
#include "addon/model_object.h"

namespace leapfrog::addon {

namespace {

Napi::FunctionReference* g_constructor = nullptr;

// Releases the session's busy flag however the work ends.
struct BusyGuard {
  std::shared_ptr<SessionState> state;
  ~BusyGuard() {
    if (state) state->busy = false;
  }
};

class LastLogitsWorker : public Napi::AsyncWorker {
 public:
  LastLogitsWorker(Napi::Env env, std::shared_ptr<SessionState> state, std::vector<int32_t> ids)
      : Napi::AsyncWorker(env),
        deferred_(Napi::Promise::Deferred::New(env)),
        guard_{std::move(state)},
        ids_(std::move(ids)) {}
  Napi::Promise promise() { return deferred_.Promise(); }

  void Execute() override {
    try {
      Session& s = *guard_.state->session;
      const int keep = s.reuse_prefix(ids_);
      std::span<const int32_t> rest(ids_.data() + keep, ids_.size() - keep);
      auto logits = s.forward(rest, /*all_logits=*/false);
      logits_.assign(logits.begin(), logits.end());
    } catch (const std::exception& e) {
      SetError(e.what());
    }
  }
  void OnOK() override {
    guard_.state->busy = false;
    auto buf = Napi::Float32Array::New(Env(), logits_.size());
    std::copy(logits_.begin(), logits_.end(), buf.Data());
    deferred_.Resolve(buf);
  }
  void OnError(const Napi::Error& e) override {
    guard_.state->busy = false;
    deferred_.Reject(e.Value());
  }

 private:
  Napi::Promise::Deferred deferred_;
  BusyGuard guard_;
  std::vector<int32_t> ids_;
  std::vector<float> logits_;
};

}  // namespace

void SessionObject::Init(Napi::Env env) {
  Napi::Function ctor = DefineClass(env, "NativeSession",
                                    {
                                        InstanceMethod("generate", &SessionObject::Generate),
                                        InstanceMethod("lastLogits", &SessionObject::LastLogits),
                                        InstanceMethod("free", &SessionObject::Free),
                                    });
  g_constructor = new Napi::FunctionReference(Napi::Persistent(ctor));
}

SessionObject::SessionObject(const Napi::CallbackInfo& info)
    : Napi::ObjectWrap<SessionObject>(info) {}

Napi::Value SessionObject::Create(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto state = std::make_shared<SessionState>();
  state->target = ModelObject::ModelOf(info[0]);
  if (!state->target->model) throw Napi::Error::New(env, "a vocabulary-only model cannot generate");
  Napi::Object opts = info[1].IsObject() ? info[1].As<Napi::Object>() : Napi::Object::New(env);
  SessionParams params;
  params.n_ctx = static_cast<int>(number_field(opts, "nCtx", 4096));
  const int n_ctx_train = state->target->model->hparams().n_ctx_train;
  if (params.n_ctx <= 0 || (n_ctx_train > 0 && params.n_ctx > n_ctx_train)) {
    params.n_ctx = n_ctx_train > 0 ? n_ctx_train : 4096;
  }
  Napi::Value draft = opts.Get("draft");
  if (!draft.IsUndefined() && !draft.IsNull()) {
    state->draft = ModelObject::ModelOf(draft);
    if (!state->draft->model) throw Napi::Error::New(env, "a vocabulary-only model cannot draft");
    if (state->draft->tokenizer->n_vocab() != state->target->tokenizer->n_vocab()) {
      throw Napi::Error::New(env, state->draft->model->path() +
                                      ": the draft model's vocabulary differs from the target's");
    }
  }
  try {
    state->session = std::make_unique<Session>(*state->target->model, params);
    if (state->draft) {
      SessionParams drafting = params;
      drafting.logit_rows = 1;  // the drafter reads one row per pass (model_drafter.cpp)
      state->draft_session = std::make_unique<Session>(*state->draft->model, drafting);
    }
  } catch (const std::exception& e) {
    throw Napi::Error::New(env, e.what());
  }
  Napi::Object obj = g_constructor->New({});
  SessionObject::Unwrap(obj)->state_ = std::move(state);
  return obj;
}

std::shared_ptr<SessionState> SessionObject::claim(const Napi::Env& env) {
  if (!state_) throw Napi::Error::New(env, "this session has been freed");
  bool expected = false;
  if (!state_->busy.compare_exchange_strong(expected, true)) {
    throw Napi::Error::New(env, "session is busy: a generation is already running");
  }
  return state_;
}

Napi::Value SessionObject::Generate(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!state_) throw Napi::Error::New(env, "this session has been freed");
  std::vector<int32_t> prompt = token_ids_from_js(info[0], state_->target->tokenizer->n_vocab());
  if (prompt.empty()) throw Napi::Error::New(env, "the prompt is empty");
  if (!info[1].IsObject() || !info[2].IsFunction()) {
    throw Napi::TypeError::New(env, "generate(promptIds, params, onToken)");
  }
  JobParams params = job_params_from_js(info[1].As<Napi::Object>());
  if (static_cast<int>(prompt.size()) >= state_->session->n_ctx()) {
    throw Napi::Error::New(env, "the prompt (" + std::to_string(prompt.size()) +
                                    " tokens) does not fit the context of " +
                                    std::to_string(state_->session->n_ctx()) + " tokens");
  }
  return start_generation(env, claim(env), std::move(prompt), params, info[2].As<Napi::Function>());
}

Napi::Value SessionObject::LastLogits(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!state_) throw Napi::Error::New(env, "this session has been freed");
  std::vector<int32_t> ids = token_ids_from_js(info[0], state_->target->tokenizer->n_vocab());
  if (ids.empty()) throw Napi::Error::New(env, "the prompt is empty");
  auto* worker = new LastLogitsWorker(env, claim(env), std::move(ids));
  Napi::Promise promise = worker->promise();
  worker->Queue();
  return promise;
}

// A running generation keeps its own reference to the state, so freeing here is safe.
void SessionObject::Free(const Napi::CallbackInfo& info) { state_.reset(); }

}  // namespace leapfrog::addon
