#include "backend/cpu/cpu_backend.h"

#include <sys/mman.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

#include "backend/cpu/cpu_kv.h"
#include "format/dequant.h"
#include "format/fp16.h"

namespace leapfrog {

using cpu::ActFormat;

namespace {

// Vectors of the compiler's own (SSE2 on x86-64, NEON on arm64) for the element-wise ops this
// file runs on the calling thread: built for the baseline, like the rest of this file.
using F32x4 = float __attribute__((vector_size(16)));

// Prepared activations live in a per-thread buffer so two sessions on different threads
// can share one backend (their pool jobs are serialized, their buffers are not shared).
// Aligned to 64 bytes: the 8-bit activation blocks are read with 32-byte vector loads.
uint8_t* aligned_part(std::vector<uint8_t>& buf, size_t bytes) {
  if (buf.size() < bytes + 64) buf.resize(bytes + 64);
  return align64(buf.data());
}

uint8_t* act_buffer(size_t bytes) {
  thread_local std::vector<uint8_t> buf;
  return aligned_part(buf, bytes);
}

// The activation rows rearranged for packed products (Kernels::Packed::tiles).
uint8_t* tiles_buffer(size_t bytes) {
  thread_local std::vector<uint8_t> buf;
  return aligned_part(buf, bytes);
}

using TilesFn = decltype(cpu::Kernels::Packed::tiles);

// Rows per packed group, at most (kernels.h, Kernels::Packed): work is split in multiples.
constexpr int64_t kMaxPackGroup = 16;

// Output rows [r0, r1) of weight j: one task of a product job.
struct RowTask {
  int j;
  int64_t r0, r1;
};

// Weights (rows x inputs) a product's task covers at least, where the product has enough for
// one such task per thread. A task has a fixed cost — its claim, a line that crosses between
// the cores, and the start of its weight stream, whose first blocks have no prefetch ahead of
// them — and the small models' products were split as finely as the large ones' (8 tasks per
// thread): the bundled draft's 256 x 256 matrices in tasks of 16 to 32 rows. With at least
// 2^18 weights a task (272 KiB of Q8_0: ~8 us of one core's ~34 GB/s stream), three alternated
// rounds (lf_bench M --threads 2 --ctx-tokens 512 --batches 1,2,4,8,16, Zen 5, session 22):
// the bundled model's passes 3-14 % shorter (one token 1.23-1.35 -> 1.14-1.18 ms), its draft's
// 6-19 % (one token 0.167-0.192 -> 0.147-0.168 ms), the 0.5B and 1.5B Q8_0 at 1,024 positions
// within the host's noise (their tasks were already larger). 2^17 and 2^19 measured alike.
constexpr double kMinTaskWeights = 1 << 18;

int64_t min_task_rows(int64_t cols) { return static_cast<int64_t>(kMinTaskWeights / double(cols)); }

// Splits the output rows of the weights (those with rows to compute: ns[j] > 0, or all when
// ns is null) into chunks, a few per thread (dynamic hand-out evens out stragglers), each a
// multiple of 16 rows (the packed layouts' groups). The last chunks shrink with the rows left
// (each at most 1 / (2 threads) of them, down to one group), so the threads finish within a
// small chunk of each other rather than within a whole one: 16-token passes of the 0.5B Q8_0,
// 2 threads, Zen 4, perf: the threads' spinning 5.4 -> 3.5 % of samples (two alternated runs,
// session 17). The first chunks keep their size: a worker that loses its core (the editor's
// processes share the machine) then holds up no more than before. No chunk has fewer than
// `min_rows` rows unless that would leave a thread without one (min_task_rows).
int64_t split_rows(const WeightView* const* ws, const int* ns, int count, int threads,
                   int64_t min_rows, std::vector<RowTask>& tasks) {
  int64_t total_rows = 0;
  for (int j = 0; j < count; ++j) {
    if (!ns || ns[j] > 0) total_rows += ws[j]->rows;
  }
  const auto whole_groups = [](int64_t rows) {
    return std::max<int64_t>(kMaxPackGroup,
                             (rows + kMaxPackGroup - 1) / kMaxPackGroup * kMaxPackGroup);
  };
  const int64_t target_chunks = int64_t(threads) * 8;
  const int64_t floor_rows =
      std::min(whole_groups(min_rows), whole_groups(total_rows / std::max(threads, 1)));
  const int64_t chunk =
      std::max(floor_rows, whole_groups((total_rows + target_chunks - 1) / target_chunks));
  tasks.clear();
  int64_t left = total_rows;
  for (int j = 0; j < count; ++j) {
    if (ns && ns[j] <= 0) continue;
    for (int64_t r = 0; r < ws[j]->rows;) {
      const int64_t size = std::min(
          chunk, std::max(floor_rows, whole_groups((left + 2 * threads - 1) / (2 * threads))));
      const int64_t r1 = std::min(ws[j]->rows, r + size);
      tasks.push_back({j, r, r1});
      left -= r1 - r;
      r = r1;
    }
  }
  return total_rows;
}

// Host memory: what the CPU backend's tensors live in. Large buffers (the packed weights, the
// KV cache) are mapped on their own, 2 MiB aligned, and asked for transparent huge pages:
// a batched product streams its weights at the memory roof only when the page walks of 4 KiB
// pages do not stall it (lf_matbench, 1.5B Q8_0 shape, 1-token products: 20.1 -> 17.2 ms). Where
// the kernel gives no huge pages this is an ordinary anonymous mapping.
//
// Every page is touched here, at allocation, so that no pass pays a first touch: the pass
// scratch (ForwardScratch: activations, then max_batch rows of logits) was faulted in as the
// passes grew, and on the 2-core VM of session 24 the first verification pass whose logits
// reached a new 2 MiB page (the bundled model, 8 rows) took 7.1-7.5 ms instead of ~2.1, every
// process (perf: clear_page_erms under gemm16's stores, both threads). The price: scratch the
// passes never reach is resident too (64 rows of logits: 37 MB for a 151,936-token vocabulary),
// and packed weights are zeroed once before they are written.
class HostBuffer final : public DeviceBuffer {
 public:
  explicit HostBuffer(size_t bytes) : bytes_(bytes) {
    if (bytes >= kMapAtLeast) {
      mapped_ = (bytes + kHuge - 1) / kHuge * kHuge + kHuge;
      void* p = mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) throw std::bad_alloc();
      map_ = static_cast<uint8_t*>(p);
      data_ = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(map_) + kHuge - 1) &
                                         ~(kHuge - 1));
#ifdef MADV_HUGEPAGE
      madvise(data_, mapped_ - (data_ - map_), MADV_HUGEPAGE);
#endif
      // Anonymous pages read as zero: writing zeros changes nothing but residency.
      for (size_t at = 0; at < bytes; at += kPage) data_[at] = 0;
    } else {
      mem_.reset(new uint8_t[bytes + 64]());  // value-initialized: every page touched
      data_ = align64(mem_.get());
    }
  }
  ~HostBuffer() override {
    if (map_) munmap(map_, mapped_);
  }
  size_t bytes() const override { return bytes_; }

 protected:
  void* raw() const override { return data_; }

 private:
  static constexpr size_t kHuge = size_t(2) << 20, kMapAtLeast = size_t(4) << 20;
  static constexpr size_t kPage = 4096;
  std::unique_ptr<uint8_t[]> mem_;
  uint8_t* map_ = nullptr;
  size_t mapped_ = 0;
  uint8_t* data_ = nullptr;
  size_t bytes_;
};

}  // namespace

