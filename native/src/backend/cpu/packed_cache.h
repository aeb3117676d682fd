// The packed-weight cache: a model's weights in the CPU backend's packed layouts (and the
// weights it reads as they are in the file, like the embedding table, byte for byte), kept in
// one file per model (and kernel level), so that a second process loading the same model (a
// second VS Code window) maps the same page-cache pages instead of packing a private copy,
// and loads faster. One file per model: a header, the key, an index of where each weight's
// packed bytes start, then the bytes, each weight 2 MiB aligned (so the mapping can use huge
// pages where the kernel gives them to file pages).
//
// Files are written whole under a temporary name in the same directory and renamed into
// place, so a reader sees either nothing or a complete file, and a file once mapped is never
// changed (a rewrite is a new inode). A file that does not match exactly (another key,
// layout, version, a size other than its header says) is ignored and rewritten. Packed bytes
// are not checksummed: every byte pattern is a valid (if meaningless) packed weight, so a
// corrupted body gives wrong logits, never a crash.
//
// Bounded: trim_packed_caches (below), after each file written.
//
// Where: $LEAPFROG_CACHE_DIR/packed, else $XDG_CACHE_HOME/leapfrog/packed, else
// ~/.cache/leapfrog/packed (LEAPFROG_CACHE_DIR names the root of Leapfrog's caches, as for
// the self-draft models). LEAPFROG_PACKED_CACHE=off turns it off (private packing).
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace leapfrog::cpu {

// The cache directory, or empty when the cache is turned off (LEAPFROG_PACKED_CACHE=off) or
// no directory can be named (no HOME).
std::string packed_cache_dir();

// 64-bit FNV-1a: names cache files after their keys, fingerprints bytes that go into a key.
uint64_t fnv1a(const void* data, size_t bytes, uint64_t h = 0xcbf29ce484222325ull);

// Removes the cache files in `dir` whose names start with `prefix` (those of one model file
// and kernel level: cpu_load_weights.cpp) but `keep`, and such temporary files an hour old
// (a writer that died). A process still mapping a removed file keeps its pages.
void remove_stale_caches(const std::string& dir, const std::string& prefix,
                         const std::string& keep);

// Keeps the cache directory in bounds once `keep` (a file just written) is in it: the other
// models' cache files unused for `max_unused` are removed, then the least recently used while
// the cache files together take more than `max_bytes` (never `keep`, whatever its size). A
// file's modification time is its last use: every open() touches it. Without this, every
// model ever opened (and each CPU level it ran at) kept its file, about the model's size, for
// good: 12 GB here after a few days of benchmarks.
void trim_packed_caches(const std::string& dir, const std::string& keep, uint64_t max_bytes,
                        std::chrono::hours max_unused);
// The cache's size bound: LEAPFROG_PACKED_CACHE_MAX_GB (GiB, a number > 0; anything else is
// warned about on stderr and ignored), else 20 GiB —
// four 7B models at Q4_K_M; one more costs a repack (seconds) when it is opened again.
uint64_t packed_cache_max_bytes();
constexpr std::chrono::hours kPackedCacheMaxUnused{24 * 30};

// Serializes the processes that find no cache for one file: two windows opened at once, so
// the second waits for the first's file and maps it instead of packing a copy of its own.
// A lock file beside the cache (`path`.lock, flock), removed when released. Only ever an
// optimization: every holder checks the cache file again, a process that dies lets go, a
// lock that cannot be made or is held past `wait_s` seconds is done without.
class PackedCacheLock {
 public:
  PackedCacheLock(const std::string& path, double wait_s);
  ~PackedCacheLock();
  PackedCacheLock(const PackedCacheLock&) = delete;
  PackedCacheLock& operator=(const PackedCacheLock&) = delete;
  bool held() const { return fd_ >= 0; }

 private:
  std::string path_;
  int fd_ = -1;
};

// A cache file, mapped read-only and shared.
class PackedCacheFile {
 public:
  // Maps `path` when it is a complete cache of `key` whose weight i has sizes[i] packed bytes
  // (0: not packed); null when absent or not exactly that (stale, truncated, corrupt), with
  // the reason in *why. The file's size is checked against its header before anything is
  // mapped, so a truncated file is refused rather than faulting later.
  static std::shared_ptr<const PackedCacheFile> open(const std::string& path,
                                                     const std::string& key,
                                                     const std::vector<size_t>& sizes,
                                                     std::string* why = nullptr);
  // Writes weights[i] (empty: not packed) as the cache of `key` at `path` (temporary file,
  // fsync, rename; the directory is created), then maps it. Null with the reason in *why
  // when any step fails (no temporary file is left behind). When a valid file for the key
  // appeared meanwhile (another process won the race), maps that one instead.
  static std::shared_ptr<const PackedCacheFile> write(
      const std::string& path, const std::string& key,
      const std::vector<std::span<const uint8_t>>& weights, std::string* why);

  ~PackedCacheFile();
  PackedCacheFile(const PackedCacheFile&) = delete;
  PackedCacheFile& operator=(const PackedCacheFile&) = delete;

  // Weight i's packed bytes inside the mapping (null when not packed).
  const uint8_t* weight(size_t i) const { return offsets_[i] ? map_ + offsets_[i] : nullptr; }
  size_t bytes() const { return bytes_; }

 private:
  PackedCacheFile() = default;
  uint8_t* map_ = nullptr;
  size_t bytes_ = 0;
  std::vector<uint64_t> offsets_;
};

}  // namespace leapfrog::cpu
