// Kernel benchmark for the CPU attention kernel alone (Kernels::attend): one task of R query
// rows x G query heads sharing one KV head, over a filled f16 cache of C positions, on one
// thread, as the backend hands it to a worker. Reports the median milliseconds per task and
// the float rate (scores and weighted values: 4 * R * G * head_dim * C flops), so the kernel
// can be compared with the fp32 roof (lf_roofline) without the rest of a pass around it.
//   lf_attnbench [--rows 1,16,32] [--heads 7] [--kv-heads 2] [--head-dim 64] [--ctx 1024]
//                [--reps 200] [--isa scalar|avx2|avxvnni|avx512|neon...] [--flush-mib M]
// The queries and outputs lie as a pass keeps them: a row holds every KV head's group of
// query heads (kv-heads x heads x head-dim floats), so the task's rows are that far apart.
// --flush-mib reads M MiB of other memory before each timed call, as a pass's matrix products
// do between two layers' attention: the cache and the scratch then come from memory.
// Defaults: the 0.5B shape's task (7 query heads per KV head); one KV head's keys and values
// laid out as the backend's cache keeps them (cpu_kv.h).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "backend/cpu/attention_task.h"
#include "backend/cpu/kernels.h"
#include "format/fp16.h"

using namespace leapfrog;
using namespace leapfrog::cpu;

namespace {

std::vector<int> parse_list(const std::string& s) {
  std::vector<int> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) out.push_back(std::stoi(item));
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> rows_list{1, 16, 32};
  int heads = 7, kv_heads = 2, hd = 64, ctx = 1024, reps = 200, flush_mib = 0;
  Isa isa = detect_isa();
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--rows")
      rows_list = parse_list(v);
    else if (a == "--heads")
      heads = std::stoi(v);
    else if (a == "--kv-heads")
      kv_heads = std::stoi(v);
    else if (a == "--head-dim")
      hd = std::stoi(v);
    else if (a == "--ctx")
      ctx = std::stoi(v);
    else if (a == "--reps")
      reps = std::stoi(v);
    else if (a == "--flush-mib")
      flush_mib = std::stoi(v);
    else if (a == "--isa") {
      bool found = false;
      for (Isa cand : runnable_isas()) {
        if (v == isa_name(cand)) isa = cand, found = true;
      }
      if (!found) {
        std::fprintf(stderr, "lf_attnbench: level %s does not run here\n", v.c_str());
        return 2;
      }
    } else {
      std::fprintf(stderr, "lf_attnbench: unknown flag %s\n", a.c_str());
      return 2;
    }
  }
  const Kernels& k = kernels(isa);
  if (!k.attend) {
    std::fprintf(stderr, "lf_attnbench: level %s has no attention kernel\n", isa_name(isa));
    return 2;
  }
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  // Keys in blocks of kKeyBlock positions, dimension-major (attention_task.h); values by
  // position.
  std::vector<uint16_t> kc(size_t(ctx + kKeyBlock - 1) / kKeyBlock * kKeyBlock * hd),
      vc(size_t(ctx) * hd);
  for (auto& x : kc) x = format::f32_to_f16(normal(rng));
  for (auto& x : vc) x = format::f32_to_f16(normal(rng));

  std::vector<uint64_t> flush(size_t(flush_mib) << 17);
  volatile uint64_t sink = 0;
  std::printf("{\"isa\":\"%s\",\"heads\":%d,\"head_dim\":%d,\"ctx\":%d,\"tasks\":[", isa_name(isa),
              heads, hd, ctx);
  for (size_t ri = 0; ri < rows_list.size(); ++ri) {
    const int rows = rows_list[ri];
    const size_t q_stride = size_t(kv_heads) * heads * hd;
    std::vector<float> q(rows * q_stride), out(rows * q_stride);
    for (auto& x : q) x = normal(rng);
    // The last `rows` positions of the context are the pass's own (causal limits).
    std::vector<int> limit(rows);
    for (int r = 0; r < rows; ++r) limit[r] = ctx - rows + r + 1;
    AttentionTask t{};
    t.k = kc.data();
    t.k_block_stride = size_t(kKeyBlock) * hd;
    t.v = vc.data();
    t.kv_stride = hd;
    t.head_dim = hd;
    t.heads = heads;
    t.rows = rows;
    t.q = q.data();
    t.out = out.data();
    t.q_stride = q_stride;
    t.limit = limit.data();
    t.scale = 1.0f / 8;
    std::vector<float> scratch(attention_scratch_floats(t) + 16);
    t.scratch =
        reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(scratch.data()) + 63) / 64 * 64);
    std::vector<double> ms;
    for (int r = 0; r < reps + 3; ++r) {
      if (!flush.empty()) {
        uint64_t sum = 0;
        for (size_t i = 0; i < flush.size(); i += 8) sum += flush[i];
        sink += sum;
      }
      const auto t0 = std::chrono::steady_clock::now();
      k.attend(t);
      const auto t1 = std::chrono::steady_clock::now();
      if (r >= 3) ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    double visible = 0;
    for (int r = 0; r < rows; ++r) visible += limit[r];
    const double m = median(ms), flops = 4.0 * heads * hd * visible;
    std::printf("%s{\"rows\":%d,\"median_ms\":%.4f,\"gflops\":%.1f}", ri ? "," : "", rows, m,
                flops / (m * 1e6));
  }
  std::printf("]}\n");
  return 0;
}
