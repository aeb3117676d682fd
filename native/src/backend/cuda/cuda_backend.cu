// The CUDA implementation of Backend (libleapfrog_cuda.so): device memory, one stream per
// calling thread (two sessions on two threads may share the backend), weights uploaded and
// repacked once, the whole pass enqueued without a host round trip (recorded, and replayed
// as a CUDA graph when it repeats: pass_recorder.h); download() waits.
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "backend/backend.h"
#include "backend/cuda/cuda_abi.h"
#include "backend/cuda/cuda_common.cuh"
#include "backend/cuda/kernels.h"
#include "backend/cuda/pass_recorder.h"
#include "backend/cuda/wlayout.h"

namespace leapfrog::cuda {

namespace {

std::string gib(size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", double(bytes) / (1024.0 * 1024 * 1024));
  return buf;
}

void* device_alloc(size_t bytes) {
  void* p = nullptr;
  const cudaError_t e = cudaMalloc(&p, std::max<size_t>(bytes, 256));
  if (e == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    size_t free_b = 0, total_b = 0;
    (void)cudaMemGetInfo(&free_b, &total_b);
    throw std::runtime_error("CUDA out of memory: needs " + gib(bytes) + " GiB, " + gib(free_b) +
                             " GiB free");
  }
  if (e != cudaSuccess) throw_cuda(e, "cudaMalloc");
  return p;
}

class CudaBuffer final : public DeviceBuffer {
 public:
  explicit CudaBuffer(size_t bytes) : p_(device_alloc(bytes)), bytes_(bytes) {}
  ~CudaBuffer() override {
    note_free();
    (void)cudaFree(p_);
  }
  size_t bytes() const override { return bytes_; }

 protected:
  void* raw() const override { return p_; }

 private:
  void* p_;
  size_t bytes_;
};

// Device scratch that only grows. Taken when an op is recorded: a pass recorded but not yet
// run may still point at the old allocation, so it goes to the graveyard (freed at the next
// pass's start) rather than being freed now.
struct Scratch {
  void* p = nullptr;
  size_t cap = 0;
  void* get(size_t bytes, Graveyard& graveyard) {
    if (bytes > cap) {
      if (p) graveyard.bury_device(p);
      p = nullptr;
      cap = 0;
      p = device_alloc(bytes);
      cap = bytes;
    }
    return p;
  }
  void release() {
    if (p) note_free(), (void)cudaFree(p);
    p = nullptr;
    cap = 0;
  }
  ~Scratch() { release(); }
};

// A value's bytes as words of a recorded launch (pass_recorder.h).
template <class T>
std::array<uint64_t, (sizeof(T) + 7) / 8> words_of(const T& v) {
  static_assert(std::is_trivially_copyable_v<T>);
  std::array<uint64_t, (sizeof(T) + 7) / 8> w{};
  std::memcpy(w.data(), &v, sizeof v);
  return w;
}
uint64_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// Tags of the recorded launches (the first word of each).
enum Op : uint64_t {
  kOpMatmulFloat = 1,
  kOpQuantizeAct,
  kOpMmq,
  kOpGetRows,
  kOpRmsNorm,
  kOpRope,
  kOpSwiglu,
  kOpAddBias,
  kOpAdd,
  kOpAttention,
  kOpKvStore,
  kOpKvMove,
  kOpAddRmsNorm,
  kOpLayerNorm,
  kOpGelu,
  kOpGeglu,
  kOpScale,
  kOpSoftcap,
  kOpGatherRows,
  kOpScatterAddRows,
};

bool graphs_enabled() {
  const char* e = std::getenv("LEAPFROG_CUDA_GRAPHS");
  return !(e && std::strcmp(e, "0") == 0);
}

std::atomic<uint64_t> next_backend_id{1};

}  // namespace

class CudaBackend;

class CudaKv final : public KvStorage {
 public:
  CudaKv(CudaBackend& be, const KvLayout& layout);
  ~CudaKv() override {
    note_free();
    (void)cudaFree(k_);
    (void)cudaFree(v_);
  }
  const KvLayout& layout() const override { return layout_; }
  void store(int layer, int pos, int n, DevicePtr<const float> k,
             DevicePtr<const float> v) override;
  void move(int from, int to) override;

  const uint16_t* k(int layer) const { return k_ + size_t(layer) * layer_stride(); }
  const uint16_t* v(int layer) const { return v_ + size_t(layer) * layer_stride(); }
  int chunk() const { return chunk_; }

