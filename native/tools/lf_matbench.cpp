// Kernel benchmark for the CPU backend: the matmuls of one forward pass of a model shape
// (default Qwen2.5-Coder-0.5B: hidden 896, 24 layers, 14/2 heads, FFN 4864, vocab 151936),
// over random weights of one type, for batch sizes 1..64. Reports milliseconds per pass,
// weight bandwidth (GB/s) and multiply-add rate, so decode can be compared with the memory
// roof and batched passes with the single-token pass.
//   lf_matbench [--type Q8_0|Q4_K|...] [--threads N] [--layers L] [--reps R]
//               [--shape 0.5b|1.5b] [--no-output] [--cpu-time] [--no-pack]
//               [--matrix COLSxROWS]
// --cpu-time reports process CPU time instead of wall time: on a shared, overloaded machine
// that is the steadier measure of compute-bound passes (use it with --threads 1).
// --matrix times one matrix of that shape instead of a model's (896x512 Q8_0, 0.46 MB, stays
// in a 1 MiB L2: the tiles' own rate, without memory).
// --no-pack keeps the file layout (no Backend::pack_weight), to compare with the packed one.
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "../tests/host_ptr.h"
#include "backend/cpu/cpu_backend.h"
#include "format/fp16.h"

using namespace leapfrog;
using namespace leapfrog::format;

int main(int argc, char** argv) {
  std::string type_name = "Q8_0", shape = "0.5b";
  int threads = 0, layers = -1, reps = 5;
  bool output = true, cpu_time = false, pack = true;
  int64_t one_cols = 0, one_rows = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--type")
      type_name = argv[++i];
    else if (a == "--threads")
      threads = std::stoi(argv[++i]);
    else if (a == "--layers")
      layers = std::stoi(argv[++i]);
    else if (a == "--reps")
      reps = std::stoi(argv[++i]);
    else if (a == "--shape")
      shape = argv[++i];
    else if (a == "--no-output")
      output = false;
    else if (a == "--cpu-time")
      cpu_time = true;
    else if (a == "--no-pack")
      pack = false;
    else if (a == "--matrix" && i + 1 < argc &&
             std::sscanf(argv[++i], "%" SCNd64 "x%" SCNd64, &one_cols, &one_rows) != 2) {
      std::fprintf(stderr, "lf_matbench: --matrix takes COLSxROWS, e.g. 896x4096\n");
      return 2;
    }
  }
  GgmlType type = GgmlType::Q8_0;
  for (uint32_t t = 0; t < 40; ++t) {
    const GgmlTypeTraits* tr = ggml_type_traits(t);
    if (tr && tr->name == type_name) type = GgmlType(t);
  }
  int E = 896, F = 4864, L = 24, Q = 896, KV = 128, V = 151936;
  if (shape == "1.5b") E = 1536, F = 8960, L = 28, Q = 1536, KV = 256;
  if (layers > 0) L = layers;

  struct M {
    int64_t cols, rows;
    GgmlType type;
    std::vector<uint8_t> data;
  };
  std::vector<M> mats;
  std::mt19937 rng(1);
  int fallbacks = 0;
  auto add = [&](int64_t cols, int64_t rows) {
    // K-quants need rows of whole 256-value super-blocks; like a quantizer would, fall back
    // to Q8_0 elsewhere (the 0.5B shape's 896-wide matrices).
    GgmlType t = type;
    if (cols % ggml_type_traits(uint32_t(t))->block_size != 0) t = GgmlType::Q8_0, ++fallbacks;
    M m{cols, rows, t, std::vector<uint8_t>(ggml_row_bytes(t, cols) * rows)};
    // Random bytes; patch nothing: timing does not depend on values except for NaNs in
    // float types, which the multiply-adds do not mind.
    uint32_t* p = reinterpret_cast<uint32_t*>(m.data.data());
    for (size_t i = 0; i < m.data.size() / 4; ++i) p[i] = rng() & 0x3bff3bff;
    mats.push_back(std::move(m));
  };
  if (one_cols > 0 && one_rows > 0) {
    add(one_cols, one_rows);
    L = 0, output = false, shape = std::to_string(one_cols) + "x" + std::to_string(one_rows);
    E = int(one_cols), F = int(one_rows);
  }
  for (int l = 0; l < L; ++l) {
    add(E, Q), add(E, KV), add(E, KV), add(Q, E), add(E, F), add(E, F), add(F, E);
  }
  if (output) add(E, V);
  double bytes = 0, macs1 = 0;
  for (auto& m : mats) bytes += m.data.size(), macs1 += double(m.cols) * m.rows;

  CpuBackendOptions o;
  o.threads = threads;
  CpuBackend be(o);
  std::printf("%s %s, %d layers%s, %.1f MB of weights, backend %s, %d threads%s\n", shape.c_str(),
              type_name.c_str(), L, output ? " + output" : "", bytes / 1e6, be.name().c_str(),
              be.threads(), cpu_time ? ", CPU time" : "");
  if (fallbacks) std::printf("(%d matrices not a multiple of the block size: Q8_0)\n", fallbacks);
  std::vector<WeightView> views;
  std::vector<std::unique_ptr<DeviceBuffer>> packed;
  for (auto& m : mats) {
    WeightView w{m.type, m.data.data(), m.rows, m.cols, ggml_row_bytes(m.type, m.cols)};
    if (auto p = pack ? be.pack_weight(w) : nullptr) {
      w.packed = p->as<uint8_t>().get();
      packed.push_back(std::move(p));
    }
    views.push_back(w);
  }
  if (!packed.empty()) std::printf("(%zu matrices packed for the backend)\n", packed.size());
  std::vector<float> x(64 * std::max(F, E)), y(64 * std::max<int64_t>(V, F));
  for (auto& v : x) v = std::normal_distribution<float>(0, 1)(rng);
  double t1 = 0;
  for (int n : {1, 2, 4, 8, 16, 32, 64}) {
    std::vector<double> times;
    for (int r = 0; r < reps; ++r) {
      auto now = [&] {
        if (cpu_time) {
          timespec ts;
          clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
          return ts.tv_sec + ts.tv_nsec * 1e-9;
        }
        return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
            .count();
      };
      const double t0 = now();
      for (const WeightView& w : views) be.matmul(w, x.data(), n, y.data());
      times.push_back(now() - t0);
    }
    std::sort(times.begin(), times.end());
    const double t = times[times.size() / 2];
    if (n == 1) t1 = t;
    std::printf("n=%2d  %8.2f ms  %6.2fx n=1  %6.1f GB/s  %7.1f GMAC/s\n", n, t * 1e3, t / t1,
                bytes / t / 1e9, macs1 * n / t / 1e9);
  }
  return 0;
}
