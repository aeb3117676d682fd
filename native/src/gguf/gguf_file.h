// A GGUF v2/v3 file, memory-mapped and validated. Weights stay in the mapping (no copies);
// metadata strings and arrays are views into it. Every problem throws GgufError whose
// message names the file and what is wrong.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/ggml_types.h"

namespace leapfrog {

class GgufError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class GgufValueType : uint32_t {
  UINT8 = 0,
  INT8 = 1,
  UINT16 = 2,
  INT16 = 3,
  UINT32 = 4,
  INT32 = 5,
  FLOAT32 = 6,
  BOOL = 7,
  STRING = 8,
  ARRAY = 9,
  UINT64 = 10,
  INT64 = 11,
  FLOAT64 = 12,
};

struct GgufValue {
  GgufValueType type = GgufValueType::UINT8;
  GgufValueType elem_type = GgufValueType::UINT8;  // for arrays
  // Scalars: integers in `i` (and `u` when unsigned), floats in `f`, bools in `b`.
  int64_t i = 0;
  uint64_t u = 0;
  double f = 0;
  bool b = false;
  std::string_view s;                  // STRING
  std::vector<std::string_view> strs;  // ARRAY of STRING
  std::vector<double> nums;            // ARRAY of numbers or bools (converted)

  bool is_array() const { return type == GgufValueType::ARRAY; }
  bool is_integer() const;
  bool is_number() const;  // integer or float
};

struct GgufTensorInfo {
  std::string name;
  GgmlType type = GgmlType::F32;
  uint32_t n_dims = 0;
  uint64_t ne[4] = {1, 1, 1, 1};  // ne[0] is the row length (innermost), as in GGUF
  uint64_t offset = 0;            // relative to the data section
  uint64_t n_bytes = 0;
  const uint8_t* data = nullptr;  // inside the mapping

  uint64_t n_elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
  uint64_t n_rows() const { return ne[1] * ne[2] * ne[3]; }
};

class GgufFile {
 public:
  // Maps and parses `path`; throws GgufError("<path>: <problem>").
  static std::unique_ptr<GgufFile> open(const std::string& path);
  // Parses an in-memory buffer (used by the fuzzer); the buffer must outlive the object.
  static std::unique_ptr<GgufFile> parse(const uint8_t* data, size_t size, std::string name);
  ~GgufFile();
  GgufFile(const GgufFile&) = delete;
  GgufFile& operator=(const GgufFile&) = delete;

  const std::string& path() const { return path_; }
  // Names the exact file that was mapped, for caches of what is derived from its bytes (the
  // CPU backend's packed weights): absolute path, device, inode, size and modification time
  // (ns), taken from the open descriptor. Empty for a buffer parsed in memory.
  const std::string& identity() const { return identity_; }
  const std::string& absolute_path() const { return absolute_path_; }  // empty when parsed
  const uint8_t* base() const { return base_; }
  uint32_t version() const { return version_; }

  const GgufValue* find(std::string_view key) const;
  std::optional<int64_t> get_int(std::string_view key) const;
  std::optional<double> get_float(std::string_view key) const;  // any number
  std::optional<bool> get_bool(std::string_view key) const;
  std::optional<std::string_view> get_string(std::string_view key) const;
  // Throw GgufError("<path>: missing metadata key '<key>'") (or wrong type) when absent.
  int64_t require_int(std::string_view key) const;
  double require_float(std::string_view key) const;
  std::string_view require_string(std::string_view key) const;
  const std::vector<std::pair<std::string, GgufValue>>& metadata() const { return kv_; }
  // The metadata section exactly as stored (its key/value pairs, without the count), so a
  // derived file can carry it over byte for byte.
  std::span<const uint8_t> metadata_bytes() const {
    return {base_ + kv_begin_, kv_end_ - kv_begin_};
  }
  uint64_t alignment() const { return alignment_; }

  const GgufTensorInfo* tensor(std::string_view name) const;  // nullptr when absent
  const GgufTensorInfo& require_tensor(std::string_view name) const;
  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }

  [[noreturn]] void fail(const std::string& what) const;  // throws GgufError naming the file

  // Cuts the object loose from the file on disk (gguf/detach.cpp says why): the header and
  // the `keep` ranges (weights still read in place) become private anonymous copies at the
  // same addresses, every other page of the mapping becomes inaccessible. Ranges outside the
  // mapping are ignored. After it, truncating or overwriting the file cannot fault here.
  void detach_from_file(const std::vector<std::span<const uint8_t>>& keep);
  bool detached() const { return detached_; }
  // Bytes of the file copied into private memory by detach_from_file (page-rounded).
  size_t private_bytes() const { return private_bytes_; }

 private:
  GgufFile() = default;
  void parse_all();

  std::string path_;
  std::string identity_, absolute_path_;
  const uint8_t* base_ = nullptr;
  size_t size_ = 0;
  void* mapping_ = nullptr;  // non-null when we own an mmap
  size_t data_start_ = 0;    // where the tensor data section begins (the header's end)
  bool detached_ = false;
  size_t private_bytes_ = 0;
  uint32_t version_ = 0;
  size_t kv_begin_ = 0, kv_end_ = 0;
  uint64_t alignment_ = 32;
  std::vector<std::pair<std::string, GgufValue>> kv_;
  std::vector<GgufTensorInfo> tensors_;
};

}  // namespace leapfrog
