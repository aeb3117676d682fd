// CpuBackend::load_weights: a model's packed weights from the shared packed-weight cache
// (packed_cache.h), so that two processes on one model (two VS Code windows) share one copy
// of them in the page cache instead of each packing ~1.35 GB (a 1.5B Q8_0 model) into
// private memory. The weights without a packed layout (the embedding table, types read in
// the file's layout) go into the same file as they are: otherwise the model copies them into
// private memory when it lets go of its file (gguf/detach.cpp).
//
// The key holds everything the packed bytes depend on, so a file is only ever mapped by a
// process that would have packed exactly those bytes:
// - the model file's identity (GgufFile::identity: absolute path, device, inode, size,
//   mtime in ns, from the descriptor that was mapped), plus a fingerprint of each packed
//   weight's first row. The identity costs nothing to take; hashing all the tensor bytes
//   would read the whole GGUF (1.6 GB for a 1.5B Q8_0 model) at every load, the cost the
//   cache exists to save. A replaced file (new inode), one rewritten in place (new mtime or
//   size) or a copy elsewhere (new path) gets a new key; the first-row fingerprints catch
//   even an in-place copy that kept size and mtime (two fine-tunes of one base model have
//   the same size), for the price of reading one row per weight.
// - the kernel table's level (cpu::isa_name: LEAPFROG_CPU_ISA or another CPU picks another
//   layout), kPackedLayoutVersion (packed_layout_version.h), and a fingerprint of what this
//   table's pack() writes for a fixed input of each (type, cols) in the model, which catches
//   a layout change whose version bump was forgotten.
// - per weight: its offset in the file, type, rows, cols and row bytes.
// The file is named after the key's hash; its header holds the whole key, compared byte for
// byte (a hash collision maps nothing).
//
// Huge pages: the private packed buffers ask for anonymous transparent huge pages (HostBuffer
// in cpu_backend.cpp: 1-token products 20.1 -> 17.2 ms with them); the cache maps the file
// 2 MiB aligned with MADV_HUGEPAGE, which gives huge mappings where the file system keeps
// large folios. Measured (BENCHMARKS.md, "Shared packed weights (issue 18)": 1.5B Q4_K_M, 2
// threads, kernel 6.18, ext4): 1,019,904 kB of the file PMD-mapped; decode 19.2 tokens/s
// private vs 19.3 shared, 16-token passes 168 vs 170 ms (medians of 6 alternated rounds), the
// same within noise. So the cache is on by default. Where a file system gives 4 KiB pages
// only, decoding may lose up to that sixth: the memory of a second window matters more, and
// LEAPFROG_PACKED_CACHE=off gives the private huge pages back.
#include <cstdio>
#include <map>
#include <optional>
#include <utility>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/packed_cache.h"
#include "backend/cpu/packed_layout_version.h"

namespace leapfrog {

namespace {

// A packed weight inside a mapped cache file; keeps the file mapped while the model lives.
class CachedWeight final : public DeviceBuffer {
 public:
  CachedWeight(std::shared_ptr<const cpu::PackedCacheFile> file, const uint8_t* at, size_t bytes)
      : file_(std::move(file)), at_(at), bytes_(bytes) {}
  size_t bytes() const override { return bytes_; }

 protected:
  // Read-only pages: the backend only reads packed weights.
  void* raw() const override { return const_cast<uint8_t*>(at_); }

 private:
  std::shared_ptr<const cpu::PackedCacheFile> file_;
  const uint8_t* at_;
  size_t bytes_;
};

std::string hex(uint64_t v) {
  char s[17];
  std::snprintf(s, sizeof(s), "%016llx", static_cast<unsigned long long>(v));
  return s;
}

}  // namespace

std::string CpuBackend::packed_cache_key(const WeightSource& source,
                                         const std::vector<WeightRequest>& weights,
                                         const std::vector<size_t>& packed_size) const {
  // What this table's pack() makes of fixed bytes, per (type, cols) the model packs.
  std::map<std::pair<int, int64_t>, const WeightView*> shapes;
  for (size_t i = 0; i < weights.size(); ++i) {
    if (packed_size[i])
      shapes.emplace(std::pair(int(weights[i].file.type), weights[i].file.cols), &weights[i].file);
  }
  uint64_t layout = cpu::kPackedLayoutVersion;
  for (const auto& [shape, w] : shapes) {
    const cpu::Kernels::Packed& p = k_->packed[cpu::kernel_slot(w->type)];
    std::vector<uint8_t> in(w->row_bytes * p.group), out(group_bytes(p, *w));
    uint32_t x = 0x9e3779b9u ^ uint32_t(shape.first) ^ uint32_t(shape.second) << 8;
    for (auto& b : in) b = static_cast<uint8_t>((x = x * 1664525u + 1013904223u) >> 24);
    p.pack(in.data(), w->row_bytes, w->cols, out.data());
    layout = cpu::fnv1a(out.data(), out.size(), layout);
  }
  std::string key = "leapfrog packed weights|layout " + std::to_string(cpu::kPackedLayoutVersion) +
                    "|isa " + cpu::isa_name(k_->isa) + "|pack " + hex(layout) + "|file " +
                    source.identity + "|weights " + std::to_string(weights.size());
  for (size_t i = 0; i < weights.size(); ++i) {
    const WeightView& w = weights[i].file;
    key += "\n" + std::to_string(i) + (packed_size[i] ? " packed" : " as is") + " at " +
           std::to_string(w.data - source.base) + " type " + std::to_string(int(w.type)) + " " +
           std::to_string(w.rows) + "x" + std::to_string(w.cols) + " rb " +
           std::to_string(w.row_bytes) + " row0 " + hex(cpu::fnv1a(w.data, w.row_bytes));
  }
  return key;
}

std::vector<ResidentWeight> CpuBackend::load_weights(const WeightSource& source,
                                                     const std::vector<WeightRequest>& weights) {
  std::vector<ResidentWeight> out(weights.size());
  std::vector<size_t> packed_size(weights.size(), 0);
  size_t total = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    out[i].view = weights[i].file;
    if (weights[i].use == WeightUse::Products) {
      total += packed_size[i] = packed_bytes(weights[i].file);
    }
  }
  if (total == 0) return out;  // nothing to pack (the reference path, unpacked types)

