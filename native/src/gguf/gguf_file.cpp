#include "gguf/gguf_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>

namespace leapfrog {

namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" little-endian
constexpr uint64_t kMaxStringBytes = 1ull << 30;
constexpr uint64_t kMaxArrayElems = 1ull << 28;
constexpr uint64_t kMaxCount = 1ull << 24;

// Bounds-checked little-endian reader over the mapping.
class Cursor {
 public:
  Cursor(const GgufFile& file, const uint8_t* base, size_t size)
      : file_(file), base_(base), size_(size) {}

  size_t pos() const { return pos_; }

  const uint8_t* take(uint64_t n, const char* what) {
    if (n > size_ - pos_) {
      file_.fail(std::string("truncated file: ") + what + " runs past the end (offset " +
                 std::to_string(pos_) + ", file size " + std::to_string(size_) + ")");
    }
    const uint8_t* p = base_ + pos_;
    pos_ += n;
    return p;
  }

  template <typename T>
  T read(const char* what) {
    T v;
    std::memcpy(&v, take(sizeof(T), what), sizeof(T));
    return v;
  }

  std::string_view string(const char* what) {
    uint64_t len = read<uint64_t>(what);
    if (len > kMaxStringBytes) file_.fail(std::string("implausible string length in ") + what);
    return {reinterpret_cast<const char*>(take(len, what)), static_cast<size_t>(len)};
  }

 private:
  const GgufFile& file_;
  const uint8_t* base_;
  size_t size_;
  size_t pos_ = 0;
};

double read_number(Cursor& c, GgufValueType t, const char* what) {
  switch (t) {
    case GgufValueType::UINT8:
      return c.read<uint8_t>(what);
    case GgufValueType::INT8:
      return c.read<int8_t>(what);
    case GgufValueType::UINT16:
      return c.read<uint16_t>(what);
    case GgufValueType::INT16:
      return c.read<int16_t>(what);
    case GgufValueType::UINT32:
      return c.read<uint32_t>(what);
    case GgufValueType::INT32:
      return c.read<int32_t>(what);
    case GgufValueType::FLOAT32:
      return c.read<float>(what);
    case GgufValueType::BOOL:
      return c.read<uint8_t>(what) != 0;
    case GgufValueType::UINT64:
      return static_cast<double>(c.read<uint64_t>(what));
    case GgufValueType::INT64:
      return static_cast<double>(c.read<int64_t>(what));
    case GgufValueType::FLOAT64:
      return c.read<double>(what);
    default:
      return 0;
  }
}

bool valid_value_type(uint32_t t) { return t <= static_cast<uint32_t>(GgufValueType::FLOAT64); }

void read_scalar(Cursor& c, GgufValue& v, const char* what) {
  switch (v.type) {
    case GgufValueType::UINT64:
      v.u = c.read<uint64_t>(what);
      v.i = static_cast<int64_t>(v.u);
      v.f = static_cast<double>(v.u);
      break;
    case GgufValueType::INT64:
      v.i = c.read<int64_t>(what);
      v.u = static_cast<uint64_t>(v.i);
      v.f = static_cast<double>(v.i);
      break;
    case GgufValueType::STRING:
      v.s = c.string(what);
      break;
    default: {
      double d = read_number(c, v.type, what);
      v.f = d;
      v.b = d != 0;
      v.i = static_cast<int64_t>(d);
      v.u = static_cast<uint64_t>(v.i);
    }
  }
}

}  // namespace

bool GgufValue::is_integer() const {
  switch (type) {
    case GgufValueType::UINT8:
    case GgufValueType::INT8:
    case GgufValueType::UINT16:
    case GgufValueType::INT16:
    case GgufValueType::UINT32:
    case GgufValueType::INT32:
    case GgufValueType::UINT64:
    case GgufValueType::INT64:
    case GgufValueType::BOOL:
      return true;
    default:
      return false;
  }
}

bool GgufValue::is_number() const {
  return is_integer() || type == GgufValueType::FLOAT32 || type == GgufValueType::FLOAT64;
}

namespace {

std::string absolute(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path abs = std::filesystem::absolute(path, ec);
  return ec ? path : abs.lexically_normal().string();
}

// See GgufFile::identity. A copy of the file elsewhere, a replacement (new inode) or an
// in-place rewrite (new mtime) names another file.
std::string file_identity(const std::string& abs_path, const struct stat& st) {
#ifdef __APPLE__
  const struct timespec& mtime = st.st_mtimespec;
#else
  const struct timespec& mtime = st.st_mtim;
#endif
  return abs_path + "|dev " + std::to_string(st.st_dev) + "|ino " + std::to_string(st.st_ino) +
         "|size " + std::to_string(st.st_size) + "|mtime " + std::to_string(mtime.tv_sec) + "." +
         std::to_string(mtime.tv_nsec);
}

}  // namespace

