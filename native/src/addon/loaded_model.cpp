#include "addon/loaded_model.h"

#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <utility>

#include "addon/host_memory.h"
#include "backend/factory.h"
#include "model/hparams.h"
#include "model/model.h"

namespace leapfrog::addon {

namespace {

std::shared_ptr<Backend> shared_backend(const BackendOptions& opts) {
  static std::mutex mu;
  static std::map<std::pair<std::string, int>, std::weak_ptr<Backend>> by_kind;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = by_kind[{opts.kind, opts.threads}];
  if (auto existing = slot.lock()) return existing;
  auto backend = create_backend(opts);
  slot = backend;
  return backend;
}

// Whether `be` runs the file's architecture (a file that does not parse says yes: the load
// itself then reports what is wrong).
bool runs_architecture(const Backend& be, const std::string& path) {
  try {
    return backend_refusal(read_hparams(*GgufFile::open(path)), be).empty();
  } catch (const std::exception&) {
    return true;
  }
}

}  // namespace

// The backend a model goes on: `auto` takes the GPU only when the weights fit in its free
// memory (with a tenth to spare for caches and scratch) and it runs the model's
// architecture, else the CPU; an explicit GPU
// backend that cannot hold them is a clear error rather than an allocation failure midway.
std::shared_ptr<Backend> backend_for(const std::string& path, const BackendOptions& opts) {
  auto backend = shared_backend(opts);
  // `auto` also keeps a model off a backend without its ops (mixture of experts, the
  // architectures beyond llama).
  if (opts.kind == "auto" && (!backend->supports_moe() || !backend->supports_arch_ops()) &&
      !runs_architecture(*backend, path)) {
    return shared_backend(BackendOptions{"cpu", opts.threads});
  }
  const size_t free = backend->free_memory();
  if (free == SIZE_MAX) return backend;
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(path, ec);
  if (ec || bytes + bytes / 10 <= free) return backend;
  if (opts.kind == "auto") return shared_backend(BackendOptions{"cpu", opts.threads});
  char msg[160];
  std::snprintf(msg, sizeof msg, "needs %.1f GiB of %s memory, %.1f GiB free",
                (bytes + bytes / 10) / 1073741824.0, backend->name().c_str(), free / 1073741824.0);
  throw std::runtime_error(path + ": the model " + msg);
}

std::shared_ptr<LoadedModel> load_model(const std::string& path, const BackendOptions& opts) {
  auto loaded = std::make_shared<LoadedModel>();
  auto backend = backend_for(path, opts);
  if (backend->free_memory() == SIZE_MAX) {
    // Host memory holds the weights: packed copies plus the in-place ones made private
    // (gguf/detach.cpp), together about the file's size. Checked before anything is mapped.
    std::error_code ec;
    const auto bytes = std::filesystem::file_size(path, ec);
    if (!ec) check_host_memory(path, bytes);
  }
  loaded->model = Model::load(path, std::move(backend));
  loaded->tokenizer = Tokenizer::from_gguf(loaded->model->gguf());
  if (loaded->tokenizer->n_vocab() != loaded->model->hparams().n_vocab) {
    throw std::runtime_error(
        path + ": the vocabulary has " + std::to_string(loaded->tokenizer->n_vocab()) +
        " tokens but the output layer has " + std::to_string(loaded->model->hparams().n_vocab));
  }
  for (const auto& t : loaded->model->gguf().tensors()) {
    loaded->file_bytes += t.n_bytes;
    loaded->n_params += t.n_elements();
  }
  return loaded;
}

std::shared_ptr<LoadedModel> load_vocab_only(const std::string& path) {
  auto loaded = std::make_shared<LoadedModel>();
  loaded->vocab_file = GgufFile::open(path);
  loaded->vocab_file->detach_from_file({});  // the metadata alone, off the file (detach.cpp)
  loaded->tokenizer = Tokenizer::from_gguf(*loaded->vocab_file);
  return loaded;
}

}  // namespace leapfrog::addon
