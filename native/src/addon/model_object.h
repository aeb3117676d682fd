// The JavaScript `NativeModel` (engine/native/addon.ts): info, tokenize, detokenize, free.
#pragma once
#include <napi.h>

#include <memory>

#include "addon/loaded_model.h"

namespace leapfrog::addon {

class ModelObject : public Napi::ObjectWrap<ModelObject> {
 public:
  static void Init(Napi::Env env);
  static Napi::Object Wrap(Napi::Env env, std::shared_ptr<LoadedModel> model);
  // The model behind a JS object, or a thrown JS error when it is not a live model.
  static std::shared_ptr<LoadedModel> ModelOf(const Napi::Value& value);

  explicit ModelObject(const Napi::CallbackInfo& info);

 private:
  Napi::Value Info(const Napi::CallbackInfo& info);
  Napi::Value Tokenize(const Napi::CallbackInfo& info);
  Napi::Value Detokenize(const Napi::CallbackInfo& info);
  void Free(const Napi::CallbackInfo& info);
  const LoadedModel& live(const Napi::Env& env) const;

  std::shared_ptr<LoadedModel> model_;
};

}  // namespace leapfrog::addon