 private:
  size_t layer_stride() const { return size_t(layout_.n_ctx) * layout_.kv_dim(); }
  CudaBackend& be_;
  KvLayout layout_;
  uint16_t* k_ = nullptr;
  uint16_t* v_ = nullptr;
  int chunk_;
};

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int device) : device_(device), id_(next_backend_id++) {
    LF_CUDA(cudaSetDevice(device_));
    cudaDeviceProp prop;
    LF_CUDA(cudaGetDeviceProperties(&prop, device_));
    name_ = std::string("cuda:") + prop.name;
    sms_ = prop.multiProcessorCount;
    (void)ctx();
    LF_CUDA(cudaMalloc(&gelu_table_, 65536 * sizeof(uint16_t)));
    launch_gelu_table(gelu_table_, stream());
  }
  ~CudaBackend() override {
    if (gelu_table_) (void)cudaFree(gelu_table_);
    for (auto& [tid, c] : ctxs_) {
      c->pass.reset();
      if (c->stream) (void)cudaStreamDestroy(c->stream);
    }
  }

  std::string name() const override { return name_; }
  int threads() const override { return 1; }

  // ---- memory
  std::unique_ptr<DeviceBuffer> alloc(size_t bytes) override {
    (void)ctx();
    return std::make_unique<CudaBuffer>(bytes);
  }
  void upload(DevicePtr<void> dst, const void* src, size_t bytes) override {
    ctx().pass->upload(dst.get(), src, bytes);
  }
  // Inside a pass (the MoE router's logits, model/moe_ffn.cpp) the launches that produce
  // `src` may still be on the tape: they are issued first, and the rest of the pass runs as
  // plain launches (pass_recorder.h, interrupt). host_address() needs no such rule: device
  // memory has no host address here (the default, null), so callers download.
  void download(void* dst, DevicePtr<const void> src, size_t bytes) override {
    Ctx& c = ctx();
    c.pass->interrupt();
    if (bytes) LF_CUDA(cudaMemcpyAsync(dst, src.get(), bytes, cudaMemcpyDeviceToHost, c.stream));
    LF_CUDA(cudaStreamSynchronize(c.stream));
  }
  using Backend::download;
  using Backend::upload;

  ResidentWeight load_weight(const WeightView& file, WeightUse use) override {
    Ctx& c = ctx();
    ResidentWeight r;
    r.view = file;
    r.view.packed = nullptr;
    const size_t raw_bytes = file.row_bytes * size_t(file.rows);
    const QKind kind = qkind_of(file.type);
    const bool float_type =
        file.type == GgmlType::F32 || file.type == GgmlType::F16 || file.type == GgmlType::BF16;
    if (!float_type && kind == QKind::None) {
      // Every type the model loader accepts has a layout here; this guards the others.
      throw std::invalid_argument("cuda: tensor type " +
                                  std::to_string(static_cast<uint32_t>(file.type)) +
                                  " is not supported; use --backend cpu");
    }
    if (use == WeightUse::Lookups || float_type) {
      // The file's bytes as they are (lookups dequantize rows; float products read rows).
      auto mem = std::make_unique<CudaBuffer>(raw_bytes);
      LF_CUDA(cudaMemcpyAsync(mem->as<uint8_t>().get(), file.data, raw_bytes,
                              cudaMemcpyHostToDevice, c.stream));
      LF_CUDA(cudaStreamSynchronize(c.stream));
      r.view.data = mem->as<uint8_t>().get();
      if (use == WeightUse::Products) r.view.packed = r.view.data;
      r.memory = std::move(mem);
      return r;
    }
    // Quantized products: the file's bytes to the device once, repacked there.
    const QLayout L = make_layout(kind, file.rows, file.cols);
    auto mem = std::make_unique<CudaBuffer>(L.total);
    uint8_t* raw = static_cast<uint8_t*>(c.load_temp.get(raw_bytes, c.pass->graveyard()));
    LF_CUDA(cudaMemcpyAsync(raw, file.data, raw_bytes, cudaMemcpyHostToDevice, c.stream));
    launch_repack(L, raw, file.row_bytes, mem->as<uint8_t>().get(), c.stream);
    LF_CUDA(cudaStreamSynchronize(c.stream));
    r.view.data = nullptr;  // no row lookups on a product weight
    r.view.packed = mem->as<uint8_t>().get();
    r.memory = std::move(mem);
    return r;
  }

  size_t free_memory() const override {
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) return 0;
    return free_b;
  }

  // ---- passes
  void begin_pass(const PassShape& shape) override {
    Ctx& c = ctx();
    if (c.load_temp.p) {  // the weights are loaded: give their staging memory back
      LF_CUDA(cudaStreamSynchronize(c.stream));
      c.load_temp.release();
    }
    // A token tree's mask is sized by the context: such passes are never replayed.
    c.pass->begin(shape.kv_len - shape.n, !shape.tree);
  }
  void end_pass() override { ctx().pass->end(); }

  std::vector<std::pair<std::string, uint64_t>> counters() override {
    const PassRecorder::Counters k = ctx().pass->counters();
    return {{"passes_plain", k.eager},
            {"graphs_captured", k.captured},
            {"graph_replays", k.replayed},
            {"graph_captures_failed", k.capture_failed},
            {"passes_interrupted", k.interrupted},
            {"graphs_forgotten", k.forgotten}};
  }

  // ---- ops
  void matmul(const WeightView& w, DevicePtr<const float> x, int n, DevicePtr<float> y) override {
    const WeightView* ws[1] = {&w};
    matmul_multi(ws, &y, 1, x, n);
  }

  void matmul_multi(const WeightView* const* ws, const DevicePtr<float>* ys, int count,
                    DevicePtr<const float> x, int n) override {
    if (count <= 0 || n <= 0) return;
    Ctx& c = ctx();
    const QKind k0 = qkind_of(ws[0]->type);
    bool shared = k0 != QKind::None;
    for (int j = 1; j < count && shared; ++j) {
      const QKind kj = qkind_of(ws[j]->type);
      shared =
          kj != QKind::None && ws[j]->cols == ws[0]->cols && kquant_acts(kj) == kquant_acts(k0);
    }
    if (!shared && count > 1) {
      for (int j = 0; j < count; ++j) matmul_multi(&ws[j], &ys[j], 1, x, n);
      return;
    }
    const WeightView& w0 = *ws[0];
    Graveyard& gy = c.pass->graveyard();
    const float* xp = x.get();
    if (k0 == QKind::None) {
      if (!w0.data) throw std::invalid_argument("cuda matmul: weight not resident");
      float* xr = w0.type == GgmlType::F32
                      ? nullptr
                      : static_cast<float*>(c.act_f.get(size_t(n) * w0.cols * sizeof(float), gy));
      const GgmlType t = w0.type;
      const uint8_t* wd = w0.data;
      const int64_t rows = w0.rows, cols = w0.cols;
      float* yp = ys[0].get();
      c.pass->add({kOpMatmulFloat, uint64_t(t), word(wd), uint64_t(rows), uint64_t(cols), word(xp),
                   uint64_t(n), word(yp), word(xr)},
                  [=](cudaStream_t s) {
                    launch_matmul_float(t, wd, rows, cols, xp, n, yp, size_t(rows), xr, s);
                  });
      return;
    }
    // Quantize the activations once for all weights (same inputs, same format).
    const ActQ8 act = record_quantize(xp, n, w0.cols, kquant_acts(k0));
    record_mmq(ws, ys, count, act, groups_of(w0.cols), 0, n);
  }

  // The used experts of a MoE layer (model/moe_ffn.cpp): their inputs are slices of one
  // gathered matrix, quantized here in one launch; each expert's products then read their
  // rows from it (rows starting anywhere in a tile of 8: mmq stores from `first_token` on),
  // and an expert's gate and up share a launch. Per row the arithmetic is matmul's, so the
  // results are bit-identical to one matmul per expert. The MoE pass is launch-bound (~80
  // experts a layer at 16 rows): this halves its launches.
  void matmul_grouped(const WeightView* const* ws, const DevicePtr<const float>* xs, const int* ns,
                      const DevicePtr<float>* ys, int count) override {
    if (count <= 0) return;
    const int64_t cols = ws[0]->cols;
    const QKind k0 = qkind_of(ws[0]->type);
    bool one_matrix = k0 != QKind::None;
    const float* base = nullptr;
    for (int j = 0; j < count; ++j) {
      const QKind kj = qkind_of(ws[j]->type);
      one_matrix = one_matrix && kj != QKind::None && ws[j]->cols == cols &&
                   kquant_acts(kj) == kquant_acts(k0);
      if (ns[j] > 0 && (!base || xs[j].get() < base)) base = xs[j].get();
    }
    if (!base) return;  // no rows at all
    // The inputs must tile one range of rows exactly (sorted, each starting where the one
    // before ends; an input given twice, like gate's and up's, counts once): then every row
    // quantized below is one of the inputs' own, whatever memory lies between buffers.
    thread_local std::vector<std::pair<std::ptrdiff_t, int>> spans;
    spans.clear();
    for (int j = 0; j < count && one_matrix; ++j) {
      if (ns[j] > 0) spans.emplace_back(xs[j].get() - base, ns[j]);
    }
    std::sort(spans.begin(), spans.end());
    spans.erase(std::unique(spans.begin(), spans.end()), spans.end());
    int64_t rows = 0;
    for (const auto& [at, n] : spans) {
      if (at != rows * cols) one_matrix = false;
      rows += n;
    }
    if (!one_matrix || rows > (int64_t(1) << 20)) {
      Backend::matmul_grouped(ws, xs, ns, ys, count);
      return;
    }
    const ActQ8 act = record_quantize(base, int(rows), cols, kquant_acts(k0));
    for (int j = 0; j < count;) {
      int m = 1;  // weights over the same rows (an expert's gate and up) go together
      while (j + m < count && m < 3 && xs[j + m].get() == xs[j].get() && ns[j + m] == ns[j]) ++m;
      if (ns[j] > 0) {
        const int first = int((xs[j].get() - base) / cols);
        record_mmq(ws + j, ys + j, m, act, groups_of(cols), first, ns[j]);
      }
      j += m;
    }
  }

  static int64_t groups_of(int64_t cols) { return (cols + kGroupK - 1) / kGroupK; }

  // The int8 activations of n rows of x (ActQ8) in this thread's scratch.
  ActQ8 record_quantize(const float* xp, int n, int64_t cols, bool kq) {
    Ctx& c = ctx();
    Graveyard& gy = c.pass->graveyard();
    const int64_t groups = groups_of(cols);
    const int tiles = (n + 7) / 8;
    ActQ8 act;
    act.q = static_cast<uint8_t*>(c.act_q.get(ActQ8::q_bytes(tiles, groups), gy));
    act.s = static_cast<uint32_t*>(c.act_s.get(ActQ8::s_bytes(tiles, groups), gy));
    c.pass->add({kOpQuantizeAct, word(xp), uint64_t(n), uint64_t(cols), uint64_t(groups),
                 uint64_t(kq), word(act.q), word(act.s)},
                [=](cudaStream_t s) { launch_quantize_act(xp, n, cols, groups, kq, act, s); });
    return act;
  }

  // The products of `count` weights over rows [first, first + n) of quantized activations
  // `act` (tiles of 8 rows): weights of one kind and split go out in one launch (at most
  // three), others alone, in launches of at most 64 rows.
  void record_mmq(const WeightView* const* ws, const DevicePtr<float>* ys, int count, ActQ8 act,
                  int64_t groups, int first, int n) {
    Ctx& c = ctx();
    int j = 0;
    while (j < count) {
      std::array<QLayout, 3> L;
      std::array<const uint8_t*, 3> wp{};
      std::array<size_t, 3> ld{};
      int m = 0, ks = 0;
      const int per_launch = n <= 8 ? 1 : 3;  // one-token kernels take one weight each
      for (; j < count && m < per_launch; ++j, ++m) {
        const WeightView& w = *ws[j];
        if (!w.packed) throw std::invalid_argument("cuda matmul: weight not loaded for products");
        const QLayout Lj = make_layout(qkind_of(w.type), w.rows, w.cols);
        const int ksj = mmq_k_split(Lj, sms_);
        if (m > 0 && (Lj.kind != L[0].kind || ksj != ks)) break;
        L[m] = Lj;
        ks = ksj;
        wp[m] = w.packed;
        ld[m] = size_t(w.rows);
      }
      for (int i = 0; i < n;) {
        const int tile = (first + i) / 8, t0 = (first + i) % 8;
        const int rows_here = std::min(64 - t0, n - i), rows_n = t0 + rows_here;
        ActQ8 part;
        part.q = act.q + size_t(tile) * groups * 2048;
        part.s = act.s + size_t(tile) * groups * 64;
        std::array<float*, 3> yp{};
        for (int k = 0; k < m; ++k) yp[k] = ys[j - m + k].get() + size_t(i) * ld[k];
        std::array<uint64_t, 12> ids{};
        for (int k = 0; k < m; ++k) {
          ids[4 * k] = (uint64_t(L[k].kind) << 48) ^ uint64_t(L[k].rows);
          ids[4 * k + 1] = uint64_t(L[k].cols);
          ids[4 * k + 2] = word(wp[k]);
          ids[4 * k + 3] = word(yp[k]) ^ (uint64_t(ld[k]) << 48);
        }
        c.pass->add(
            {kOpMmq, uint64_t(m), uint64_t(ks), word(part.q), word(part.s), uint64_t(rows_n),
             uint64_t(t0)},
            [=](cudaStream_t s) {
              launch_mmq_multi(L.data(), wp.data(), m, part, rows_n, yp.data(), ld.data(), ks, s,
                               t0);
            },
            ids);
        i += rows_here;
      }
    }
  }

  void get_rows(const WeightView& table, DevicePtr<const int32_t> ids, int n,
                DevicePtr<float> out) override {
    if (!table.data) throw std::invalid_argument("cuda get_rows: table not loaded for lookups");
    const GgmlType t = table.type;
    const uint8_t* data = table.data;
    const int64_t rows = table.rows, cols = table.cols;
    const size_t rb = table.row_bytes;
    const int32_t* ip = ids.get();
    float* op = out.get();
    record({kOpGetRows, uint64_t(t), word(data), uint64_t(rows), uint64_t(cols), rb, word(ip),
            uint64_t(n), word(op)},
           [=](cudaStream_t s) { launch_get_rows(t, data, rows, cols, rb, ip, n, op, s); });
  }
  // Fusions: in a recorded pass an op may join the launch before it (the residual add and
  // the next norm, the Q/K/V biases, the Q and K rotations). The fused kernels compute what
  // the separate ones do, element for element; outside a pass every op launches alone.
  void rms_norm(DevicePtr<const float> x, DevicePtr<const float> w, int n, int dim, float eps,
                DevicePtr<float> y) override {
    const float* xp = x.get();
    const float* wp = w.get();
    float* yp = y.get();
    Ctx& c = ctx();
    const std::span<const uint64_t> last = c.pass->last();
    if (last.size() == 4 && last[0] == kOpAdd && last[1] == word(xp) &&
        last[3] == uint64_t(n) * uint64_t(dim)) {
      float* xm = const_cast<float*>(xp);
      const float* ap = reinterpret_cast<const float*>(last[2]);
      c.pass->replace_last(
          {kOpAddRmsNorm, word(xm), word(ap), word(wp), uint64_t(n), uint64_t(dim), bits(eps),
           word(yp)},
          [=](cudaStream_t s) { launch_add_rms_norm(xm, ap, wp, n, dim, eps, yp, s); });
      return;
    }
    record({kOpRmsNorm, word(xp), word(wp), uint64_t(n), uint64_t(dim), bits(eps), word(yp)},
           [=](cudaStream_t s) { launch_rms_norm(xp, wp, n, dim, eps, yp, s); });
  }
  void rope(DevicePtr<float> x, int n, int n_heads, int head_dim, DevicePtr<const int32_t> pos,
            const RopeParams& p) override {
    const float theta_scale = std::pow(p.freq_base, -2.0f / p.n_dims);  // as the CPU
    const int32_t* pp = pos.get();
    // Every field of RopeParams is in the words, byte for byte (nine 4-byte fields, no
    // padding: a new field changes the size and stops the build here until it is counted).
    // Two rotations join only when all of these words are equal, so the fused launch applies
    // to the keys exactly the parameters (YaRN, linear scaling, attn_factor) it would alone:
    // one kernel, one code path for both targets.
    static_assert(sizeof(RopeParams) == 9 * 4, "every field of RopeParams belongs in the words");
    const auto pw = words_of(p);
    std::array<uint64_t, 4 + pw.size()> head = {kOpRope, uint64_t(n), uint64_t(head_dim), word(pp)};
    std::copy(pw.begin(), pw.end(), head.begin() + 4);
    RopeTargets tg;
    std::memset(&tg, 0, sizeof tg);
    tg.x[0] = x.get();
    tg.heads[0] = n_heads;
    Ctx& c = ctx();
    const std::span<const uint64_t> last = c.pass->last();
    bool join = false;  // the rotation before, at the same positions, takes this one too
    if (last.size() == head.size() + words_of(tg).size() &&
        std::equal(head.begin(), head.end(), last.begin())) {
      RopeTargets prev;
      std::memcpy(&prev, last.data() + head.size(), sizeof prev);
      if (prev.heads[1] == 0 && prev.x[0] != x.get()) {
        prev.x[1] = x.get();
        prev.heads[1] = n_heads;
        tg = prev;
        join = true;
      }
    }
    const auto more = words_of(tg);
    std::array<uint64_t, head.size() + more.size()> all{};
    std::copy(head.begin(), head.end(), all.begin());
    std::copy(more.begin(), more.end(), all.begin() + head.size());
    PassRecorder::Launch launch = [=](cudaStream_t s) {
      launch_rope(tg, n, head_dim, pp, p, theta_scale, s);
    };
    if (join)
      c.pass->replace_last({}, std::move(launch), all);
    else
      record({}, std::move(launch), all);
  }
  void swiglu(DevicePtr<float> gate, DevicePtr<const float> up, int n, int dim) override {
    float* gp = gate.get();
    const float* up_p = up.get();
    const size_t count = size_t(n) * dim;
    record({kOpSwiglu, word(gp), word(up_p), count},
           [=](cudaStream_t s) { launch_swiglu(gp, up_p, count, s); });
  }
  void add_bias(DevicePtr<float> x, DevicePtr<const float> b, int n, int dim) override {
    BiasTargets bt;
    std::memset(&bt, 0, sizeof bt);
    bt.n = n;
    Ctx& c = ctx();
    const std::span<const uint64_t> last = c.pass->last();
    bool join = false;
    if (last.size() == 1 + words_of(bt).size() && last[0] == kOpAddBias) {
      std::memcpy(&bt, last.data() + 1, sizeof bt);
      // Joined targets must not touch each other's memory (one kernel, no order between them).
      join = bt.n == n && bt.count < 3;
      for (int k = 0; k < bt.count && join; ++k) {
        join = bt.x[k] != x.get() && bt.x[k] != b.get() && bt.b[k] != x.get();
      }
      if (!join) {
        std::memset(&bt, 0, sizeof bt);
        bt.n = n;
      }
    }
    bt.x[bt.count] = x.get();
    bt.b[bt.count] = b.get();
    bt.dim[bt.count] = dim;
    ++bt.count;
    PassRecorder::Launch launch = [=](cudaStream_t s) { launch_add_bias(bt, s); };
    if (join)
      c.pass->replace_last({kOpAddBias}, std::move(launch), words_of(bt));
    else
      record({kOpAddBias}, std::move(launch), words_of(bt));
  }
  void add(DevicePtr<float> x, DevicePtr<const float> y, size_t count) override {
    float* xp = x.get();
    const float* yp = y.get();
    record({kOpAdd, word(xp), word(yp), count},
           [=](cudaStream_t s) { launch_add(xp, yp, count, s); });
  }

  // Mixture of experts: the router's top-k runs on the host (model/moe_ffn.cpp downloads
  // the router logits once per layer), each used expert's product over its gathered rows.
  bool supports_moe() const override { return true; }
  // (A pass that routes downloads mid-pass, so it runs as plain launches from then on; the
  // ops still go through record() so they keep their order with the ones before.)
  void gather_rows(DevicePtr<const float> x, DevicePtr<const int32_t> rows, int n, int dim,
                   DevicePtr<float> out) override {
    const float* xp = x.get();
    const int32_t* rp = rows.get();
    float* op = out.get();
    record({kOpGatherRows, word(xp), word(rp), uint64_t(n), uint64_t(dim), word(op)},
           [=](cudaStream_t s) { launch_gather_rows(xp, rp, n, dim, op, s); });
  }
  void scatter_add_rows(DevicePtr<const float> x, DevicePtr<const int32_t> rows,
                        DevicePtr<const float> weights, int n, int dim,
                        DevicePtr<float> y) override {
    const float* xp = x.get();
    const int32_t* rp = rows.get();
    const float* wp = weights.get();
    float* yp = y.get();
    record({kOpScatterAddRows, word(xp), word(rp), word(wp), uint64_t(n), uint64_t(dim), word(yp)},
           [=](cudaStream_t s) { launch_scatter_add_rows(xp, rp, wp, n, dim, yp, s); });
  }

  // The ops beyond llama's (arch_ops.cu, and attention's softcap and window), checked on
  // the H200 against their definitions (backend_arch_ops_test) and whole starcoder2,
  // granite, phi3 and gemma* models against the CPU (`cuda_device.sh arches`).
  bool supports_arch_ops() const override { return true; }
  // Recorded like the others: the words name the kernel, every pointer (the GELU table
  // included) and every scalar.
  void layer_norm(DevicePtr<const float> x, DevicePtr<const float> w, DevicePtr<const float> b,
                  int n, int dim, float eps, DevicePtr<float> y) override {
    const float* xp = x.get();
    const float* wp = w.get();
    const float* bp = b.get();
    float* yp = y.get();
    record({kOpLayerNorm, word(xp), word(wp), word(bp), uint64_t(n), uint64_t(dim), bits(eps),
            word(yp)},
           [=](cudaStream_t s) { launch_layer_norm(xp, wp, bp, n, dim, eps, yp, s); });
  }
  void gelu(DevicePtr<float> x, size_t count) override {
    float* xp = x.get();
    const uint16_t* table = gelu_table_;
    record({kOpGelu, word(xp), word(table), count},
           [=](cudaStream_t s) { launch_gelu(xp, table, count, s); });
  }
  void geglu(DevicePtr<float> gate, DevicePtr<const float> up, int n, int dim) override {
    float* gp = gate.get();
    const float* up_p = up.get();
    const uint16_t* table = gelu_table_;
    const size_t count = size_t(n) * dim;
    record({kOpGeglu, word(gp), word(up_p), word(table), count},
           [=](cudaStream_t s) { launch_geglu(gp, up_p, table, count, s); });
  }
  void scale(DevicePtr<float> x, size_t count, float f) override {
    float* xp = x.get();
    record({kOpScale, word(xp), count, bits(f)},
           [=](cudaStream_t s) { launch_scale(xp, f, count, s); });
  }
  void softcap(DevicePtr<float> x, size_t count, float cap) override {
    float* xp = x.get();
    record({kOpSoftcap, word(xp), count, bits(cap)},
           [=](cudaStream_t s) { launch_softcap(xp, cap, count, s); });
  }

  std::unique_ptr<KvStorage> create_kv(const KvLayout& layout) override {
    (void)ctx();
    return std::make_unique<CudaKv>(*this, layout);
  }

  void attention(KvStorage& kv_base, const AttentionArgs& args) override {
    auto& kv = static_cast<CudaKv&>(kv_base);
    const KvLayout& L = kv.layout();
    if (args.kv_len <= 0 || args.kv_len > L.n_ctx) {
      throw std::out_of_range("cuda attention: kv_len outside the cache");
    }
    Ctx& c = ctx();
    Graveyard& gy = c.pass->graveyard();
    AttnLaunch a;
    std::memset(&a, 0, sizeof a);  // its padding is part of the recorded words
    a.q = args.q.get();
    a.k = kv.k(args.layer);
    a.v = kv.v(args.layer);
    a.q_pos = args.q_pos.get();
    a.mask = args.mask.get();
    a.out = args.out.get();
    a.n = args.n;
    a.n_heads = args.n_heads;
    a.n_kv_heads = L.n_kv_heads;
    a.head_dim = L.head_dim;
    // In a pass, a causal row sees positions up to its own (q_pos, read on the device), so
    // the launch may cover the whole cache: its words then do not change as the context
    // grows, and the pass replays as a graph (chunks past a row's position are skipped).
    // A mask is laid out by kv_len, which then stays as given.
    a.kv_len = c.pass->active() && !args.mask ? L.n_ctx : args.kv_len;
    a.scale = args.scale;
    a.softcap = args.softcap;
    a.window = args.window;
    a.chunk = kv.chunk();
    const size_t chunks = (size_t(a.kv_len) + a.chunk - 1) / a.chunk;
    const size_t parts = size_t(args.n) * args.n_heads * chunks;
    a.part_o = static_cast<float*>(c.att_o.get(parts * L.head_dim * sizeof(float), gy));
    a.part_ml = static_cast<float2*>(c.att_ml.get(parts * sizeof(float2), gy));
    PassRecorder::Launch launch = [=](cudaStream_t s) { launch_attention(a, s); };
    record({kOpAttention}, std::move(launch), words_of(a));
  }

  // The calling thread's stream. Ops launch through record(), never straight onto this
  // stream: in a recorded pass such a launch would run before the tape's earlier launches
  // (the weights' loading and the KV cache's set-up use it outside passes).
  cudaStream_t stream() { return ctx().stream; }
  PassRecorder& pass() { return *ctx().pass; }

  // One launch of the current pass (or now, outside a pass).
  void record(std::initializer_list<uint64_t> words, PassRecorder::Launch launch,
              std::span<const uint64_t> more = {}) {
    ctx().pass->add(words, std::move(launch), more);
  }

 private:
  struct Ctx {
    cudaStream_t stream = nullptr;
    Scratch act_q, act_s, act_f, att_o, att_ml, load_temp;
    std::unique_ptr<PassRecorder> pass;  // destroyed before the stream
  };

  // The calling thread's stream and scratch (created on its first call).
  Ctx& ctx() {
    thread_local uint64_t cached_id = 0;
    thread_local Ctx* cached = nullptr;
    if (cached_id == id_) return *cached;
    std::lock_guard<std::mutex> lock(mu_);
    auto& slot = ctxs_[std::this_thread::get_id()];
    if (!slot) {
      LF_CUDA(cudaSetDevice(device_));
      auto c = std::make_unique<Ctx>();
      LF_CUDA(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
      c->pass = std::make_unique<PassRecorder>(c->stream, graphs_enabled());
      slot = std::move(c);
    } else {
      LF_CUDA(cudaSetDevice(device_));
    }
    cached_id = id_;
    cached = slot.get();
    return *cached;
  }

  int device_;
  uint64_t id_;
  std::string name_;
  int sms_ = 1;
  uint16_t* gelu_table_ = nullptr;  // 65536 f16 GELU results (arch_ops.cu)
  std::mutex mu_;
  std::unordered_map<std::thread::id, std::unique_ptr<Ctx>> ctxs_;
};

