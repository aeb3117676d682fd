// Conversions between JavaScript values and the engine's C++ types, with clear TypeErrors.
#pragma once
#include <napi.h>

#include <cstdint>
#include <vector>

namespace leapfrog::addon {

Napi::Array to_js_array(Napi::Env env, const std::vector<int32_t>& ids);
// An array of integer token ids in [0, n_vocab); throws a TypeError naming the bad entry.
std::vector<int32_t> token_ids_from_js(const Napi::Value& value, int n_vocab);
// obj[key] as a number, or `fallback` when absent/undefined.
double number_field(const Napi::Object& obj, const char* key, double fallback);

}  // namespace leapfrog::addon
