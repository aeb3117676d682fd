// What the addon keeps per loaded GGUF: the model graph and its tokenizer. Shared by the
// JavaScript Model object and every session that uses it, so freeing the Model handle
// while a generation runs is safe (the memory goes when the last user lets go).
#pragma once
#include <memory>
#include <string>

#include "backend/backend.h"
#include "backend/factory.h"
#include "gguf/gguf_file.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"

namespace leapfrog::addon {

struct LoadedModel {
  std::unique_ptr<Model> model;          // null when loaded for its vocabulary only
  std::unique_ptr<GgufFile> vocab_file;  // the file, when there is no model
  std::unique_ptr<Tokenizer> tokenizer;
  uint64_t file_bytes = 0;
  uint64_t n_params = 0;
};

// Loads `path` on the backend `opts` names (one shared backend per kind and thread count, so
// a target and its draft share one thread pool). Throws with a message naming the file.
std::shared_ptr<LoadedModel> load_model(const std::string& path, const BackendOptions& opts);
// Loads only the tokenizer (tokenize/detokenize work; sessions refuse it): for vocabulary-only
// GGUFs and for `leapfrog tokenize`, which need no weights.
std::shared_ptr<LoadedModel> load_vocab_only(const std::string& path);

}  // namespace leapfrog::addon