CudaKv::CudaKv(CudaBackend& be, const KvLayout& layout) : be_(be), layout_(layout) {
  const size_t n = size_t(layout.n_layers) * layout.n_ctx * layout.kv_dim();
  k_ = static_cast<uint16_t*>(device_alloc(n * 2));
  try {
    v_ = static_cast<uint16_t*>(device_alloc(n * 2));
  } catch (...) {
    (void)cudaFree(k_);
    throw;
  }
  cudaStream_t st = be_.stream();
  LF_CUDA(cudaMemsetAsync(k_, 0, n * 2, st));
  LF_CUDA(cudaMemsetAsync(v_, 0, n * 2, st));
  // Attention splits the cache into chunks at fixed positions (a function of the cache's
  // size, never of a pass): at most 64 per sequence, at least 64 positions each (32-position
  // chunks measured slower on the H200: more chunks to combine, fixed costs per block).
  chunk_ = 64;
  while (size_t(chunk_) * 64 < size_t(layout.n_ctx)) chunk_ *= 2;
}

void CudaKv::store(int layer, int pos, int n, DevicePtr<const float> k, DevicePtr<const float> v) {
  if (pos < 0 || pos + n > layout_.n_ctx) throw std::out_of_range("KV store past the context");
  if (layer < 0 || layer >= layout_.n_layers) throw std::out_of_range("KV store: bad layer");
  // The pass's own first position is read on the device (the same words every pass).
  PassRecorder& pr = be_.pass();
  const int* pos_dev = pr.active() && pos == pr.first_pos() ? pr.first_pos_device() : nullptr;
  const size_t base = size_t(layer) * layer_stride();
  uint16_t* kd = k_ + base;
  uint16_t* vd = v_ + base;
  const float* kp = k.get();
  const float* vp = v.get();
  const int kv_dim = layout_.kv_dim();
  const int host_pos = pos_dev ? -1 : pos;
  be_.record(
      {kOpKvStore, word(kd), word(vd), word(kp), word(vp), uint64_t(kv_dim), uint64_t(n),
       word(pos_dev), uint64_t(int64_t(host_pos))},
      [=](cudaStream_t s) { launch_kv_store(kd, vd, kp, vp, kv_dim, n, pos_dev, host_pos, s); });
}