CpuBackend::CpuBackend(const CpuBackendOptions& opts)
    : k_(&cpu::kernels(opts.isa ? std::min(*opts.isa, cpu::detect_isa()) : cpu::detect_isa())),
      reference_(opts.reference_matmul),
      pool_(opts.threads > 0 ? opts.threads : cpu::ThreadPool::physical_cores()) {}

CpuBackend::~CpuBackend() = default;

std::string CpuBackend::name() const {
  return std::string("cpu:") + cpu::isa_name(k_->isa) + (reference_ ? "-reference" : "");
}

std::unique_ptr<DeviceBuffer> CpuBackend::alloc(size_t bytes) {
  return std::make_unique<HostBuffer>(bytes);
}

void CpuBackend::upload(DevicePtr<void> dst, const void* src, size_t bytes) {
  if (dst.get() != src && bytes) std::memcpy(dst.get(), src, bytes);
}

void CpuBackend::download(void* dst, DevicePtr<const void> src, size_t bytes) {
  if (dst != src.get() && bytes) std::memcpy(dst, src.get(), bytes);
}

// The file's mapping is host memory already: the weight stays there, plus a packed copy
// where the kernels have a layout of their own.
ResidentWeight CpuBackend::load_weight(const WeightView& file, WeightUse use) {
  ResidentWeight r;
  r.view = file;
  if (use == WeightUse::Products) r.memory = pack_weight(file);
  if (r.memory) r.view.packed = r.memory->as<uint8_t>().get();
  return r;
}

void CpuBackend::matmul(const WeightView& w, DevicePtr<const float> x, int n, DevicePtr<float> y) {
  const WeightView* ws[1] = {&w};
  float* ys[1] = {y.get()};
  matmul_host(ws, ys, 1, x.get(), n);
}

