// The GGUF reader: real files parse, and every kind of damage is a clear GgufError.
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

TEST_MAIN()
