// The JavaScript `NativeSession` (engine/native/addon.ts): a KV cache over a target model
// (and a draft model's, for speculation), generate() streaming tokens from an engine
// thread, lastLogits(), free(). One generation at a time per session.
#pragma once
#include <napi.h>

#include <atomic>
#include <memory>

#include "addon/loaded_model.h"
#include "engine/session.h"
#include "spec/learned.h"

namespace leapfrog::addon {

struct SessionState {
  std::shared_ptr<LoadedModel> target;
  std::shared_ptr<LoadedModel> draft;  // may be null
  std::unique_ptr<Session> session;
  std::unique_ptr<Session> draft_session;
  // What speculation learned in this session's generations, for the next (one generation at
  // a time: `busy`).
  SpeculationLearned learned;
  std::atomic<bool> busy{false};
};

class SessionObject : public Napi::ObjectWrap<SessionObject> {
 public:
  static void Init(Napi::Env env);
  // createSession(model, { nCtx, threads, draft? })
  static Napi::Value Create(const Napi::CallbackInfo& info);
  explicit SessionObject(const Napi::CallbackInfo& info);

 private:
  Napi::Value Generate(const Napi::CallbackInfo& info);
  Napi::Value LastLogits(const Napi::CallbackInfo& info);
  void Free(const Napi::CallbackInfo& info);
  std::shared_ptr<SessionState> claim(const Napi::Env& env);

  std::shared_ptr<SessionState> state_;
};

}  // namespace leapfrog::addon