void CpuBackend::matmul_multi(const WeightView* const* ws, const DevicePtr<float>* y, int count,
                              DevicePtr<const float> x, int n) {
  float* ys[8];
  if (count > 8) throw std::invalid_argument("matmul_multi: at most 8 weights");
  for (int j = 0; j < count; ++j) ys[j] = y[j].get();
  matmul_host(ws, ys, count, x.get(), n);
}

void CpuBackend::matmul_host(const WeightView* const* ws, float* const* ys, int count,
                             const float* x, int n) {
  if (count <= 0) return;
  if (reference_) {
    for (int j = 0; j < count; ++j) matmul_reference(*ws[j], x, n, ys[j]);
    return;
  }
  const int64_t cols = ws[0]->cols;
  const ActFormat fmt = cpu::act_format_for(ws[0]->type);
  for (int j = 0; j < count; ++j) {
    const int slot = cpu::kernel_slot(ws[j]->type);
    if (slot < 0 || !k_->gemm[slot]) throw std::invalid_argument("matmul: unsupported weight type");
    if (ws[j]->cols != cols || cpu::act_format_for(ws[j]->type) != fmt) {
      // Inputs prepared differently: one product at a time.
      for (int i = 0; i < count; ++i) matmul_host(&ws[i], &ys[i], 1, x, n);
      return;
    }
  }
  const cpu::Kernels::Packed* tiled = nullptr;  // the rearrangement every weight's product reads
  if (n > 1) {
    for (int j = 0; j < count; ++j) {
      const cpu::Kernels::Packed* p = tiles_of(*ws[j]);
      if (j > 0 && (p ? p->tiles : nullptr) != (tiled ? tiled->tiles : nullptr)) {
        for (int i = 0; i < count; ++i) matmul_host(&ws[i], &ys[i], 1, x, n);
        return;
      }
      tiled = p;
    }
  }
  size_t arb = cpu::act_row_bytes(fmt, cols);
  const cpu::QuantizeFn quant = k_->quantize[static_cast<int>(fmt)];
  uint8_t* act = act_buffer(arb * n);
  uint8_t* t = tiled ? tiles_buffer(tiled->tiles_bytes(n, cols)) : nullptr;  // n > 1 only
  const int tr = tiled ? tiled->tile_rows : 0;
  if (n == 1) {
    quant(x, act, cols);
  } else if (tr > 0 && n >= 2 * tr) {
    // Quantized and rearranged in one job, a run of whole tile groups per task: done on the
    // calling thread alone, this preparation was 3.6 % of a 16-token pass's samples while the
    // other thread spun (perf, 0.5B Q8_0, 2 threads, Zen 4).
    const int groups = (n + tr - 1) / tr, parts = std::min(groups, pool_.size());
    pool_.run(parts, [&](int k, int) {
      const int r0 = groups * k / parts * tr, r1 = std::min(n, groups * (k + 1) / parts * tr);
      for (int i = r0; i < r1; ++i) quant(x + i * cols, act + i * arb, cols);
      tiled->tiles(act + r0 * arb, arb, r1 - r0, cols, t + tiled->tiles_bytes(r0, cols));
    });
  } else {
    pool_.run_sized(n, double(n) * cols * 8,
                    [&](int i, int) { quant(x + i * cols, act + i * arb, cols); });
    if (t) tiled->tiles(act, arb, n, cols, t);
  }
  if (t) act = t, arb = 0;

  // Each weight row is read from memory once and reused for all n activation rows.
  thread_local std::vector<RowTask> tasks;
  const int64_t total_rows =
      split_rows(ws, nullptr, count, pool_.size(), min_task_rows(cols), tasks);
  const RowTask* tk = tasks.data();
  pool_.run_sized(static_cast<int>(tasks.size()), double(total_rows) * cols * n, [&](int t, int) {
    const RowTask& task = tk[t];
    gemm_rows(*ws[task.j], task.r0, task.r1, act, arb, n, ys[task.j]);
  });
}

const cpu::Kernels::Packed* CpuBackend::tiles_of(const WeightView& w) const {
  const int slot = cpu::kernel_slot(w.type);
  if (!w.packed || slot < 0 || !k_->packed[slot].tiles) return nullptr;
  return &k_->packed[slot];
}

