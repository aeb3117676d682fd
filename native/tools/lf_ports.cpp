// How fast this core runs 512-bit vpdpbusd beside the other instructions a Q8_0 tile needs
// (AVX-512 VNNI only): the ceiling of the packed products under the exact-results rule
// (packed_layouts.h: acc = fma(float(sum), d_w * d_a, acc) per 32-input block and row, after
// 8 vpdpbusd), which lf_roofline's bare int8 peak does not show. One thread, in registers:
//   dpbusd           16 independent chains, register operands (the port limit)
//   +cvt/+mul/+fma   the same, with 2 of that float instruction per 16 vpdpbusd
//   +epilogue        with 2 of each (cvt, mul, fma): the rule's 3 per 8
//   folded_bcast     8 chains, the activation's 4 bytes broadcast from memory ({1to16})
//   shared_bcast     16 chains, one register broadcast serving two weight vectors
// Prints one JSON object: G vpdpbusd/s per probe (best of --reps) and each as a share of the
// first. Run it pinned (taskset -c N); a busy core lowers every figure alike.
//   lf_ports [--ms per-probe milliseconds] [--reps R]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <string>

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define LF_X86 1
#else
#define LF_X86 0
#endif

#if LF_X86
namespace {

constexpr int kChains = 16;

enum class Mix { None, Cvt, Mul, Fma, Epilogue, FoldedBcast, SharedBcast };

// Runs `iters` iterations of 16 vpdpbusd plus the mix's other instructions; returns a value
// that depends on every result (so nothing is dropped). The asm statements fix the
// instructions: compilers fold or move broadcasts and float work otherwise.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"  // GCC 12's _mm512_reduce_* headers
template <Mix M>
__attribute__((target("avx512f,avx512bw,avx512vnni"), noinline)) int probe(const int32_t* mem,
                                                                           int64_t iters) {
  __m512i acc[kChains];
#pragma GCC unroll 16
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_epi32(i);
  __m512i w0 = _mm512_set1_epi8(3), w1 = _mm512_set1_epi8(5);
  __m512 f0 = _mm512_set1_ps(1), f1 = _mm512_set1_ps(2), f2 = _mm512_set1_ps(3),
         f3 = _mm512_set1_ps(4), c0 = _mm512_set1_ps(1.0001f);
  for (int64_t it = 0; it < iters; ++it) {
    if constexpr (M == Mix::FoldedBcast) {
#pragma GCC unroll 16
      for (int i = 0; i < kChains; ++i) {
        asm("vpdpbusd %2%{1to16%}, %1, %0" : "+v"(acc[i % 8]) : "v"(w0), "m"(mem[i]));
      }
    } else if constexpr (M == Mix::SharedBcast) {
#pragma GCC unroll 8
      for (int i = 0; i < kChains / 2; ++i) {
        __m512i b;
        asm("vpbroadcastd %1, %0" : "=v"(b) : "m"(mem[i]));
        asm("vpdpbusd %2, %1, %0" : "+v"(acc[2 * i]) : "v"(w0), "v"(b));
        asm("vpdpbusd %2, %1, %0" : "+v"(acc[2 * i + 1]) : "v"(w1), "v"(b));
      }
    } else {
#pragma GCC unroll 16
      for (int i = 0; i < kChains; ++i) asm("vpdpbusd %1, %1, %0" : "+v"(acc[i]) : "v"(w0));
    }
    if constexpr (M == Mix::Cvt || M == Mix::Epilogue) {
      asm("vcvtdq2ps %1, %0" : "=v"(f0) : "v"(acc[0]));
      asm("vcvtdq2ps %1, %0" : "=v"(f1) : "v"(acc[1]));
    }
    if constexpr (M == Mix::Mul || M == Mix::Epilogue) {
      asm("vmulps %1, %0, %0" : "+v"(f2) : "v"(c0));
      asm("vmulps %1, %0, %0" : "+v"(f3) : "v"(c0));
    }
    if constexpr (M == Mix::Fma || M == Mix::Epilogue) {
      asm("vfmadd231ps %1, %1, %0" : "+v"(f0) : "v"(c0));
      asm("vfmadd231ps %1, %1, %0" : "+v"(f1) : "v"(c0));
    }
  }
  __m512i s = acc[0];
#pragma GCC unroll 16
  for (int i = 1; i < kChains; ++i) s = _mm512_add_epi32(s, acc[i]);
  const __m512 f = _mm512_add_ps(_mm512_add_ps(f0, f1), _mm512_add_ps(f2, f3));
  return _mm512_reduce_add_epi32(s) + int(_mm512_reduce_add_ps(f));
}
#pragma GCC diagnostic pop

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// G vpdpbusd/s of one probe: iterations sized to about `ms` milliseconds, best of `reps`.
template <Mix M>
double rate(double ms, int reps, int* sink) {
  alignas(64) static int32_t mem[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  int64_t iters = 1 << 16;
  for (;;) {  // calibrate
    const double t0 = now_s();
    *sink += probe<M>(mem, iters);
    if (now_s() - t0 > ms / 4e3 || iters > (int64_t(1) << 40)) break;
    iters *= 2;
  }
  iters *= 4;
  double best = 0;
  for (int r = 0; r < reps; ++r) {
    const double t0 = now_s();
    *sink += probe<M>(mem, iters);
    best = std::max(best, double(iters) * kChains / (now_s() - t0) / 1e9);
  }
  return best;
}

}  // namespace
#endif

int main(int argc, char** argv) {
  double ms = 200;
  int reps = 3;
  for (int i = 1; i + 1 < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--ms") ms = std::atof(argv[++i]);
    if (a == "--reps") reps = std::atoi(argv[++i]);
  }
#if LF_X86
  if (!__builtin_cpu_supports("avx512vnni")) {
    std::printf("{\"error\":\"no AVX-512 VNNI on this CPU\"}\n");
    return 0;
  }
  int sink = 0;
  const struct {
    const char* name;
    double g;
  } r[] = {
      {"dpbusd", rate<Mix::None>(ms, reps, &sink)},
      {"+cvt", rate<Mix::Cvt>(ms, reps, &sink)},
      {"+mul", rate<Mix::Mul>(ms, reps, &sink)},
      {"+fma", rate<Mix::Fma>(ms, reps, &sink)},
      {"+epilogue", rate<Mix::Epilogue>(ms, reps, &sink)},
      {"folded_bcast", rate<Mix::FoldedBcast>(ms, reps, &sink)},
      {"shared_bcast", rate<Mix::SharedBcast>(ms, reps, &sink)},
  };
  std::printf("{\"unit\":\"G vpdpbusd/s, one thread\",\"probes\":{");
  for (size_t i = 0; i < std::size(r); ++i) {
    std::printf("%s\"%s\":{\"g\":%.2f,\"share\":%.3f}", i ? "," : "", r[i].name, r[i].g,
                r[i].g / r[0].g);
  }
  std::printf("},\"sink\":%d}\n", sink & 1);
#else
  (void)ms;
  (void)reps;
  std::printf("{\"error\":\"lf_ports probes x86-64 AVX-512 VNNI only\"}\n");
#endif
  return 0;
}
