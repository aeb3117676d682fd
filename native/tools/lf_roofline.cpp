// Measures this machine's roofs for the benchmark (npm run bench): memory read bandwidth
// (a multi-threaded streaming sum over a buffer far larger than the caches), the int8
// dot-product peak (AVX-512 VNNI, AVX-VNNI or AVX2 vpmaddubsw+vpmaddwd, chosen at run time)
// and the fp32 FMA peak. Prints one JSON object on stdout.
//   lf_roofline [--threads N] [--mb MiB] [--ms per-probe milliseconds] [--reps R]
// Each figure is the best of R repetitions (the roof is what the machine can do; noise
// from other processes only ever lowers a measurement).
// Instruction sets come from __attribute__((target(...))) on the probe functions, never
// from -march=native, so the binary runs on any x86-64 (scalar fallbacks elsewhere).
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#include "backend/cpu/kernels.h"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define LF_X86 1
#else
#define LF_X86 0
#endif

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double thread_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// Runs fn(thread_index) on `threads` threads started together; returns wall seconds, and
// each thread's own CPU seconds in `cpu` (when given). On a machine shared with other
// processes, work / CPU second is what a core does while it runs: the roof an unloaded
// machine would show; work / wall second is what this run got.
template <class F>
double run_threads(int threads, F fn, std::vector<double>* cpu = nullptr) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> ts;
  std::vector<double> secs(threads);
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&, t] {
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      double c0 = thread_cpu_seconds();
      fn(t);
      secs[t] = thread_cpu_seconds() - c0;
    });
  }
  while (ready.load() < threads) std::this_thread::yield();
  auto t0 = Clock::now();
  go.store(true, std::memory_order_release);
  for (auto& th : ts) th.join();
  double wall = seconds_since(t0);
  if (cpu) *cpu = secs;
  return wall;
}

struct Rate {
  double wall = 0;  // per wall second, all threads together
  double cpu = 0;   // sum over threads of (work / that thread's CPU seconds)
};

// ---------------------------------------------------------------- memory bandwidth

#if LF_X86
__attribute__((target("avx2"))) uint64_t sum_avx2(const uint8_t* p, size_t n) {
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  size_t i = 0;
  for (; i + 128 <= n; i += 128) {
    a0 = _mm256_add_epi64(a0, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i)));
    a1 = _mm256_add_epi64(a1, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 32)));
    a2 = _mm256_add_epi64(a2, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 64)));
    a3 = _mm256_add_epi64(a3, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 96)));
  }
  __m256i s = _mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3));
  alignas(32) uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), s);
  uint64_t r = lanes[0] + lanes[1] + lanes[2] + lanes[3];
  for (; i < n; ++i) r += p[i];
  return r;
}
#endif

uint64_t sum_scalar(const uint8_t* p, size_t n) {
  const uint64_t* q = reinterpret_cast<const uint64_t*>(p);
  uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  size_t w = n / 8, i = 0;
  for (; i + 4 <= w; i += 4) a0 += q[i], a1 += q[i + 1], a2 += q[i + 2], a3 += q[i + 3];
  for (; i < w; ++i) a0 += q[i];
  return a0 + a1 + a2 + a3;
}

