// The node-addon-api module: loadModel (async), createSession, systemInfo. Everything
// long runs on engine threads; JavaScript only ever waits on promises.
#include <napi.h>

#include "addon/generation_job.h"
#include "addon/loaded_model.h"
#include "addon/model_object.h"
#include "addon/session_object.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/thread_pool.h"
#include "spec/self_draft.h"

namespace leapfrog::addon {

namespace {

class LoadModelWorker : public Napi::AsyncWorker {
 public:
  LoadModelWorker(Napi::Env env, std::string path, BackendOptions backend, bool vocab_only)
      : Napi::AsyncWorker(env),
        deferred_(Napi::Promise::Deferred::New(env)),
        path_(std::move(path)),
        backend_(std::move(backend)),
        vocab_only_(vocab_only) {}
  Napi::Promise promise() { return deferred_.Promise(); }

  void Execute() override {
    try {
      model_ = vocab_only_ ? load_vocab_only(path_) : load_model(path_, backend_);
    } catch (const std::exception& e) {
      SetError(e.what());
    }
  }
  void OnOK() override { deferred_.Resolve(ModelObject::Wrap(Env(), std::move(model_))); }
  void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }

 private:
  Napi::Promise::Deferred deferred_;
  std::string path_;
  BackendOptions backend_;
  bool vocab_only_;
  std::shared_ptr<LoadedModel> model_;
};

Napi::Value LoadModel(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsString()) {
    throw Napi::TypeError::New(env, "loadModel(path, { threads, backend, vocabOnly })");
  }
  BackendOptions backend;
  bool vocab_only = false;
  if (info[1].IsObject()) {
    Napi::Object opts = info[1].As<Napi::Object>();
    if (opts.Get("threads").IsNumber())
      backend.threads = opts.Get("threads").As<Napi::Number>().Int32Value();
    if (opts.Get("backend").IsString()) backend.kind = opts.Get("backend").As<Napi::String>();
    vocab_only = opts.Get("vocabOnly").ToBoolean();
  }
  auto* worker = new LoadModelWorker(env, info[0].As<Napi::String>().Utf8Value(),
                                     std::move(backend), vocab_only);
  Napi::Promise promise = worker->promise();
  worker->Queue();
  return promise;
}

// writeLowerBitCopy(src, dst): the self-draft file (spec/self_draft.h), off the event loop.
class LowerBitCopyWorker : public Napi::AsyncWorker {
 public:
  LowerBitCopyWorker(Napi::Env env, std::string src, std::string dst)
      : Napi::AsyncWorker(env),
        deferred_(Napi::Promise::Deferred::New(env)),
        src_(std::move(src)),
        dst_(std::move(dst)) {}
  Napi::Promise promise() { return deferred_.Promise(); }
  void Execute() override {
    try {
      write_lower_bit_copy(src_, dst_);
    } catch (const std::exception& e) {
      SetError(e.what());
    }
  }
  void OnOK() override { deferred_.Resolve(Env().Undefined()); }
  void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }

 private:
  Napi::Promise::Deferred deferred_;
  std::string src_, dst_;
};

Napi::Value WriteLowerBitCopy(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsString() || !info[1].IsString()) {
    throw Napi::TypeError::New(env, "writeLowerBitCopy(srcPath, dstPath)");
  }
  auto* worker = new LowerBitCopyWorker(env, info[0].As<Napi::String>().Utf8Value(),
                                        info[1].As<Napi::String>().Utf8Value());
  Napi::Promise promise = worker->promise();
  worker->Queue();
  return promise;
}

Napi::Value SystemInfo(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object out = Napi::Object::New(env);
  out.Set("isa", cpu::isa_name(cpu::detect_isa()));
  out.Set("physicalCores", cpu::ThreadPool::physical_cores());
  // Loads copy what passes read and let the file go (gguf/detach.cpp), so tests can tell
  // this build from an older one.
  out.Set("detachesModelFiles", true);
  return out;
}

Napi::Value DefaultGenerateParams(const Napi::CallbackInfo& info) {
  return job_params_to_js(info.Env(), JobParams{});
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  ModelObject::Init(env);
  SessionObject::Init(env);
  exports.Set("loadModel", Napi::Function::New(env, LoadModel));
  exports.Set("createSession", Napi::Function::New(env, SessionObject::Create));
  exports.Set("systemInfo", Napi::Function::New(env, SystemInfo));
  exports.Set("defaultGenerateParams", Napi::Function::New(env, DefaultGenerateParams));
  exports.Set("writeLowerBitCopy", Napi::Function::New(env, WriteLowerBitCopy));
  return exports;
}

}  // namespace

}  // namespace leapfrog::addon

static Napi::Object InitModule(Napi::Env env, Napi::Object exports) {
  return leapfrog::addon::Init(env, exports);
}

NODE_API_MODULE(leapfrog_native, InitModule)
