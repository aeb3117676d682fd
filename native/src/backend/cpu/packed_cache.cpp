#include "backend/cpu/packed_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <vector>

#include "backend/cpu/packed_layout_version.h"

namespace leapfrog::cpu {

namespace {

// Bump when the file's own layout (this header, the index, the alignment rule) changes;
// kPackedLayoutVersion is for the packed bytes themselves.
constexpr uint32_t kFileFormat = 1;
constexpr char kMagic[8] = {'L', 'F', 'P', 'A', 'C', 'K', 'E', 'D'};
constexpr size_t kHuge = size_t(2) << 20, kPage = 4096;

struct FileHeader {
  char magic[8];
  uint32_t format;
  uint32_t layout;
  uint64_t file_bytes;  // the whole file: checked against its size before mapping
  uint64_t key_bytes;   // the key follows the header, then `count` offsets (0: not packed)
  uint64_t count;
};

size_t round_up(size_t x, size_t to) { return (x + to - 1) / to * to; }

// Where each weight's bytes go, and the header + key + index as the file starts.
struct Layout {
  std::vector<uint8_t> prefix;
  std::vector<uint64_t> offsets;
  size_t file_bytes = 0;
};

Layout layout_of(const std::string& key, const std::vector<size_t>& sizes) {
  Layout l;
  l.offsets.assign(sizes.size(), 0);
  size_t at = sizeof(FileHeader) + key.size() + sizes.size() * sizeof(uint64_t);
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (!sizes[i]) continue;
    // Big weights on 2 MiB boundaries of the file (and of the mapping): huge-page candidates.
    at = round_up(at, sizes[i] >= kHuge ? kHuge : kPage);
    l.offsets[i] = at;
    at += sizes[i];
  }
  // Slack after the last weight, as a private buffer has (kernels may load a vector's
  // width past a row's end): the mapping ends at least 64 bytes after it.
  l.file_bytes = at + 64;
  FileHeader h{};
  std::memcpy(h.magic, kMagic, sizeof(kMagic));
  h.format = kFileFormat;
  h.layout = kPackedLayoutVersion;
  h.file_bytes = l.file_bytes;
  h.key_bytes = key.size();
  h.count = sizes.size();
  const auto put = [&](const void* p, size_t n) {
    l.prefix.insert(l.prefix.end(), static_cast<const uint8_t*>(p),
                    static_cast<const uint8_t*>(p) + n);
  };
  put(&h, sizeof(h));
  put(key.data(), key.size());
  put(l.offsets.data(), l.offsets.size() * sizeof(uint64_t));
  return l;
}

void set(std::string* why, std::string what) {
  if (why) *why = std::move(what);
}

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

bool pwrite_all(int fd, const uint8_t* p, size_t n, size_t at) {
  while (n > 0) {
    const ssize_t w = ::pwrite(fd, p, n, static_cast<off_t>(at));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      if (w == 0) errno = ENOSPC;
      return false;
    }
    p += w, n -= static_cast<size_t>(w), at += static_cast<size_t>(w);
  }
  return true;
}

bool pread_all(int fd, uint8_t* p, size_t n, size_t at) {
  while (n > 0) {
    const ssize_t r = ::pread(fd, p, n, static_cast<off_t>(at));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r, n -= static_cast<size_t>(r), at += static_cast<size_t>(r);
  }
  return true;
}