void CpuBackend::gemm_rows(const WeightView& w, int64_t r0, int64_t r1, const uint8_t* act,
                           size_t arb, int n, float* y) const {
  const int slot = cpu::kernel_slot(w.type);
  if (w.packed) {
    const cpu::Kernels::Packed& p = k_->packed[slot];
    const size_t group_bytes = p.group_bytes ? p.group_bytes(w.cols) : w.row_bytes * p.group;
    p.gemm(w.packed + r0 / p.group * group_bytes, group_bytes, r1 - r0, act, arb, n, y + r0, w.rows,
           w.cols);
  } else {
    k_->gemm[slot](w.row(r0), w.row_bytes, r1 - r0, act, arb, n, y + r0, w.rows, w.cols);
  }
}

// The experts of one MoE layer: every input prepared in one job (an input shared by
// consecutive weights, like an expert's gate and up, once), then every weight's rows in
// one job. Per row the same kernels as matmul, so the results are matmul's, bit for bit.
void CpuBackend::matmul_grouped(const WeightView* const* ws, const DevicePtr<const float>* xs,
                                const int* ns, const DevicePtr<float>* ys, int count) {
  if (count <= 0) return;
  const int64_t cols = ws[0]->cols;
  const ActFormat fmt = cpu::act_format_for(ws[0]->type);
  bool uniform = !reference_;
  for (int j = 0; j < count && uniform; ++j) {
    const int slot = cpu::kernel_slot(ws[j]->type);
    uniform = slot >= 0 && k_->gemm[slot] && ws[j]->cols == cols &&
              cpu::act_format_for(ws[j]->type) == fmt;
  }
  // Products of several rows that read rearranged activations must agree on the layout.
  const cpu::Kernels::Packed* tiled = nullptr;
  for (int j = 0; j < count && uniform; ++j) {
    const cpu::Kernels::Packed* p = ns[j] > 1 ? tiles_of(*ws[j]) : nullptr;
    if (p && tiled && p->tiles != tiled->tiles) uniform = false;
    if (p) tiled = p;
  }
  if (!uniform) {
    Backend::matmul_grouped(ws, xs, ns, ys, count);
    return;
  }
  const size_t arb = cpu::act_row_bytes(fmt, cols);
  // Where each weight's prepared rows start in the activation buffer.
  thread_local std::vector<int> first;
  thread_local std::vector<const float*> row_src;  // the f32 row behind each prepared row
  first.resize(count);
  row_src.clear();
  for (int j = 0; j < count; ++j) {
    if (j > 0 && xs[j].get() == xs[j - 1].get() && ns[j] == ns[j - 1]) {
      first[j] = first[j - 1];
      continue;
    }
    first[j] = static_cast<int>(row_src.size());
    for (int i = 0; i < ns[j]; ++i) row_src.push_back(xs[j].get() + i * cols);
  }
  const int rows_in = static_cast<int>(row_src.size());
  uint8_t* act = act_buffer(arb * std::max(rows_in, 1));
  const cpu::QuantizeFn quant = k_->quantize[static_cast<int>(fmt)];
  const float* const* src = row_src.data();
  pool_.run_sized(rows_in, double(rows_in) * cols * 8,
                  [&](int i, int) { quant(src[i], act + i * arb, cols); });
  // Per weight, its rearranged rows in the tiles buffer (one rearrangement per input), or
  // kNone where its product reads the rows as they are.
  constexpr size_t kNone = ~size_t(0);
  thread_local std::vector<size_t> tile_at;
  tile_at.assign(count, kNone);
  uint8_t* tiles = nullptr;
  if (tiled) {
    size_t total = 0;
    for (int j = 0; j < count; ++j) {
      if (ns[j] <= 1 || !tiles_of(*ws[j])) continue;
      if (j > 0 && first[j] == first[j - 1] && tile_at[j - 1] != kNone) {
        tile_at[j] = tile_at[j - 1];
        continue;
      }
      tile_at[j] = total;
      total += (tiled->tiles_bytes(ns[j], cols) + 63) / 64 * 64;
    }
    tiles = tiles_buffer(total);
    for (int j = 0; j < count; ++j) {
      if (tile_at[j] != kNone && (j == 0 || tile_at[j] != tile_at[j - 1]))
        tiled->tiles(act + first[j] * arb, arb, ns[j], cols, tiles + tile_at[j]);
    }
  }

  double work = 0;
  for (int j = 0; j < count; ++j) work += double(ws[j]->rows) * cols * ns[j];
  thread_local std::vector<RowTask> tasks;
  // (The experts' products keep the finest split: their shapes were not timed with a floor.)
  split_rows(ws, ns, count, pool_.size(), 0, tasks);
  const RowTask* tk = tasks.data();
  const int* fr = first.data();
  const size_t* tat = tile_at.data();  // thread_local: the workers read the caller's
  pool_.run_sized(static_cast<int>(tasks.size()), work, [&](int t, int) {
    const RowTask& task = tk[t];
    const size_t at = tat[task.j];
    if (at != kNone) {
      gemm_rows(*ws[task.j], task.r0, task.r1, tiles + at, 0, ns[task.j], ys[task.j].get());
    } else {
      gemm_rows(*ws[task.j], task.r0, task.r1, act + fr[task.j] * arb, arb, ns[task.j],
                ys[task.j].get());
    }
  });
}