bool have_avx2() {
#if LF_X86
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

volatile uint64_t g_sink;

// Streaming read of a `mib`-MiB buffer by `threads` threads (each its own contiguous slice),
// `passes` times; returns GB/s (1e9 bytes/s).
Rate bandwidth_gbs(uint8_t* buf, size_t bytes, int threads, int passes) {
  const size_t slice = (bytes / threads) & ~size_t(4095);
  std::vector<uint64_t> sums(threads);
  const bool avx2 = have_avx2();
  std::vector<double> cpu;
  double s = run_threads(
      threads,
      [&](int t) {
        const uint8_t* p = buf + slice * t;
        uint64_t acc = 0;
        for (int k = 0; k < passes; ++k) {
#if LF_X86
          acc += avx2 ? sum_avx2(p, slice) : sum_scalar(p, slice);
#else
          acc += sum_scalar(p, slice);
#endif
        }
        sums[t] = acc;
      },
      &cpu);
  uint64_t tot = 0;
  for (auto v : sums) tot += v;
  g_sink = tot;
  Rate r;
  r.wall = double(slice) * threads * passes / s / 1e9;
  for (double c : cpu) r.cpu += double(slice) * passes / c / 1e9;
  return r;
}

// ---------------------------------------------------------------- int8 dot products

// Each probe runs `iters` iterations of a loop with independent accumulators (AVX2 8, AVX-VNNI
// 12, AVX-512 16: enough to cover the latency of every issue port — Sapphire Rapids retires two
// 512-bit vpdpbusd per cycle at a latency of about 5, which 8 chains measured as 70 % of) over two
// 32-byte (or 64-byte) vectors loaded once, and returns the multiply-adds done (each
// u8*s8 product and its addition count as 2 ops in GOP/s).
// The accumulators are named variables (an array would live in memory: GCC keeps
// acc[j] in a stack slot when the j loop is not unrolled).
#define LF_REP8(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define LF_REP12(X) LF_REP8(X) X(8) X(9) X(10) X(11)
#define LF_REP16(X) LF_REP12(X) X(12) X(13) X(14) X(15)

#if LF_X86
__attribute__((target("avx2"))) uint64_t int8_avx2(const uint8_t* src, int64_t iters,
                                                   int32_t* out) {
  const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src));
  __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 32));
#define DECL(j)                            \
  __m256i acc##j = _mm256_setzero_si256(); \
  const __m256i x##j = _mm256_add_epi8(a, _mm256_set1_epi8(char(j)));
  LF_REP8(DECL)
#undef DECL
  for (int64_t i = 0; i < iters; ++i) {
    // u8*s8 -> s16 pairs, added in s16 lanes: vpmaddubsw is AVX2's int8 multiply, and a
    // kernel whose codes are small (Q4_K: packed_blocks.h) adds 8 of them before widening.
    // The pair llama.cpp's AVX2 Q8 dot products use (then vpmaddwd to s32 per step) measured
    // 0.69-0.85x this on a Zen 3 (alternated runs): the figure for kernels that widen every
    // step.
    // (The empty asm makes b opaque, so the products cannot be hoisted out of the loop.)
    __asm__ volatile("" : "+x"(b));
#define STEP(j) acc##j = _mm256_add_epi16(acc##j, _mm256_maddubs_epi16(x##j, b));
    LF_REP8(STEP)
#undef STEP
  }
  __m256i s = _mm256_add_epi32(
      _mm256_add_epi32(_mm256_add_epi32(acc0, acc1), _mm256_add_epi32(acc2, acc3)),
      _mm256_add_epi32(_mm256_add_epi32(acc4, acc5), _mm256_add_epi32(acc6, acc7)));
  *out = _mm256_extract_epi32(s, 0) + _mm256_extract_epi32(s, 7);
  return uint64_t(iters) * 8 * 32;
}

__attribute__((target("avxvnni"))) uint64_t int8_avxvnni(const uint8_t* src, int64_t iters,
                                                         int32_t* out) {
  const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src));
  __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 32));
#define DECL(j) __m256i acc##j = _mm256_set1_epi32(j);  // distinct: equal chains would be merged
  LF_REP12(DECL)
#undef DECL
  for (int64_t i = 0; i < iters; ++i) {
    __asm__ volatile("" : "+x"(b));
#define STEP(j) acc##j = _mm256_dpbusd_avx_epi32(acc##j, a, b);
    LF_REP12(STEP)
#undef STEP
  }
  __m256i s = _mm256_setzero_si256();
#define SUM(j) s = _mm256_add_epi32(s, acc##j);
  LF_REP12(SUM)