std::unique_ptr<GgufFile> GgufFile::open(const std::string& path) {
  std::unique_ptr<GgufFile> f(new GgufFile());
  f->path_ = path;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) f->fail(std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    f->fail("not a regular file");
  }
  f->size_ = static_cast<size_t>(st.st_size);
  f->absolute_path_ = absolute(path);
  f->identity_ = file_identity(f->absolute_path_, st);
  if (f->size_ == 0) {
    ::close(fd);
    f->fail("empty file, not a GGUF model");
  }
  void* m = mmap(nullptr, f->size_, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (m == MAP_FAILED) f->fail(std::string("cannot map: ") + std::strerror(errno));
  f->mapping_ = m;
  f->base_ = static_cast<const uint8_t*>(m);
  f->parse_all();
  return f;
}

std::unique_ptr<GgufFile> GgufFile::parse(const uint8_t* data, size_t size, std::string name) {
  std::unique_ptr<GgufFile> f(new GgufFile());
  f->path_ = std::move(name);
  f->base_ = data;
  f->size_ = size;
  f->parse_all();
  return f;
}

GgufFile::~GgufFile() {
  if (mapping_) munmap(mapping_, size_);
}

void GgufFile::fail(const std::string& what) const { throw GgufError(path_ + ": " + what); }

void GgufFile::parse_all() {
  Cursor c(*this, base_, size_);
  if (size_ < 4 || c.read<uint32_t>("magic") != kMagic) fail("not a GGUF file (bad magic)");
  version_ = c.read<uint32_t>("version");
  if (version_ != 2 && version_ != 3) {
    fail("unsupported GGUF version " + std::to_string(version_) + " (supported: 2, 3)");
  }
  const uint64_t n_tensors = c.read<uint64_t>("tensor count");
  const uint64_t n_kv = c.read<uint64_t>("metadata count");
  // Every entry takes bytes of the file, so counts above size/8 are damage, not big models;
  // checking before reserving keeps a corrupt header from asking for gigabytes.
  if (n_tensors > kMaxCount || n_kv > kMaxCount || n_tensors > size_ / 8 || n_kv > size_ / 8) {
    fail("implausible tensor or metadata count (corrupt header)");
  }

  kv_.reserve(n_kv);
  kv_begin_ = c.pos();
  for (uint64_t k = 0; k < n_kv; ++k) {
    std::string key(c.string("metadata key"));
    const uint32_t t = c.read<uint32_t>("metadata type");
    if (!valid_value_type(t))
      fail("metadata key '" + key + "' has unknown type " + std::to_string(t));
    GgufValue v;
    v.type = static_cast<GgufValueType>(t);
    if (v.type == GgufValueType::ARRAY) {
      const uint32_t et = c.read<uint32_t>("array type");
      if (!valid_value_type(et) || et == static_cast<uint32_t>(GgufValueType::ARRAY)) {
        fail("metadata array '" + key + "' has unsupported element type " + std::to_string(et));
      }
      v.elem_type = static_cast<GgufValueType>(et);
      const uint64_t n = c.read<uint64_t>("array length");
      if (n > kMaxArrayElems || n > size_ - c.pos())
        fail("metadata array '" + key + "' is implausibly long");
      if (v.elem_type == GgufValueType::STRING) {
        v.strs.reserve(n);
        for (uint64_t i = 0; i < n; ++i) v.strs.push_back(c.string(key.c_str()));
      } else {
        v.nums.reserve(n);
        for (uint64_t i = 0; i < n; ++i) v.nums.push_back(read_number(c, v.elem_type, key.c_str()));
      }
    } else {
      read_scalar(c, v, key.c_str());
    }
    kv_.emplace_back(std::move(key), std::move(v));
  }
  kv_end_ = c.pos();

  uint64_t alignment = 32;
  if (const GgufValue* a = find("general.alignment")) {
    if (!a->is_integer() || a->u == 0 || (a->u & (a->u - 1)) != 0 || a->u > (1u << 20)) {
      fail("general.alignment must be a power of two");
    }
    alignment = a->u;
  }
  alignment_ = alignment;

  tensors_.reserve(n_tensors);
  for (uint64_t k = 0; k < n_tensors; ++k) {
    GgufTensorInfo ti;
    ti.name = std::string(c.string("tensor name"));
    ti.n_dims = c.read<uint32_t>("tensor dimensions");
    if (ti.n_dims == 0 || ti.n_dims > 4) {
      fail("tensor '" + ti.name + "' has " + std::to_string(ti.n_dims) + " dimensions (1..4)");
    }
    for (uint32_t d = 0; d < ti.n_dims; ++d) {
      ti.ne[d] = c.read<uint64_t>("tensor shape");
      if (ti.ne[d] == 0 || ti.ne[d] > (1ull << 40))
        fail("tensor '" + ti.name + "' has a bad shape");
    }
    const uint32_t type = c.read<uint32_t>("tensor type");
    const GgmlTypeTraits* traits = ggml_type_traits(type);
    if (!traits) {
      fail("tensor '" + ti.name + "' has unknown tensor type " + std::to_string(type));
    }
    ti.type = static_cast<GgmlType>(type);
    ti.offset = c.read<uint64_t>("tensor offset");
    if (ti.ne[0] % traits->block_size != 0) {
      fail("tensor '" + ti.name + "' row length " + std::to_string(ti.ne[0]) +
           " is not a multiple of the " + std::string(traits->name) + " block size");
    }
    const unsigned __int128 bytes = static_cast<unsigned __int128>(ti.ne[0] / traits->block_size) *
                                    traits->type_size * ti.ne[1] * ti.ne[2] * ti.ne[3];
    if (bytes > size_) fail("tensor '" + ti.name + "' is larger than the file");
    ti.n_bytes = static_cast<uint64_t>(bytes);
    if (ti.offset % alignment != 0) fail("tensor '" + ti.name + "' offset is not aligned");
    tensors_.push_back(std::move(ti));
  }

  const uint64_t data_start = (c.pos() + alignment - 1) / alignment * alignment;
  data_start_ = static_cast<size_t>(std::min<uint64_t>(data_start, size_));
  for (GgufTensorInfo& ti : tensors_) {
    if (data_start > size_ || ti.offset > size_ - data_start ||
        ti.n_bytes > size_ - data_start - ti.offset) {
      fail("truncated file: tensor '" + ti.name + "' data (offset " + std::to_string(ti.offset) +
           ", " + std::to_string(ti.n_bytes) + " bytes) runs past the end of the file");
    }
    ti.data = base_ + data_start + ti.offset;
  }
}

