#include "addon/generation_params.h"

#include <string>

#include "addon/js_convert.h"

namespace leapfrog::addon {

namespace {

Napi::Object object_field(const Napi::Object& obj, const char* key) {
  Napi::Value v = obj.Get(key);
  if (v.IsUndefined()) return Napi::Object::New(obj.Env());
  if (!v.IsObject()) throw Napi::TypeError::New(obj.Env(), std::string(key) + " must be an object");
  return v.As<Napi::Object>();
}

bool bool_field(const Napi::Object& obj, const char* key, bool fallback) {
  Napi::Value v = obj.Get(key);
  return v.IsUndefined() ? fallback : v.ToBoolean().Value();
}

}  // namespace

JobParams job_params_from_js(const Napi::Object& p) {
  Napi::Env env = p.Env();
  JobParams jp;
  GenerationConfig& c = jp.config;
  c.max_tokens = static_cast<int>(number_field(p, "maxTokens", c.max_tokens));
  jp.stop_at_eog = bool_field(p, "stopAtEog", jp.stop_at_eog);

  const Napi::Object s = object_field(p, "sampling");
  SamplingParams& sp = c.sampling;
  sp.temperature = static_cast<float>(number_field(s, "temperature", sp.temperature));
  sp.top_k = static_cast<int>(number_field(s, "topK", sp.top_k));
  sp.top_p = static_cast<float>(number_field(s, "topP", sp.top_p));
  sp.min_p = static_cast<float>(number_field(s, "minP", sp.min_p));
  sp.repeat_penalty = static_cast<float>(number_field(s, "repeatPenalty", sp.repeat_penalty));
  sp.repeat_last_n = static_cast<int>(number_field(s, "repeatLastN", sp.repeat_last_n));
  sp.seed = static_cast<uint64_t>(number_field(s, "seed", static_cast<double>(sp.seed)));

  const Napi::Object sc = object_field(p, "speculation");
  SpeculationConfig& spec = c.speculation;
  Napi::Value mode = sc.Get("mode");
  if (!mode.IsUndefined()) {
    auto m = mode.IsString() ? parse_spec_mode(mode.As<Napi::String>().Utf8Value()) : std::nullopt;
    if (!m) throw Napi::RangeError::New(env, "speculation.mode must be off, auto, ngram or draft");
    spec.mode = *m;
  }
  spec.budget = static_cast<int>(number_field(sc, "budget", spec.budget));
  spec.adaptive = bool_field(sc, "adaptive", spec.adaptive);
  spec.tree = bool_field(sc, "tree", spec.tree);

  Napi::Value corpus = p.Get("corpus");
  if (!corpus.IsUndefined()) {
    if (!corpus.IsArray()) throw Napi::TypeError::New(env, "corpus must be an array of token ids");
    Napi::Array a = corpus.As<Napi::Array>();
    c.corpus.reserve(a.Length());
    for (uint32_t i = 0; i < a.Length(); ++i) {
      Napi::Value v = a.Get(i);
      if (!v.IsNumber())
        throw Napi::TypeError::New(env, "corpus[" + std::to_string(i) + "] is not a number");
      c.corpus.push_back(v.As<Napi::Number>().Int32Value());
    }
  }
  try {
    c.validate();
  } catch (const std::invalid_argument& e) {
    throw Napi::RangeError::New(env, e.what());
  }
  return jp;
}

Napi::Object job_params_to_js(Napi::Env env, const JobParams& jp) {
  const GenerationConfig& c = jp.config;
  Napi::Object s = Napi::Object::New(env);
  s.Set("temperature", c.sampling.temperature);
  s.Set("topK", c.sampling.top_k);
  s.Set("topP", c.sampling.top_p);
  s.Set("minP", c.sampling.min_p);
  s.Set("repeatPenalty", c.sampling.repeat_penalty);
  s.Set("repeatLastN", c.sampling.repeat_last_n);
  s.Set("seed", static_cast<double>(c.sampling.seed));
  Napi::Object sc = Napi::Object::New(env);
  sc.Set("mode", spec_mode_name(c.speculation.mode));
  sc.Set("budget", c.speculation.budget);
  sc.Set("adaptive", c.speculation.adaptive);
  sc.Set("tree", c.speculation.tree);
  Napi::Object out = Napi::Object::New(env);
  out.Set("maxTokens", c.max_tokens);
  out.Set("stopAtEog", jp.stop_at_eog);
  out.Set("sampling", s);
  out.Set("speculation", sc);
  return out;
}

}  // namespace leapfrog::addon
