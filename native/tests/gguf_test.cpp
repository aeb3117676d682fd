// The GGUF reader: real files parse, and every kind of damage is a clear GgufError.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "test_harness.h"

using leapfrog::GgufError;
using leapfrog::GgufFile;

namespace {

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string stories_path() {
  const std::string dir = lftest::shared_data_dir();
  if (dir.empty()) SKIP("../shared/data not found (set LEAPFROG_SHARED_DATA)");
  return dir + "/models/stories260K.gguf";
}

std::string error_of(const std::vector<uint8_t>& bytes) {
  try {
    GgufFile::parse(bytes.data(), bytes.size(), "mem.gguf");
  } catch (const GgufError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(reads_stories260k_metadata_and_tensors) {
  auto f = GgufFile::open(stories_path());
  CHECK_EQ(std::string(f->require_string("general.architecture")), std::string("llama"));
  CHECK(f->require_int("llama.block_count") > 0);
  const leapfrog::GgufValue* tokens = f->find("tokenizer.ggml.tokens");
  CHECK(tokens && tokens->strs.size() == 512);
  const auto& emb = f->require_tensor("token_embd.weight");
  CHECK_EQ(emb.ne[1], 512u);
  CHECK(emb.data != nullptr);
}

TEST(missing_file_names_the_path) {
  try {
    GgufFile::open("/nonexistent/model.gguf");
    CHECK(false);
  } catch (const GgufError& e) {
    CHECK(std::string(e.what()).find("/nonexistent/model.gguf") != std::string::npos);
  }
}

TEST(not_gguf_is_rejected) {
  std::vector<uint8_t> junk(64, 'x');
  CHECK(error_of(junk).find("not a GGUF file") != std::string::npos);
}

TEST(every_truncation_is_a_clear_error) {
  auto bytes = read_bytes(stories_path());
  // Cut the file at many lengths: each must raise GgufError, never crash.
  for (size_t len = 0; len < bytes.size(); len += 1 + len / 7) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<long>(len));
    CHECK(!error_of(cut).empty());
  }
}

TEST(missing_metadata_key_is_named) {
  auto f = GgufFile::open(stories_path());
  try {
    f->require_int("llama.no_such_key");
    CHECK(false);
  } catch (const GgufError& e) {
    CHECK(std::string(e.what()).find("missing metadata key 'llama.no_such_key'") !=
          std::string::npos);
  }
}

// After detach_from_file the metadata and the kept tensor read the bytes loaded, whatever
// happens to the file: truncated to nothing (a mapped page past the end would SIGBUS).
TEST(detached_file_survives_truncation) {
  const auto bytes = read_bytes(stories_path());
  const std::string path = "/tmp/leapfrog-gguf-detach-" + std::to_string(getpid()) + ".gguf";
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<long>(bytes.size()));
  }
  auto f = GgufFile::open(path);
  const auto& emb = f->require_tensor("token_embd.weight");
  const std::vector<uint8_t> emb_bytes(emb.data, emb.data + emb.n_bytes);
  f->detach_from_file({{emb.data, emb.n_bytes}});
  CHECK(f->detached());
  CHECK(f->private_bytes() >= emb.n_bytes);
  CHECK(f->private_bytes() < bytes.size());  // the other tensors are let go
  CHECK_EQ(truncate(path.c_str(), 0), 0);
  std::remove(path.c_str());
  CHECK_EQ(std::string(f->require_string("general.architecture")), std::string("llama"));
  CHECK_EQ(f->find("tokenizer.ggml.tokens")->strs.size(), size_t(512));
  CHECK(std::memcmp(emb.data, emb_bytes.data(), emb_bytes.size()) == 0);
}

TEST_MAIN()