size_t CpuBackend::packed_bytes(const WeightView& w) const {
  const int slot = cpu::kernel_slot(w.type);
  if (reference_ || slot < 0) return 0;
  const cpu::Kernels::Packed& p = k_->packed[slot];
  // Chunks of matmul_multi are multiples of kMaxPackGroup rows: a group must divide it.
  if (p.group == 0 || kMaxPackGroup % p.group != 0 || w.rows % p.group != 0) return 0;
  return group_bytes(p, w) * static_cast<size_t>(w.rows / p.group);
}

size_t CpuBackend::group_bytes(const cpu::Kernels::Packed& p, const WeightView& w) {
  return p.group_bytes ? p.group_bytes(w.cols) : w.row_bytes * p.group;
}

void CpuBackend::pack_into(const WeightView& w, uint8_t* dst) {
  const cpu::Kernels::Packed& p = k_->packed[cpu::kernel_slot(w.type)];
  const size_t gb = group_bytes(p, w);
  pool_.run_sized(
      static_cast<int>(w.rows / p.group), double(w.rows) * w.row_bytes,
      [&](int g, int) { p.pack(w.row(int64_t(g) * p.group), w.row_bytes, w.cols, dst + g * gb); });
}

std::unique_ptr<DeviceBuffer> CpuBackend::pack_weight(const WeightView& w) {
  const size_t bytes = packed_bytes(w);
  if (!bytes) return nullptr;
  auto out = alloc(bytes);
  pack_into(w, out->as<uint8_t>().get());
  return out;
}

void CpuBackend::matmul_reference(const WeightView& w, const float* x, int n, float* y) {
  const int64_t n_chunks = std::min<int64_t>(w.rows, pool_.size() * 4);
  pool_.run(static_cast<int>(n_chunks), [&](int t, int) {
    std::vector<float> row(w.cols);
    const int64_t r0 = w.rows * t / n_chunks, r1 = w.rows * (t + 1) / n_chunks;
    for (int64_t r = r0; r < r1; ++r) {
      format::dequantize_row(w.type, w.row(r), row.data(), w.cols);
      for (int i = 0; i < n; ++i) {
        double s = 0;
        for (int64_t c = 0; c < w.cols; ++c) s += static_cast<double>(row[c]) * x[i * w.cols + c];
        y[i * w.rows + r] = static_cast<float>(s);
      }
    }
  });
}

void CpuBackend::get_rows(const WeightView& table, DevicePtr<const int32_t> ids_d, int n,
                          DevicePtr<float> out_d) {
  const int32_t* ids = ids_d.get();
  float* out = out_d.get();
  for (int i = 0; i < n; ++i) {
    if (ids[i] < 0 || ids[i] >= table.rows) {
      throw std::out_of_range("token id " + std::to_string(ids[i]) + " outside the vocabulary");
    }
    format::dequantize_row(table.type, table.row(ids[i]), out + i * table.cols, table.cols);
  }
}

void CpuBackend::rms_norm(DevicePtr<const float> x_d, DevicePtr<const float> w_d, int n, int dim,
                          float eps, DevicePtr<float> y_d) {
  k_->rms_norm(x_d.get(), w_d.get(), n, dim, eps, y_d.get());
}

