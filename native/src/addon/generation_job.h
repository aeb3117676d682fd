// One generate() call: runs on its own engine thread, streams tokens back to JavaScript
// through a thread-safe function, and settles the `done` promise with the statistics.
#pragma once
#include <napi.h>

#include <memory>
#include <string>
#include <vector>

#include "addon/generation_params.h"
#include "addon/session_object.h"
#include "engine/session.h"

namespace leapfrog::addon {

// Starts the engine thread; returns { done: Promise<stats>, abort(): void }.
Napi::Value start_generation(Napi::Env env, std::shared_ptr<SessionState> state,
                             std::vector<int32_t> prompt, const JobParams& params,
                             Napi::Function on_token);

}  // namespace leapfrog::addon
