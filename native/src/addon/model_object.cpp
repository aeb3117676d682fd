#include "addon/model_object.h"

#include <filesystem>

#include "addon/js_convert.h"

namespace leapfrog::addon {

namespace {
Napi::FunctionReference* g_constructor = nullptr;
}

void ModelObject::Init(Napi::Env env) {
  Napi::Function ctor = DefineClass(env, "NativeModel",
                                    {
                                        InstanceMethod("info", &ModelObject::Info),
                                        InstanceMethod("tokenize", &ModelObject::Tokenize),
                                        InstanceMethod("detokenize", &ModelObject::Detokenize),
                                        InstanceMethod("free", &ModelObject::Free),
                                    });
  g_constructor = new Napi::FunctionReference(Napi::Persistent(ctor));
}

ModelObject::ModelObject(const Napi::CallbackInfo& info) : Napi::ObjectWrap<ModelObject>(info) {}

Napi::Object ModelObject::Wrap(Napi::Env env, std::shared_ptr<LoadedModel> model) {
  Napi::Object obj = g_constructor->New({});
  Napi::ObjectWrap<ModelObject>::Unwrap(obj)->model_ = std::move(model);
  return obj;
}

std::shared_ptr<LoadedModel> ModelObject::ModelOf(const Napi::Value& value) {
  Napi::Env env = value.Env();
  if (!value.IsObject() || !value.As<Napi::Object>().InstanceOf(g_constructor->Value())) {
    throw Napi::TypeError::New(env, "expected a model returned by loadModel()");
  }
  ModelObject* self = Napi::ObjectWrap<ModelObject>::Unwrap(value.As<Napi::Object>());
  if (!self->model_) throw Napi::Error::New(env, "this model has been freed");
  return self->model_;
}

const LoadedModel& ModelObject::live(const Napi::Env& env) const {
  if (!model_) throw Napi::Error::New(env, "this model has been freed");
  return *model_;
}

Napi::Value ModelObject::Info(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const LoadedModel& m = live(env);
  const Tokenizer& tok = *m.tokenizer;
  const GgufFile& file = m.model ? m.model->gguf() : *m.vocab_file;
  Napi::Object out = Napi::Object::New(env);
  const std::string path = file.path();
  std::string name(file.get_string("general.name").value_or(""));
  if (name.empty()) name = std::filesystem::path(path).stem().string();
  out.Set("path", path);
  out.Set("name", name);
  out.Set("architecture", m.model
                              ? m.model->hparams().arch
                              : std::string(file.get_string("general.architecture").value_or("")));
  out.Set("nVocab", tok.n_vocab());
  out.Set("nCtxTrain", m.model ? m.model->hparams().n_ctx_train : 0);
  out.Set("vocabOnly", !m.model);
  out.Set("nParams", static_cast<double>(m.n_params));
  out.Set("fileBytes", static_cast<double>(m.file_bytes));
  out.Set("bos", tok.bos());
  out.Set("eos", tok.eos());
  out.Set("addBos", tok.add_bos());
  out.Set("eogIds", to_js_array(env, tok.eog_ids()));
  Napi::Object fim = Napi::Object::New(env);
  fim.Set("prefix", tok.fim().pre);
  fim.Set("suffix", tok.fim().suf);
  fim.Set("middle", tok.fim().mid);
  fim.Set("pad", tok.fim().pad);
  fim.Set("repo", tok.fim().rep);
  fim.Set("fileSep", tok.fim().sep);
  out.Set("fim", fim);
  out.Set("chatTemplate", std::string(tok.chat_template()));
  out.Set("tokenizerModel", std::string(tok.model()));
  out.Set("backend", m.model ? m.model->backend().name() : std::string());
  // Whether the model learned its FIM tokens (absent: it did); models/MODEL_CARD.md.
  out.Set("fimTrained", file.get_bool("leapfrog.prompt.fim").value_or(true));
  return out;
}

Napi::Value ModelObject::Tokenize(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const LoadedModel& m = live(env);
  if (!info[0].IsString())
    throw Napi::TypeError::New(env, "tokenize(text, addSpecial, parseSpecial)");
  const std::string text = info[0].As<Napi::String>().Utf8Value();
  const bool add_special = info[1].ToBoolean();
  const bool parse_special = info[2].ToBoolean();
  return to_js_array(env, m.tokenizer->tokenize(text, add_special, parse_special));
}

Napi::Value ModelObject::Detokenize(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const LoadedModel& m = live(env);
  const std::vector<int32_t> ids = token_ids_from_js(info[0], m.tokenizer->n_vocab());
  return Napi::String::New(env, m.tokenizer->detokenize(ids, info[1].ToBoolean()));
}

void ModelObject::Free(const Napi::CallbackInfo& info) { model_.reset(); }

}  // namespace leapfrog::addon