namespace {

// Every field of RopeParams: a field added there must be compared here.
static_assert(sizeof(RopeParams) == 9 * 4, "same_rope compares every field of RopeParams");
bool same_rope(const RopeParams& a, const RopeParams& b) {
  return a.style == b.style && a.n_dims == b.n_dims && a.freq_base == b.freq_base &&
         a.freq_scale == b.freq_scale && a.ext_factor == b.ext_factor &&
         a.attn_factor == b.attn_factor && a.beta_fast == b.beta_fast &&
         a.beta_slow == b.beta_slow && a.n_ctx_orig == b.n_ctx_orig;
}

// cos and sin (times mscale) of each rotated pair's angle at each position of a pass: the
// same for the Q and K of every layer, so computed by the pass's first rope() and looked up
// by the rest (two tables: gemma's sliding-window layers alternate with other angles). Per
// pass that was 2 x layers x positions x n_dims / 2 calls of sin and cos.
struct RopeAngles {
  std::vector<int32_t> pos;
  RopeParams params;
  // Position i, pair j < n_dims / 2: cs[i * n_dims + j] = cos, cs[i * n_dims + n_dims / 2 + j] =
  // sin (cosines apart from sines: rope() reads them four pairs at a time).
  std::vector<float> cs;
};

const float* rope_angles(const int32_t* pos, int n, const RopeParams& p) {
  // Per thread: sessions on different threads share the backend.
  thread_local RopeAngles tables[2];
  thread_local int next = 0;
  for (const RopeAngles& t : tables) {
    if (same_rope(t.params, p) && t.pos.size() == size_t(n) &&
        std::equal(pos, pos + n, t.pos.begin())) {
      return t.cs.data();
    }
  }
  RopeAngles& t = tables[next];
  next ^= 1;
  t.pos.assign(pos, pos + n);
  t.params = p;
  const int n_dims = p.n_dims;
  t.cs.resize(size_t(n) * n_dims);
  const float theta_scale = std::pow(p.freq_base, -2.0f / n_dims);
  const YarnCorrDims corr = p.ext_factor != 0 ? yarn_corr_dims(p) : YarnCorrDims{};
  const float mscale = rope_mscale(p);
  for (int i = 0; i < n; ++i) {
    float* cs = t.cs.data() + size_t(i) * n_dims;
    // Angles by repeated multiplication in float, as llama.cpp computes them.
    float theta = static_cast<float>(pos[i]);
    for (int d = 0; d < n_dims; d += 2) {
      float a = p.freq_scale * theta;
      if (p.ext_factor != 0) {
        const float mix = yarn_ramp(corr, d) * p.ext_factor;
        a = a * (1 - mix) + theta * mix;
      }
      cs[d / 2] = std::cos(a) * mscale;
      cs[n_dims / 2 + d / 2] = std::sin(a) * mscale;
      theta *= theta_scale;
    }
  }
  return t.cs.data();
}

}  // namespace

void CpuBackend::rope(DevicePtr<float> x_d, int n, int n_heads, int head_dim,
                      DevicePtr<const int32_t> pos_d, const RopeParams& p) {
  float* x = x_d.get();
  const int n_dims = p.n_dims, half = n_dims / 2;
  const bool neox = p.style != RopeStyle::Normal;
  const float* angles = rope_angles(pos_d.get(), n, p);
  for (int i = 0; i < n; ++i) {
    const float* cosines = angles + size_t(i) * n_dims;
    const float* sines = cosines + half;
    for (int h = 0; h < n_heads; ++h) {
      float* v = x + (static_cast<size_t>(i) * n_heads + h) * head_dim;
      int j = 0;
      if (neox) {
        // Pair j is (j, j + half): four pairs per step in 4-lane vectors (SSE2, NEON), each
        // lane the scalar loop's arithmetic, so the results are its own. Scalar, this loop was
        // 1.1 % of a 16-token pass's samples on the bundled model, the other threads waiting.
        for (; j + 4 <= half; j += 4) {
          F32x4 c, s, x0, x1;
          std::memcpy(&c, cosines + j, sizeof c);
          std::memcpy(&s, sines + j, sizeof s);
          std::memcpy(&x0, v + j, sizeof x0);
          std::memcpy(&x1, v + j + half, sizeof x1);
          const F32x4 y0 = x0 * c - x1 * s, y1 = x0 * s + x1 * c;
          std::memcpy(v + j, &y0, sizeof y0);
          std::memcpy(v + j + half, &y1, sizeof y1);
        }
      }
      for (; j < half; ++j) {
        const float c = cosines[j], s = sines[j];
        const int a = neox ? j : 2 * j;
        const int b = neox ? j + half : 2 * j + 1;
        const float x0 = v[a], x1 = v[b];
        v[a] = x0 * c - x1 * s;
        v[b] = x0 * s + x1 * c;
      }
    }
  }
}

void CpuBackend::swiglu(DevicePtr<float> gate_d, DevicePtr<const float> up_d, int n, int dim) {
  float* gate = gate_d.get();
  const float* up = up_d.get();
  const size_t count = static_cast<size_t>(n) * dim;
  // On the pool: an exp per element is ~8 % of a 16-token pass of a 1.5B on one thread (perf),
  // and every element's result is the same whichever thread computes it.
  constexpr size_t kChunk = 4096;
  const int chunks = static_cast<int>((count + kChunk - 1) / kChunk);
  const auto silu_mul = k_->silu_mul;
  pool_.run_sized(chunks, double(count) * 16, [&](int c, int) {
    const size_t end = std::min(count, (c + 1) * kChunk);
    if (silu_mul) return silu_mul(gate + c * kChunk, up + c * kChunk, end - c * kChunk);
    for (size_t i = c * kChunk; i < end; ++i) {
      const float g = gate[i];
      gate[i] = g / (1.0f + std::exp(-g)) * up[i];
    }
  });
}

