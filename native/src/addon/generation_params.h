// The JavaScript shape of a generation request (engine/native/addon.ts GenerateParams) and
// the engine's GenerationConfig: one conversion each way, defaults from the C++ struct.
#pragma once
#include <napi.h>

#include "engine/generation_config.h"

namespace leapfrog::addon {

struct JobParams {
  GenerationConfig config;
  bool stop_at_eog = true;  // stop at every end-of-generation token of the vocabulary
};

// Fields absent from `params` keep GenerationConfig's defaults; a field of the wrong type or
// out of range throws a TypeError/RangeError naming it.
JobParams job_params_from_js(const Napi::Object& params);
// The defaults, in the same shape (addon.defaultGenerateParams()).
Napi::Object job_params_to_js(Napi::Env env, const JobParams& params);

}  // namespace leapfrog::addon