// Maps the whole file read-only and shared at a 2 MiB aligned address, so the file's 2 MiB
// aligned weights line up with huge-page boundaries, and reads its pages in now, at load,
// rather than in the first pass. MADV_HUGEPAGE before the pages are read: a VM_HUGEPAGE
// mapping reads the file ahead in 2 MiB folios, which the faults then map whole (where the
// file system keeps large folios, as ext4 and xfs do on recent kernels).
uint8_t* map_aligned(int fd, size_t bytes) {
  const size_t reserve = bytes + kHuge;
  void* r = mmap(nullptr, reserve, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (r == MAP_FAILED) return nullptr;
  uint8_t* base = static_cast<uint8_t*>(r);
  uint8_t* at = reinterpret_cast<uint8_t*>(round_up(reinterpret_cast<uintptr_t>(base), kHuge));
  if (mmap(at, bytes, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
    munmap(base, reserve);
    return nullptr;
  }
  const size_t mapped = round_up(bytes, kPage);
  if (at > base) munmap(base, static_cast<size_t>(at - base));
  if (base + reserve > at + mapped) {
    munmap(at + mapped, static_cast<size_t>(base + reserve - (at + mapped)));
  }
#ifdef MADV_HUGEPAGE
  madvise(at, bytes, MADV_HUGEPAGE);
#endif
#ifdef MADV_POPULATE_READ
  madvise(at, bytes, MADV_POPULATE_READ);  // older kernels: the first pass faults them in
#endif
  return at;
}

}  // namespace

uint64_t fnv1a(const void* data, size_t bytes, uint64_t h) {
  const auto* p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

std::string packed_cache_dir() {
  const char* off = std::getenv("LEAPFROG_PACKED_CACHE");
  if (off && std::string_view(off) == "off") return "";
  // LEAPFROG_CACHE_DIR is the root of all of Leapfrog's caches (the self-draft models live
  // there too: engine/native/self-draft.ts).
  if (const char* d = std::getenv("LEAPFROG_CACHE_DIR"); d && *d) return std::string(d) + "/packed";
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) {
    return std::string(x) + "/leapfrog/packed";
  }
  if (const char* home = std::getenv("HOME"); home && *home) {
    return std::string(home) + "/.cache/leapfrog/packed";
  }
  return "";
}

std::shared_ptr<const PackedCacheFile> PackedCacheFile::open(const std::string& path,
                                                             const std::string& key,
                                                             const std::vector<size_t>& sizes,
                                                             std::string* why) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    set(why, errno_text("cannot open"));
    return nullptr;
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  const Layout l = layout_of(key, sizes);
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    set(why, "not a regular file");
    return nullptr;
  }
  FileHeader h{};
  if (static_cast<size_t>(st.st_size) < sizeof(h) ||
      !pread_all(fd, reinterpret_cast<uint8_t*>(&h), sizeof(h), 0) ||
      std::memcmp(h.magic, kMagic, sizeof(kMagic)) != 0) {
    set(why, "not a packed-weight cache file");
    return nullptr;
  }
  if (h.format != kFileFormat || h.layout != kPackedLayoutVersion) {
    set(why, "written by another version (format " + std::to_string(h.format) + ", layout " +
                 std::to_string(h.layout) + ")");
    return nullptr;
  }
  if (h.file_bytes != static_cast<uint64_t>(st.st_size) || h.file_bytes != l.file_bytes) {
    set(why, "size " + std::to_string(st.st_size) + " bytes, its header says " +
                 std::to_string(h.file_bytes) + ", expected " + std::to_string(l.file_bytes));
    return nullptr;
  }
  std::vector<uint8_t> prefix(l.prefix.size());
  if (!pread_all(fd, prefix.data(), prefix.size(), 0) || prefix != l.prefix) {
    set(why, "another model, kernel level or layout (key or index differs)");
    return nullptr;
  }
  std::shared_ptr<PackedCacheFile> f(new PackedCacheFile());
  f->map_ = map_aligned(fd, l.file_bytes);
  if (!f->map_) {
    set(why, errno_text("cannot map"));
    return nullptr;
  }
  f->bytes_ = l.file_bytes;
  f->offsets_ = l.offsets;
  futimens(fd, nullptr);  // its last use, for trim_packed_caches (a read-only cache: no matter)
  return f;
}

std::shared_ptr<const PackedCacheFile> PackedCacheFile::write(
    const std::string& path, const std::string& key,
    const std::vector<std::span<const uint8_t>>& weights, std::string* why) {
  std::vector<size_t> sizes(weights.size());
  for (size_t i = 0; i < weights.size(); ++i) sizes[i] = weights[i].size();
  const Layout l = layout_of(key, sizes);
  const std::filesystem::path target(path);
  std::error_code ec;
  std::filesystem::create_directories(target.parent_path(), ec);
  if (ec) {
    set(why, "cannot create " + target.parent_path().string() + ": " + ec.message());
    return nullptr;
  }
  std::string tmp = path + ".tmp.XXXXXX";
  const int fd = mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) {
    set(why, errno_text(("cannot create a file in " + target.parent_path().string()).c_str()));
    return nullptr;
  }
  bool ok = pwrite_all(fd, l.prefix.data(), l.prefix.size(), 0);
  for (size_t i = 0; ok && i < weights.size(); ++i) {
    if (!weights[i].empty())
      ok = pwrite_all(fd, weights[i].data(), weights[i].size(), l.offsets[i]);
  }
  ok = ok && ftruncate(fd, static_cast<off_t>(l.file_bytes)) == 0 && fsync(fd) == 0;
  const std::string failed = ok ? "" : errno_text("cannot write");
  if (::close(fd) != 0 && ok) {
    ok = false;
    set(why, errno_text("cannot write"));
  } else if (!ok) {
    set(why, failed);
  }
  if (!ok) {
    ::unlink(tmp.c_str());
    ::rmdir(target.parent_path().c_str());  // when it is empty: a full disk keeps nothing of ours
    return nullptr;
  }
  // Another process may have written the same cache meanwhile: share its pages.
  if (auto existing = open(path, key, sizes)) {
    ::unlink(tmp.c_str());
    return existing;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    set(why, errno_text("cannot rename into place"));
    ::unlink(tmp.c_str());
    return nullptr;
  }
  return open(path, key, sizes, why);
}

