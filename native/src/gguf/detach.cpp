// GgufFile::detach_from_file: why a loaded model no longer reads its file on disk.
//
// A MAP_SHARED (or MAP_PRIVATE) file mapping faults with SIGBUS when a page is touched past
// the file's current end, so a model file truncated or rewritten in place while loaded (a
// download tool restarting, `ollama pull` replacing a blob, a user copying over it) would
// kill the whole sidecar on the next pass. Deleting it (Ollama's `rm`) is harmless: the
// inode lives while mapped. The choices were: (a) copy what passes read into anonymous
// memory, (b) keep the mapping and catch SIGBUS with sigsetjmp/siglongjmp, (c) MAP_POPULATE.
// (c) does not help: populated pages of a truncated file are still dropped and fault. (b)
// is fragile: the faults happen on thread-pool workers in the middle of a matmul, where
// jumping out leaves the pool's barriers, locks and the allocator in an unknown state, and a
// handler for a process-wide signal fights Node's own. So (a): after loading, the CPU
// backend reads the file's bytes in place only for the embedding table (row lookups) and for
// the weights it has no packed layout for; everything else it has already copied into its
// packed buffers (a GPU backend copies all of it to the device). Those in-place ranges and
// the header (metadata strings, the vocabulary, which the tokenizer keeps views into) become
// private anonymous pages at the same addresses, so no pointer changes; the rest of the
// mapping is replaced by an inaccessible reservation (no memory, and a stray read faults
// loudly instead of reading a file that may have changed). The cost: the in-place bytes are
// no longer page cache shared with other processes mapping the same file, and they cannot
// be evicted under memory pressure; the packed weights never were either. Model::load
// measures it (private_bytes()).
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "gguf/gguf_file.h"

namespace leapfrog {

namespace {

struct PageRange {
  size_t begin, end;  // byte offsets into the mapping, page-aligned
};

// Replaces [at, at + len) of the mapping with anonymous read-only pages holding its bytes.
void make_private(uint8_t* at, size_t len, const GgufFile& file) {
  void* fresh = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (fresh == MAP_FAILED) {
    file.fail(std::string("cannot copy the model into memory: ") + std::strerror(errno));
  }
  std::memcpy(fresh, at, len);
#ifdef __linux__
  // Moves the copy over the file pages in one step: the range is never unmapped.
  mprotect(fresh, len, PROT_READ);
  if (mremap(fresh, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, at) == MAP_FAILED) {
    const int err = errno;
    munmap(fresh, len);
    file.fail(std::string("cannot copy the model into memory: ") + std::strerror(err));
  }
#else
  if (mmap(at, len, PROT_READ | PROT_WRITE, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) ==
      MAP_FAILED) {
    const int err = errno;
    munmap(fresh, len);
    file.fail(std::string("cannot copy the model into memory: ") + std::strerror(err));
  }
  std::memcpy(at, fresh, len);
  mprotect(at, len, PROT_READ);
  munmap(fresh, len);
#endif
}

// Drops the file pages of [at, at + len) but keeps the addresses reserved, so nothing else
// is mapped there and the destructor's single munmap still covers exactly what we own.
void make_inaccessible(uint8_t* at, size_t len) {
  mmap(at, len, PROT_NONE, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
}

}  // namespace

void GgufFile::detach_from_file(const std::vector<std::span<const uint8_t>>& keep) {
  if (!mapping_ || detached_) return;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const auto down = [&](size_t x) { return x / page * page; };
  const auto up = [&](size_t x) { return (x + page - 1) / page * page; };
  const size_t end = up(size_);
  std::vector<PageRange> ranges{{0, std::min(up(data_start_), end)}};
  for (const auto& k : keep) {
    if (k.empty() || k.data() < base_ || k.data() >= base_ + size_) continue;
    const size_t off = static_cast<size_t>(k.data() - base_);
    ranges.push_back({down(off), std::min(up(off + k.size()), end)});
  }
  std::sort(ranges.begin(), ranges.end(),
            [](const PageRange& a, const PageRange& b) { return a.begin < b.begin; });
  std::vector<PageRange> merged;
  for (const PageRange& r : ranges) {
    if (!merged.empty() && r.begin <= merged.back().end) {
      merged.back().end = std::max(merged.back().end, r.end);
    } else {
      merged.push_back(r);
    }
  }
  auto* base = static_cast<uint8_t*>(mapping_);
  size_t at = 0;
  for (const PageRange& r : merged) {
    if (r.begin > at) make_inaccessible(base + at, r.begin - at);
    if (r.end > r.begin) make_private(base + r.begin, r.end - r.begin, *this);
    private_bytes_ += r.end - r.begin;
    at = std::max(at, r.end);
  }
  if (at < end) make_inaccessible(base + at, end - at);
  detached_ = true;
}

}  // namespace leapfrog
