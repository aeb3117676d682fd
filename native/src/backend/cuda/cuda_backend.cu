// The CUDA implementation of Backend (libleapfrog_cuda.so): device memory, one stream per
// calling thread (two sessions on two threads may share the backend), weights uploaded and
// repacked once, the whole pass enqueued without a host round trip; download() waits.
#include <cuda_runtime.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>

#include "backend/backend.h"
#include "backend/cuda/cuda_abi.h"
#include "backend/cuda/cuda_common.cuh"
#include "backend/cuda/kernels.h"
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
  ~CudaBuffer() override { (void)cudaFree(p_); }
  size_t bytes() const override { return bytes_; }

 protected:
  void* raw() const override { return p_; }

 private:
  void* p_;
  size_t bytes_;
};

// Device scratch that only grows (freeing synchronizes the device: in-flight work that
// uses the old allocation is done before it goes).
struct Scratch {
  void* p = nullptr;
  size_t cap = 0;
  void* get(size_t bytes) {
    if (bytes > cap) {
      if (p) LF_CUDA(cudaFree(p));
      p = nullptr;
      cap = 0;
      p = device_alloc(bytes);
      cap = bytes;
    }
    return p;
  }
  ~Scratch() {
    if (p) (void)cudaFree(p);
  }
};

std::atomic<uint64_t> next_backend_id{1};

}  // namespace

class CudaBackend;

class CudaKv final : public KvStorage {
 public:
  CudaKv(CudaBackend& be, const KvLayout& layout);
  ~CudaKv() override {
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
    if (bytes == 0) return;
    LF_CUDA(cudaMemcpyAsync(dst.get(), src, bytes, cudaMemcpyHostToDevice, stream()));
  }
  void download(void* dst, DevicePtr<const void> src, size_t bytes) override {
    cudaStream_t st = stream();
    if (bytes) LF_CUDA(cudaMemcpyAsync(dst, src.get(), bytes, cudaMemcpyDeviceToHost, st));
    LF_CUDA(cudaStreamSynchronize(st));
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
    uint8_t* raw = static_cast<uint8_t*>(c.load_temp.get(raw_bytes));
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
  void begin_pass(const PassShape&) override {
    Ctx& c = ctx();
    if (c.load_temp.p) {  // the weights are loaded: give their staging memory back
      LF_CUDA(cudaStreamSynchronize(c.stream));
      LF_CUDA(cudaFree(c.load_temp.p));
      c.load_temp.p = nullptr;
      c.load_temp.cap = 0;
    }
  }
  void end_pass() override {}

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
    if (k0 == QKind::None) {
      if (!w0.data) throw std::invalid_argument("cuda matmul: weight not resident");
      float* xr = w0.type == GgmlType::F32
                      ? nullptr
                      : static_cast<float*>(c.act_f.get(size_t(n) * w0.cols * sizeof(float)));
      launch_matmul_float(w0.type, w0.data, w0.rows, w0.cols, x.get(), n, ys[0].get(),
                          size_t(w0.rows), xr, c.stream);
      return;
    }
    // Quantize the activations once for all weights (same inputs, same format).
    const int64_t groups = (w0.cols + kGroupK - 1) / kGroupK;
    const int tiles = (n + 7) / 8;
    ActQ8 act;
    act.q = static_cast<uint8_t*>(c.act_q.get(ActQ8::q_bytes(tiles, groups)));
    act.s = static_cast<uint32_t*>(c.act_s.get(ActQ8::s_bytes(tiles, groups)));
    launch_quantize_act(x.get(), n, w0.cols, groups, kquant_acts(k0), act, c.stream);
    // Weights of one kind and split go out in one launch (at most three); others alone.
    int j = 0;
    while (j < count) {
      QLayout L[3];
      const uint8_t* wp[3];
      float* yp[3];
      size_t ld[3];
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
      for (int i0 = 0; i0 < n; i0 += 64) {
        ActQ8 part;
        part.q = act.q + size_t(i0 / 8) * groups * 2048;
        part.s = act.s + size_t(i0 / 8) * groups * 64;
        for (int k = 0; k < m; ++k) yp[k] = ys[j - m + k].get() + size_t(i0) * ld[k];
        launch_mmq_multi(L, wp, m, part, std::min(64, n - i0), yp, ld, ks, c.stream);
      }
    }
  }