#undef SUM
  *out = _mm256_extract_epi32(s, 0);
  return uint64_t(iters) * 12 * 32;
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"  // GCC 12's _mm512_reduce_* headers
__attribute__((target("avx512f,avx512bw,avx512vnni"))) uint64_t int8_avx512vnni(const uint8_t* src,
                                                                                int64_t iters,
                                                                                int32_t* out) {
  const __m512i a = _mm512_loadu_si512(src);
  __m512i b = _mm512_loadu_si512(src + 64);
#define DECL(j) __m512i acc##j = _mm512_set1_epi32(j);  // distinct: equal chains would be merged
  LF_REP16(DECL)
#undef DECL
  for (int64_t i = 0; i < iters; ++i) {
    __asm__ volatile("" : "+v"(b));
#define STEP(j) acc##j = _mm512_dpbusd_epi32(acc##j, a, b);
    LF_REP16(STEP)
#undef STEP
  }
  __m512i s = _mm512_setzero_si512();
#define SUM(j) s = _mm512_add_epi32(s, acc##j);
  LF_REP16(SUM)
#undef SUM
  *out = _mm512_reduce_add_epi32(s);
  return uint64_t(iters) * 16 * 64;
}

__attribute__((target("avx2,fma"))) uint64_t fma_avx2(const float* src, int64_t iters, float* out) {
  // 12 chains: latency 4 x 2 FMA ports, and then some.
  const __m256 m = _mm256_set1_ps(src[0]);
  const __m256 c = _mm256_set1_ps(src[1]);
#define DECL(j) __m256 acc##j = _mm256_set1_ps(src[2] + j);
  LF_REP12(DECL)
#undef DECL
  for (int64_t i = 0; i < iters; ++i) {
#define STEP(j) acc##j = _mm256_fmadd_ps(acc##j, m, c);
    LF_REP12(STEP)
#undef STEP
  }
  __m256 s = _mm256_setzero_ps();
#define SUM(j) s = _mm256_add_ps(s, acc##j);
  LF_REP12(SUM)
#undef SUM
  *out = _mm256_cvtss_f32(s);
  return uint64_t(iters) * 12 * 8;  // multiply-adds
}

__attribute__((target("avx512f"))) uint64_t fma_avx512(const float* src, int64_t iters,
                                                       float* out) {
  const __m512 m = _mm512_set1_ps(src[0]);
  const __m512 c = _mm512_set1_ps(src[1]);
#define DECL(j) __m512 acc##j = _mm512_set1_ps(src[2] + j);
  LF_REP12(DECL)
#undef DECL
  for (int64_t i = 0; i < iters; ++i) {
#define STEP(j) acc##j = _mm512_fmadd_ps(acc##j, m, c);
    LF_REP12(STEP)
#undef STEP
  }
  __m512 s = _mm512_setzero_ps();
#define SUM(j) s = _mm512_add_ps(s, acc##j);
  LF_REP12(SUM)
#undef SUM
  *out = _mm512_reduce_add_ps(s);
  return uint64_t(iters) * 12 * 16;
}
#pragma GCC diagnostic pop
#endif

uint64_t int8_scalar(const uint8_t* src, int64_t iters, int32_t* out) {
  int32_t acc[32] = {};
  for (int64_t i = 0; i < iters; ++i)
    for (int j = 0; j < 32; ++j) acc[j] += int32_t(src[j]) * int8_t(src[32 + j]);
  int32_t s = 0;
  for (int j = 0; j < 32; ++j) s += acc[j];
  *out = s;
  return uint64_t(iters) * 32;
}

uint64_t fma_scalar(const float* src, int64_t iters, float* out) {
  float acc[16];
  for (int j = 0; j < 16; ++j) acc[j] = src[2] + j;
  for (int64_t i = 0; i < iters; ++i)
    for (int j = 0; j < 16; ++j) acc[j] = acc[j] * src[0] + src[1];
  float s = 0;
  for (int j = 0; j < 16; ++j) s += acc[j];
  *out = s;
  return uint64_t(iters) * 16;
}