namespace {

// x[i] += y[i] for i < count, four at a time: GCC's -O2 leaves the plain loop scalar (its
// pointers might overlap). The same additions, so the same sums.
void add_into(float* x, const float* y, size_t count) {
  size_t i = 0;
  for (; i + 4 <= count; i += 4) {
    F32x4 a, b;
    std::memcpy(&a, x + i, sizeof a);
    std::memcpy(&b, y + i, sizeof b);
    a += b;
    std::memcpy(x + i, &a, sizeof a);
  }
  for (; i < count; ++i) x[i] += y[i];
}

}  // namespace

void CpuBackend::add_bias(DevicePtr<float> x_d, DevicePtr<const float> b_d, int n, int dim) {
  for (int i = 0; i < n; ++i) add_into(x_d.get() + static_cast<size_t>(i) * dim, b_d.get(), dim);
}

void CpuBackend::add(DevicePtr<float> x_d, DevicePtr<const float> y_d, size_t count) {
  add_into(x_d.get(), y_d.get(), count);
}

void CpuBackend::gather_rows(DevicePtr<const float> x_d, DevicePtr<const int32_t> rows_d, int n,
                             int dim, DevicePtr<float> out_d) {
  const int32_t* rows = rows_d.get();
  for (int i = 0; i < n; ++i) {
    std::memcpy(out_d.get() + static_cast<size_t>(i) * dim,
                x_d.get() + static_cast<size_t>(rows[i]) * dim, dim * sizeof(float));
  }
}

void CpuBackend::scatter_add_rows(DevicePtr<const float> x_d, DevicePtr<const int32_t> rows_d,
                                  DevicePtr<const float> w_d, int n, int dim,
                                  DevicePtr<float> y_d) {
  const int32_t* rows = rows_d.get();
  const float* w = w_d.get();
  for (int i = 0; i < n; ++i) {
    const float* xr = x_d.get() + static_cast<size_t>(i) * dim;
    float* yr = y_d.get() + static_cast<size_t>(rows[i]) * dim;
    for (int c = 0; c < dim; ++c) yr[c] += w[i] * xr[c];
  }
}

void CpuBackend::softmax(float* x, int n, int dim) {
  for (int i = 0; i < n; ++i) {
    float* r = x + static_cast<size_t>(i) * dim;
    float mx = -INFINITY;
    for (int c = 0; c < dim; ++c) mx = std::max(mx, r[c]);
    double sum = 0;
    for (int c = 0; c < dim; ++c) {
      r[c] = std::exp(r[c] - mx);
      sum += r[c];
    }
    const float inv = static_cast<float>(1.0 / sum);
    for (int c = 0; c < dim; ++c) r[c] *= inv;
  }
}

std::unique_ptr<KvStorage> CpuBackend::create_kv(const KvLayout& layout) {
  return std::make_unique<cpu::CpuKvStorage>(layout,
                                             k_->quantize[static_cast<int>(cpu::ActFormat::F16)]);
}