void remove_stale_caches(const std::string& dir, const std::string& prefix,
                         const std::string& keep) {
  std::error_code ec;
  const auto now = std::filesystem::file_time_type::clock::now();
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0 || e.path().string() == keep) continue;
    const bool cache = name.size() > 9 && name.ends_with(".lfpacked");
    // A temporary or lock file is another writer's until it is an hour old (then it died).
    const bool orphan =
        (name.find(".lfpacked.tmp.") != std::string::npos || name.ends_with(".lfpacked.lock")) &&
        now - e.last_write_time(ec) > std::chrono::hours(1);
    if (cache || orphan) std::filesystem::remove(e.path(), ec);
  }
}

void trim_packed_caches(const std::string& dir, const std::string& keep, uint64_t max_bytes,
                        std::chrono::hours max_unused) {
  namespace fs = std::filesystem;
  struct Cache {
    fs::path path;
    fs::file_time_type used;
    uint64_t bytes;
  };
  std::vector<Cache> caches;
  uint64_t total = 0;
  std::error_code ec;
  const auto now = fs::file_time_type::clock::now();
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (!name.ends_with(".lfpacked") || !e.is_regular_file(ec)) continue;
    const uint64_t bytes = e.file_size(ec);
    if (ec) continue;
    total += bytes;
    if (e.path().string() == keep) continue;
    caches.push_back({e.path(), e.last_write_time(ec), bytes});
  }
  // Oldest use first.
  std::sort(caches.begin(), caches.end(),
            [](const Cache& a, const Cache& b) { return a.used < b.used; });
  for (const Cache& c : caches) {
    if (total <= max_bytes && now - c.used <= max_unused) continue;
    // A process still mapping it keeps its pages; the next load of that model packs again.
    if (fs::remove(c.path, ec)) total -= c.bytes;
  }
}

uint64_t packed_cache_max_bytes() {
  constexpr double kGiB = double(uint64_t(1) << 30);
  constexpr double kDefaultGiB = 20;
  if (const char* v = std::getenv("LEAPFROG_PACKED_CACHE_MAX_GB"); v && *v) {
    char* end = nullptr;
    const double gb = std::strtod(v, &end);
    if (end && *end == '\0' && gb > 0 && gb < 1e9) return static_cast<uint64_t>(gb * kGiB);
    // A cache setting never stops a load: said, and the default kept.
    std::fprintf(stderr,
                 "leapfrog: warning: LEAPFROG_PACKED_CACHE_MAX_GB='%s' is not a positive number "
                 "of GiB; the packed-weight cache keeps to %.0f GiB\n",
                 v, kDefaultGiB);
  }
  return static_cast<uint64_t>(kDefaultGiB * kGiB);
}

PackedCacheLock::PackedCacheLock(const std::string& path, double wait_s) : path_(path + ".lock") {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path_).parent_path(), ec);
  const int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return;
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
  while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if ((errno != EWOULDBLOCK && errno != EINTR) || std::chrono::steady_clock::now() > until) {
      ::close(fd);
      return;
    }
    usleep(20000);
  }
  fd_ = fd;
}

PackedCacheLock::~PackedCacheLock() {
  if (fd_ < 0) return;
  // Removed first: a process that opened it meanwhile still gets the lock, then finds the
  // cache written (or writes it); nothing of the lock stays behind.
  ::unlink(path_.c_str());
  ::close(fd_);
  // And the directory the lock made, when nothing was written into it (a full disk).
  ::rmdir(std::filesystem::path(path_).parent_path().c_str());
}

PackedCacheFile::~PackedCacheFile() {
  if (map_) munmap(map_, bytes_);
}

}  // namespace leapfrog::cpu