  void get_rows(const WeightView& table, DevicePtr<const int32_t> ids, int n,
                DevicePtr<float> out) override {
    if (!table.data) throw std::invalid_argument("cuda get_rows: table not loaded for lookups");
    launch_get_rows(table.type, table.data, table.rows, table.cols, table.row_bytes, ids.get(), n,
                    out.get(), stream());
  }
  void rms_norm(DevicePtr<const float> x, DevicePtr<const float> w, int n, int dim, float eps,
                DevicePtr<float> y) override {
    launch_rms_norm(x.get(), w.get(), n, dim, eps, y.get(), stream());
  }
  void rope(DevicePtr<float> x, int n, int n_heads, int head_dim, DevicePtr<const int32_t> pos,
            const RopeParams& p) override {
    const float theta_scale = std::pow(p.freq_base, -2.0f / p.n_dims);  // as the CPU
    launch_rope(x.get(), n, n_heads, head_dim, pos.get(), p, theta_scale, stream());
  }
  void swiglu(DevicePtr<float> gate, DevicePtr<const float> up, int n, int dim) override {
    launch_swiglu(gate.get(), up.get(), size_t(n) * dim, stream());
  }
  void add_bias(DevicePtr<float> x, DevicePtr<const float> b, int n, int dim) override {
    launch_add_bias(x.get(), b.get(), n, dim, stream());
  }
  void add(DevicePtr<float> x, DevicePtr<const float> y, size_t count) override {
    launch_add(x.get(), y.get(), count, stream());
  }

  // Mixture of experts: the router's top-k runs on the host (model/moe_ffn.cpp downloads
  // the router logits once per layer), each used expert's product over its gathered rows.
  bool supports_moe() const override { return true; }
  void gather_rows(DevicePtr<const float> x, DevicePtr<const int32_t> rows, int n, int dim,
                   DevicePtr<float> out) override {
    launch_gather_rows(x.get(), rows.get(), n, dim, out.get(), stream());
  }
  void scatter_add_rows(DevicePtr<const float> x, DevicePtr<const int32_t> rows,
                        DevicePtr<const float> weights, int n, int dim,
                        DevicePtr<float> y) override {
    launch_scatter_add_rows(x.get(), rows.get(), weights.get(), n, dim, y.get(), stream());
  }

  // The ops beyond llama's (arch_ops.cu, and attention's softcap and window), checked on
  // the H200 against their definitions (backend_arch_ops_test) and whole starcoder2,
  // granite, phi3 and gemma* models against the CPU (`cuda_device.sh arches`).
  bool supports_arch_ops() const override { return true; }
  void layer_norm(DevicePtr<const float> x, DevicePtr<const float> w, DevicePtr<const float> b,
                  int n, int dim, float eps, DevicePtr<float> y) override {
    launch_layer_norm(x.get(), w.get(), b.get(), n, dim, eps, y.get(), stream());
  }
  void gelu(DevicePtr<float> x, size_t count) override {
    launch_gelu(x.get(), gelu_table_, count, stream());
  }
  void geglu(DevicePtr<float> gate, DevicePtr<const float> up, int n, int dim) override {
    launch_geglu(gate.get(), up.get(), gelu_table_, size_t(n) * dim, stream());
  }
  void scale(DevicePtr<float> x, size_t count, float s) override {
    launch_scale(x.get(), s, count, stream());
  }
  void softcap(DevicePtr<float> x, size_t count, float cap) override {
    launch_softcap(x.get(), cap, count, stream());
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
    AttnLaunch a;
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
    a.kv_len = args.kv_len;
    a.scale = args.scale;
    a.softcap = args.softcap;
    a.window = args.window;
    a.chunk = kv.chunk();
    const size_t chunks = (size_t(args.kv_len) + a.chunk - 1) / a.chunk;
    const size_t parts = size_t(args.n) * args.n_heads * chunks;
    a.part_o = static_cast<float*>(c.att_o.get(parts * L.head_dim * sizeof(float)));
    a.part_ml = static_cast<float2*>(c.att_ml.get(parts * sizeof(float2)));
    launch_attention(a, c.stream);
  }

  cudaStream_t stream() { return ctx().stream; }

 private:
  struct Ctx {
    cudaStream_t stream = nullptr;
    Scratch act_q, act_s, act_f, att_o, att_ml, load_temp;
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
  const size_t off = size_t(layer) * layer_stride() + size_t(pos) * layout_.kv_dim();
  launch_kv_store(k_ + off, v_ + off, k.get(), v.get(), size_t(n) * layout_.kv_dim(), be_.stream());
}

void CudaKv::move(int from, int to) {
  if (from == to) return;
  if (from < 0 || to < 0 || from >= layout_.n_ctx || to >= layout_.n_ctx) {
    throw std::out_of_range("KV move outside the context");
  }
  launch_kv_move(k_, v_, layout_.n_layers, layer_stride(), layout_.kv_dim(), from, to,
                 be_.stream());
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