// The probes follow the level the engine's kernels run here (cpu::detect_isa: the CPU's best,
// or the lower one LEAPFROG_CPU_ISA asks for where the CPU has it), so the roofs measured are
// the ones those kernels can reach: a forced AVX2 level meets AVX2's int8 and 256-bit FMA rates.
std::string int8_isa() {
#if LF_X86
  if (std::getenv("LEAPFROG_ROOFLINE_ISA")) return std::getenv("LEAPFROG_ROOFLINE_ISA");
  switch (leapfrog::cpu::detect_isa()) {
    case leapfrog::cpu::Isa::Avx512:
      return "avx512vnni";
    case leapfrog::cpu::Isa::AvxVnni:
      return "avxvnni";
    case leapfrog::cpu::Isa::Avx2:
      return "avx2";
    default:
      break;
  }
#endif
  return "scalar";
}

std::string fma_isa() {
#if LF_X86
  // AVX-VNNI's kernels use 256-bit FMAs, as AVX2's do.
  const leapfrog::cpu::Isa isa = leapfrog::cpu::detect_isa();
  if (isa == leapfrog::cpu::Isa::Avx512) return "avx512";
  if (isa >= leapfrog::cpu::Isa::Avx2) return "avx2";
#endif
  return "scalar";
}

// Multiply-adds per second summed over threads, each thread running `secs` seconds.
template <class Probe>
Rate rate(int threads, double secs, Probe probe) {
  // Calibrate the iteration count on one thread.
  int64_t iters = 1 << 12;
  for (;;) {
    auto t0 = Clock::now();
    probe(iters);
    double s = seconds_since(t0);
    if (s > 0.02) {
      iters = std::max<int64_t>(1, int64_t(iters * secs / s));
      break;
    }
    iters *= 4;
  }
  std::vector<uint64_t> done(threads);
  std::vector<double> cpu;
  double s = run_threads(
      threads, [&](int t) { done[t] = probe(iters); }, &cpu);
  Rate r;
  for (int t = 0; t < threads; ++t) {
    r.wall += double(done[t]) / s;
    r.cpu += double(done[t]) / cpu[t];
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = static_cast<int>(std::thread::hardware_concurrency());
  size_t mib = 1024;
  double ms = 300;
  int reps = 3;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "lf_roofline: missing value after %s\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--threads")
      threads = std::stoi(next());
    else if (a == "--mb")
      mib = std::stoul(next());
    else if (a == "--ms")
      ms = std::stod(next());
    else if (a == "--reps")
      reps = std::stoi(next());
    else {
      std::fprintf(stderr,
                   "usage: lf_roofline [--threads N] [--mb MiB] [--ms per-probe ms] [--reps R]\n");
      return 2;
    }
  }
  if (threads < 1) threads = 1;

  // Memory: a buffer of `mib` MiB (well beyond the last-level cache), touched once first.
  const size_t bytes = mib << 20;
  // 2 MiB aligned and asked for transparent huge pages, as the engine's weight buffers are
  // (cpu_backend.cpp): the roof is what a stream over such memory gets.
  uint8_t* buf = static_cast<uint8_t*>(std::aligned_alloc(size_t(2) << 20, bytes));
#ifdef MADV_HUGEPAGE
  if (buf) madvise(buf, bytes, MADV_HUGEPAGE);
