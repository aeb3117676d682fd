#include "addon/js_convert.h"

#include <cmath>
#include <string>

namespace leapfrog::addon {

Napi::Array to_js_array(Napi::Env env, const std::vector<int32_t>& ids) {
  Napi::Array out = Napi::Array::New(env, ids.size());
  for (size_t i = 0; i < ids.size(); ++i) out.Set(static_cast<uint32_t>(i), ids[i]);
  return out;
}

std::vector<int32_t> token_ids_from_js(const Napi::Value& value, int n_vocab) {
  Napi::Env env = value.Env();
  if (!value.IsArray()) throw Napi::TypeError::New(env, "expected an array of token ids");
  Napi::Array arr = value.As<Napi::Array>();
  std::vector<int32_t> ids(arr.Length());
  for (uint32_t i = 0; i < arr.Length(); ++i) {
    Napi::Value v = arr.Get(i);
    const double d = v.IsNumber() ? v.As<Napi::Number>().DoubleValue() : -1;
    if (d < 0 || d >= n_vocab || std::floor(d) != d) {
      throw Napi::TypeError::New(env, "token id at index " + std::to_string(i) +
                                          " is not an integer in [0, " + std::to_string(n_vocab) +
                                          ")");
    }
    ids[i] = static_cast<int32_t>(d);
  }
  return ids;
}

double number_field(const Napi::Object& obj, const char* key, double fallback) {
  Napi::Value v = obj.Get(key);
  if (v.IsUndefined() || v.IsNull()) return fallback;
  if (!v.IsNumber()) {
    throw Napi::TypeError::New(obj.Env(), std::string("option '") + key + "' must be a number");
  }
  return v.As<Napi::Number>().DoubleValue();
}

}  // namespace leapfrog::addon