void CudaKv::move(int from, int to) {
  if (from == to) return;
  if (from < 0 || to < 0 || from >= layout_.n_ctx || to >= layout_.n_ctx) {
    throw std::out_of_range("KV move outside the context");
  }
  uint16_t* kd = k_;
  uint16_t* vd = v_;
  const int layers = layout_.n_layers, kv_dim = layout_.kv_dim();
  const size_t stride = layer_stride();
  be_.record({kOpKvMove, word(kd), word(vd), uint64_t(layers), stride, uint64_t(kv_dim),
              uint64_t(from), uint64_t(to)},
             [=](cudaStream_t s) { launch_kv_move(kd, vd, layers, stride, kv_dim, from, to, s); });
}

}  // namespace leapfrog::cuda

// ---- the library's C entry points (cuda_abi.h)

namespace {
void put_msg(char* msg, size_t len, const std::string& s) {
  if (!msg || len == 0) return;
  std::snprintf(msg, len, "%s", s.c_str());
}
}  // namespace

extern "C" __attribute__((visibility("default"))) uint32_t leapfrog_cuda_key() {
  return leapfrog::cuda_abi::key();
}

extern "C" __attribute__((visibility("default"))) int leapfrog_cuda_probe(int device, char* msg,
                                                                          size_t len) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    const std::string what = e == cudaErrorNoDevice             ? "no CUDA device"
                             : e == cudaErrorInsufficientDriver ? "no usable NVIDIA driver"
                                                                : "CUDA initialisation failed";
    put_msg(msg, len, what + " (cudaGetDeviceCount: " + cudaGetErrorString(e) + ")");
    (void)cudaGetLastError();
    return 1;
  }
  if (count == 0) {
    put_msg(msg, len, "no CUDA device (cudaGetDeviceCount: 0 devices)");
    return 1;
  }
  if (device < 0 || device >= count) {
    put_msg(
        msg, len,
        "no CUDA device " + std::to_string(device) + " (" + std::to_string(count) + " present)");
    return 1;
  }
  cudaDeviceProp prop;
  const cudaError_t pe = cudaGetDeviceProperties(&prop, device);
  if (pe != cudaSuccess) {
    put_msg(msg, len, std::string("cudaGetDeviceProperties: ") + cudaGetErrorString(pe));
    return 1;
  }
  if (prop.major < 8) {
    put_msg(msg, len,
            std::string(prop.name) + " has compute capability " + std::to_string(prop.major) + "." +
                std::to_string(prop.minor) + "; Leapfrog's kernels need 8.0 or newer");
    return 1;
  }
  put_msg(msg, len, prop.name);
  return 0;
}

extern "C" __attribute__((visibility("default"))) leapfrog::Backend* leapfrog_cuda_create(
    int device, char* msg, size_t len) {
  if (leapfrog_cuda_probe(device, msg, len) != 0) return nullptr;
  try {
    return new leapfrog::cuda::CudaBackend(device);
  } catch (const std::exception& e) {
    put_msg(msg, len, e.what());
    return nullptr;
  }
}