void CpuBackend::attention(KvStorage& kv_base, const AttentionArgs& args) {
  auto& kv = static_cast<cpu::CpuKvStorage&>(kv_base);
  // Host views of the arguments (host memory is this backend's memory).
  struct {
    const float* q;
    int n, n_heads, layer, kv_len;
    const int32_t* q_pos;
    const uint8_t* mask;
    float scale;
    float* out;
  } a{args.q.get(),     args.n,          args.n_heads, args.layer,    args.kv_len,
      args.q_pos.get(), args.mask.get(), args.scale,   args.out.get()};
  const KvLayout& L = kv.layout();
  const int hd = L.head_dim;
  const int group = a.n_heads / L.n_kv_heads;  // query heads per KV head (GQA)
  const int q_dim = a.n_heads * hd;
  const cpu::DotFn dot16 = k_->dot[cpu::kernel_slot(GgmlType::F16)];
  const cpu::QuantizeFn to_f16 = k_->quantize[static_cast<int>(ActFormat::F16)];

  const double work = double(a.n) * a.n_heads * hd * 2 * (a.kv_len);
  // Soft-capped scores and sliding windows (gemma) take the generic loop below.
  if (k_->attend && hd % 8 == 0 && hd <= 256 && args.softcap == 0 && args.window == 0) {
    // Tasks of query rows x one KV head's group of query heads: the kernel converts each
    // cached key and value once per task, so a task takes as many rows as keep every thread
    // busy (a 16-row pass of a 2-KV-head model on 2 threads: 2 tasks of 16 rows, where tasks
    // of 4 rows converted the whole cache 8 times per layer).
    const int row_splits = std::max(1, (pool_.size() + L.n_kv_heads - 1) / L.n_kv_heads);
    const int kRowsPerTask = (a.n + row_splits - 1) / row_splits;
    thread_local std::vector<int> limit;
    limit.resize(a.n);
    for (int i = 0; i < a.n; ++i) limit[i] = a.mask ? a.kv_len : std::min(a.kv_len, a.q_pos[i] + 1);
    const int row_blocks = (a.n + kRowsPerTask - 1) / kRowsPerTask;
    const int* lim = limit.data();
    pool_.run_sized(row_blocks * L.n_kv_heads, work, [&](int task, int) {
      const int kvh = task % L.n_kv_heads, r0 = task / L.n_kv_heads * kRowsPerTask;
      cpu::AttentionTask t;
      t.k = kv.keys(a.layer, kvh);
      t.k_block_stride = kv.key_block_stride();
      t.v = kv.values(a.layer, kvh);
      t.kv_stride = hd;
      t.head_dim = hd;
      t.heads = group;
      t.rows = std::min(kRowsPerTask, a.n - r0);
      t.q = a.q + static_cast<size_t>(r0) * q_dim + kvh * group * hd;
      t.out = a.out + static_cast<size_t>(r0) * q_dim + kvh * group * hd;
      t.q_stride = q_dim;
      t.limit = lim + r0;
      t.mask = a.mask ? a.mask + static_cast<size_t>(r0) * a.kv_len : nullptr;
      t.mask_stride = a.kv_len;
      t.scale = a.scale;
      thread_local std::vector<uint8_t> scratch;  // apart from act_buffer: sizes stay stable
      t.scratch = reinterpret_cast<float*>(
          aligned_part(scratch, cpu::attention_scratch_floats(t) * sizeof(float)));
      k_->attend(t);
    });
    return;
  }
  pool_.run_sized(a.n * a.n_heads, work, [&](int task, int) {
    const int i = task / a.n_heads, h = task % a.n_heads;
    const int kvh = h / group;
    // Thread-local: small jobs run on the caller, which may be any session's thread.
    thread_local std::vector<float> scratch;
    scratch.resize(a.kv_len + hd);
    float* scores = scratch.data();
    // The query is rounded to f16 to meet the f16 keys, as llama.cpp's f16 cache does.
    uint16_t q16[1024], key16[1024];  // the query; one key gathered from its block
    to_f16(a.q + static_cast<size_t>(i) * q_dim + h * hd, q16, hd);
    const uint8_t* mask = a.mask ? a.mask + static_cast<size_t>(i) * a.kv_len : nullptr;
    const int limit = mask ? a.kv_len : std::min(a.kv_len, a.q_pos[i] + 1);
    // A sliding window hides the slots more than window-1 positions back: start after them.
    const int first = args.window > 0 ? std::max(0, a.q_pos[i] - args.window + 1) : 0;
    const float cap = args.softcap, inv_cap = cap > 0 ? 1.0f / cap : 0.0f;

    float mx = -INFINITY;
    for (int j = first; j < limit; ++j) {
      if (mask && !mask[j]) {
        scores[j] = -INFINITY;
        continue;
      }
      const uint16_t* kb = kv.key_column(a.layer, kvh, j);
      for (int d = 0; d < hd; ++d) key16[d] = kb[d * cpu::kKeyBlock];
      scores[j] = dot16(key16, q16, hd) * a.scale;
      if (cap > 0) scores[j] = std::tanh(scores[j] * inv_cap) * cap;  // as ggml: scale, tanh, scale
      mx = std::max(mx, scores[j]);
    }
    float* out = a.out + static_cast<size_t>(i) * q_dim + h * hd;
    std::fill(out, out + hd, 0.0f);
    if (mx == -INFINITY) return;  // nothing visible: zero output
    double sum = 0;
    for (int j = first; j < limit; ++j) {
      scores[j] = scores[j] == -INFINITY ? 0.0f : std::exp(scores[j] - mx);
      sum += scores[j];
    }
    const float inv = static_cast<float>(1.0 / sum);
    for (int j = first; j < limit; ++j) {
      if (scores[j] != 0) k_->axpy_f16(scores[j] * inv, kv.values(a.layer, kvh) + j * hd, out, hd);
    }
  });
}

}  // namespace leapfrog