#endif
  if (!buf) {
    std::fprintf(stderr, "lf_roofline: cannot allocate %zu MiB\n", mib);
    return 1;
  }
  run_threads(threads, [&](int t) {
    size_t slice = bytes / threads;
    for (size_t i = slice * t; i < slice * (t + 1); ++i) buf[i] = uint8_t(i * 131 + 7);
  });
  // Passes chosen so one measurement reads ~`ms` worth at ~20 GB/s (at least one pass).
  const int passes = std::max(1, int(ms / 1000.0 * 20e9 / double(bytes)));
  Rate bw, bw1;
  std::vector<double> bw_all;
  for (int r = 0; r < reps; ++r) {
    Rate v = bandwidth_gbs(buf, bytes, threads, passes);
    bw_all.push_back(v.wall);
    bw.wall = std::max(bw.wall, v.wall);
    bw.cpu = std::max(bw.cpu, v.cpu);
  }
  for (int r = 0; r < reps; ++r) {
    Rate v = bandwidth_gbs(buf, bytes, 1, passes);
    bw1.wall = std::max(bw1.wall, v.wall);
    bw1.cpu = std::max(bw1.cpu, v.cpu);
  }
  std::free(buf);

  alignas(64) uint8_t src[128];
  for (int i = 0; i < 128; ++i) src[i] = uint8_t(i * 37 + 11) & 0x7f;
  alignas(64) float fsrc[4] = {0.999f, 1e-3f, 0.5f, 0};
  const std::string isa8 = int8_isa(), isaf = fma_isa();
  const double secs = ms / 1000.0;

  volatile int32_t sink8 = 0;
  volatile float sinkf = 0;
  auto probe8 = [&](int64_t iters) {
    int32_t o = 0;
    uint64_t n;
#if LF_X86
    if (isa8 == "avx512vnni")
      n = int8_avx512vnni(src, iters, &o);
    else if (isa8 == "avxvnni")
      n = int8_avxvnni(src, iters, &o);
    else if (isa8 == "avx2")
      n = int8_avx2(src, iters, &o);
    else
#endif
      n = int8_scalar(src, iters, &o);
    sink8 = o;
    return n;
  };
  auto probef = [&](int64_t iters) {
    float o = 0;
    uint64_t n;
#if LF_X86
    if (isaf == "avx512")
      n = fma_avx512(fsrc, iters, &o);
    else if (isaf == "avx2")
      n = fma_avx2(fsrc, iters, &o);
    else
#endif
      n = fma_scalar(fsrc, iters, &o);
    sinkf = o;
    return n;
  };
  Rate int8, fp32;
  for (int r = 0; r < reps; ++r) {
    Rate v = rate(threads, secs, probe8);
    int8.wall = std::max(int8.wall, v.wall);
    int8.cpu = std::max(int8.cpu, v.cpu);
  }
  for (int r = 0; r < reps; ++r) {
    Rate v = rate(threads, secs, probef);
    fp32.wall = std::max(fp32.wall, v.wall);
    fp32.cpu = std::max(fp32.cpu, v.cpu);
  }
  (void)sink8;
  (void)sinkf;

  // The roofs are the per-CPU-second figures (what the cores do while they run); the _wall
  // figures are what this run got with other processes on the machine.
  std::printf("{\"threads\":%d,\"buffer_mib\":%zu,", threads, mib);
  std::printf(
      "\"mem_read_gbs\":%.2f,\"mem_read_gbs_wall\":%.2f,\"mem_read_gbs_1thread\":%.2f,"
      "\"mem_read_gbs_wall_runs\":[",
      bw.cpu, bw.wall, bw1.cpu);
  for (size_t i = 0; i < bw_all.size(); ++i) std::printf("%s%.2f", i ? "," : "", bw_all[i]);
  // GOP/s: one multiply-add = 2 ops (so 2*params*n ops per batched pass of n tokens).
  std::printf(
      "],\"int8_isa\":\"%s\",\"int8_gops\":%.1f,\"int8_gops_wall\":%.1f,"
      "\"fp32_isa\":\"%s\",\"fp32_gflops\":%.1f,\"fp32_gflops_wall\":%.1f}\n",
      isa8.c_str(), 2 * int8.cpu / 1e9, 2 * int8.wall / 1e9, isaf.c_str(), 2 * fp32.cpu / 1e9,
      2 * fp32.wall / 1e9);
  return 0;
}