const GgufValue* GgufFile::find(std::string_view key) const {
  for (const auto& [k, v] : kv_) {
    if (k == key) return &v;
  }
  return nullptr;
}

std::optional<int64_t> GgufFile::get_int(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v || !v->is_integer()) return std::nullopt;
  return v->i;
}

std::optional<double> GgufFile::get_float(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v || !v->is_number()) return std::nullopt;
  return v->f;
}

std::optional<bool> GgufFile::get_bool(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v || !v->is_integer()) return std::nullopt;
  return v->b;
}

std::optional<std::string_view> GgufFile::get_string(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v || v->type != GgufValueType::STRING) return std::nullopt;
  return v->s;
}

int64_t GgufFile::require_int(std::string_view key) const {
  if (auto v = get_int(key)) return *v;
  fail(std::string(find(key) ? "metadata key '" : "missing metadata key '") + std::string(key) +
       (find(key) ? "' is not an integer" : "'"));
}

double GgufFile::require_float(std::string_view key) const {
  if (auto v = get_float(key)) return *v;
  fail(std::string(find(key) ? "metadata key '" : "missing metadata key '") + std::string(key) +
       (find(key) ? "' is not a number" : "'"));
}

std::string_view GgufFile::require_string(std::string_view key) const {
  if (auto v = get_string(key)) return *v;
  fail(std::string(find(key) ? "metadata key '" : "missing metadata key '") + std::string(key) +
       (find(key) ? "' is not a string" : "'"));
}

const GgufTensorInfo* GgufFile::tensor(std::string_view name) const {
  for (const GgufTensorInfo& t : tensors_) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

const GgufTensorInfo& GgufFile::require_tensor(std::string_view name) const {
  if (const GgufTensorInfo* t = tensor(name)) return *t;
  fail("missing tensor '" + std::string(name) + "'");
}

}  // namespace leapfrog