  const std::string dir = cpu::packed_cache_dir();
  const bool cacheable = !dir.empty() && !source.identity.empty() && source.base;
  // What the cache file holds of weight i: its packed layout, or else (the embedding table,
  // weights whose kernels read the file's rows) the file's bytes as they are, which are then
  // shared too instead of copied into private memory when the model lets go of its file.
  std::vector<size_t> sizes = packed_size;
  if (cacheable) {
    for (size_t i = 0; i < weights.size(); ++i) {
      if (!sizes[i])
        sizes[i] = weights[i].file.row_bytes * static_cast<size_t>(weights[i].file.rows);
    }
  }
  const auto use_file = [&](std::shared_ptr<const cpu::PackedCacheFile> f) {
    for (size_t i = 0; i < weights.size(); ++i) {
      if (!sizes[i]) continue;
      (packed_size[i] ? out[i].view.packed : out[i].view.data) = f->weight(i);
      out[i].memory = std::make_unique<CachedWeight>(f, f->weight(i), sizes[i]);
    }
  };
  std::string key, prefix, path;
  if (cacheable) {
    key = packed_cache_key(source, weights, packed_size);
    // <model file and level>-<key>: a new cache of one model file and level replaces the old.
    const std::string model = source.path + "|isa " + cpu::isa_name(k_->isa);
    prefix = hex(cpu::fnv1a(model.data(), model.size())) + "-";
    path = dir + "/" + prefix + hex(cpu::fnv1a(key.data(), key.size())) + ".lfpacked";
  }
  // Another process packing the same model: wait for its file (kPackWait: a 7B model packs
  // in well under that) rather than pack and write it a second time.
  constexpr double kPackWait = 300;
  std::optional<cpu::PackedCacheLock> writing;
  for (int attempt = 0; cacheable && attempt < 2; ++attempt) {
    if (auto f = cpu::PackedCacheFile::open(path, key, sizes)) {
      use_file(f);
      std::lock_guard<std::mutex> lock(stats_mu_);
      ++stats_.mapped;
      stats_.file = path;
      return out;
    }
    if (attempt == 0) writing.emplace(path, kPackWait);
  }
  // Packed here: into private buffers, then (cache on) into a new cache file that replaces
  // them; if that fails, the private buffers stay and the load goes on.
  std::vector<std::span<const uint8_t>> contents(weights.size());
  for (size_t i = 0; i < weights.size(); ++i) {
    if (!packed_size[i]) {
      if (sizes[i]) contents[i] = {weights[i].file.data, sizes[i]};  // the file's bytes
      continue;
    }
    out[i].memory = alloc(packed_size[i]);
    uint8_t* dst = out[i].memory->as<uint8_t>().get();
    pack_into(weights[i].file, dst);
    out[i].view.packed = dst;
    contents[i] = {dst, packed_size[i]};
  }
  if (cacheable) {
    std::string why;
    if (auto f = cpu::PackedCacheFile::write(path, key, contents, &why)) {
      use_file(f);  // the private buffers are freed here
      cpu::remove_stale_caches(dir, prefix, path);
      cpu::trim_packed_caches(dir, path, cpu::packed_cache_max_bytes(), cpu::kPackedCacheMaxUnused);
      std::lock_guard<std::mutex> lock(stats_mu_);
      ++stats_.written;
      stats_.file = path;
      return out;
    }
    std::fprintf(stderr,
                 "leapfrog: warning: packed-weight cache %s: %s; the weights stay in private "
                 "memory (LEAPFROG_CACHE_DIR picks another directory)\n",
                 path.c_str(), why.c_str());
  }
  std::lock_guard<std::mutex> lock(stats_mu_);
  ++stats_.private_only;
  return out;
}

CpuBackend::PackedCacheStats CpuBackend::packed_cache_stats() const {
  std::lock_guard<std::mutex> lock(stats_mu_);
  return stats_;
}

}  // namespace leapfrog
