#include "spec/self_draft.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include "backend/cpu/quant_blocks.h"
#include "format/dequant.h"
#include "format/fp16.h"
#include "gguf/gguf_file.h"

namespace leapfrog {

namespace {

constexpr uint32_t kGgufMagic = 0x46554747;

class FileWriter {
 public:
  explicit FileWriter(const std::string& path) : path_(path), f_(std::fopen(path.c_str(), "wb")) {
    if (!f_) throw std::runtime_error(path + ": cannot write: " + std::strerror(errno));
  }
  ~FileWriter() {
    if (f_) std::fclose(f_);
  }
  void bytes(const void* p, size_t n) {
    if (n && std::fwrite(p, 1, n, f_) != n) {
      throw std::runtime_error(path_ + ": write failed: " + std::strerror(errno));
    }
    pos_ += n;
  }
  template <typename T>
  void value(T v) {
    bytes(&v, sizeof(v));
  }
  void string(const std::string& s) {
    value<uint64_t>(s.size());
    bytes(s.data(), s.size());
  }
  void pad_to(uint64_t alignment) {
    static const uint8_t zeros[64] = {};
    while (pos_ % alignment) bytes(zeros, std::min<uint64_t>(64, alignment - pos_ % alignment));
  }
  void close() {
    if (std::fclose(f_) != 0) throw std::runtime_error(path_ + ": close failed");
    f_ = nullptr;
  }
  uint64_t pos() const { return pos_; }

 private:
  std::string path_;
  FILE* f_;
  uint64_t pos_ = 0;
};

bool becomes_q4_0(const GgufTensorInfo& t) {
  if (t.n_dims < 2 || t.ne[0] % 32 != 0) return false;
  switch (t.type) {
    case GgmlType::F32:
    case GgmlType::F16:
    case GgmlType::BF16:
    case GgmlType::Q8_0:
    case GgmlType::Q6_K:
    case GgmlType::Q5_K:
      return true;
    default:
      return false;  // already 4-bit (Q4_0, Q4_K) or not ours to convert
  }
}

// Q4_0 with the scale taken from the value of largest magnitude (mapped to -8), so the
// extreme is represented exactly: the format's usual reference rounding.
void quantize_row_q4_0(const float* x, int64_t n, format::BlockQ4_0* out) {
  for (int64_t b = 0; b < n / 32; ++b, x += 32) {
    float amax = 0, max = 0;
    for (int j = 0; j < 32; ++j) {
      if (std::fabs(x[j]) > amax) {
        amax = std::fabs(x[j]);
        max = x[j];
      }
    }
    const float d = max / -8.0f;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    out[b].d = format::f32_to_f16(d);
    for (int j = 0; j < 16; ++j) {
      const int lo = std::min(15, static_cast<int>(x[j] * id + 8.5f));
      const int hi = std::min(15, static_cast<int>(x[j + 16] * id + 8.5f));
      out[b].qs[j] = static_cast<uint8_t>(lo | (hi << 4));
    }
  }
}

}  // namespace

void write_lower_bit_copy(const std::string& src_path, const std::string& dst) {
  auto src = GgufFile::open(src_path);
  const std::string tmp = dst + ".partial";
  {
    FileWriter w(tmp);
    w.value<uint32_t>(kGgufMagic);
    w.value<uint32_t>(3);
    w.value<uint64_t>(src->tensors().size());
    w.value<uint64_t>(src->metadata().size());
    auto kv = src->metadata_bytes();
    w.bytes(kv.data(), kv.size());

    // Tensor infos with the new types and offsets.
    const uint64_t align = src->alignment();
    std::vector<GgmlType> types;
    uint64_t offset = 0;
    for (const GgufTensorInfo& t : src->tensors()) {
      const GgmlType type = becomes_q4_0(t) ? GgmlType::Q4_0 : t.type;
      types.push_back(type);
      w.string(t.name);
      w.value<uint32_t>(t.n_dims);
      for (uint32_t d = 0; d < t.n_dims; ++d) w.value<uint64_t>(t.ne[d]);
      w.value<uint32_t>(static_cast<uint32_t>(type));
      w.value<uint64_t>(offset);
      const uint64_t bytes =
          type == t.type ? t.n_bytes : ggml_row_bytes(type, t.ne[0]) * t.n_rows();
      offset = (offset + bytes + align - 1) / align * align;
    }
    w.pad_to(align);

    // Data, converted row by row.
    std::vector<float> row;
    std::vector<format::BlockQ4_0> blocks;
    for (size_t i = 0; i < src->tensors().size(); ++i) {
      const GgufTensorInfo& t = src->tensors()[i];
      w.pad_to(align);
      if (types[i] == t.type) {
        w.bytes(t.data, t.n_bytes);
        continue;
      }
      const size_t in_row = ggml_row_bytes(t.type, t.ne[0]);
      row.resize(t.ne[0]);
      blocks.resize(t.ne[0] / 32);
      for (uint64_t r = 0; r < t.n_rows(); ++r) {
        format::dequantize_row(t.type, t.data + r * in_row, row.data(), t.ne[0]);
        quantize_row_q4_0(row.data(), t.ne[0], blocks.data());
        w.bytes(blocks.data(), blocks.size() * sizeof(format::BlockQ4_0));
      }
    }
    w.pad_to(align);
    w.close();
  }
  if (std::rename(tmp.c_str(), dst.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw std::runtime_error(dst + ": cannot rename the finished copy into place");
  }
}

}  // namespace leapfrog
