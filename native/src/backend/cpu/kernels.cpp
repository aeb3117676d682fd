#include "backend/cpu/kernels.h"

#include <cstdlib>
#include <cstring>
#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP_ASIMD
#define HWCAP_ASIMD (1 << 1)
#endif
#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1 << 20)
#endif
#endif

#include "backend/cpu/quant_blocks.h"

namespace leapfrog::cpu {

namespace {

Isa cpu_best_isa() {
#if defined(__x86_64__) || defined(_M_X64)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni")) {
    return Isa::Avx512;
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
      __builtin_cpu_supports("f16c")) {
    return Isa::Avx2;
  }
#elif defined(__aarch64__) && defined(__linux__)
  // The kernel reports the dot-product extension (sdot) separately from plain NEON.
  const unsigned long hw = getauxval(AT_HWCAP);
  if (hw & HWCAP_ASIMD) return (hw & HWCAP_ASIMDDP) ? Isa::NeonDot : Isa::Neon;
#elif defined(__aarch64__) && defined(__APPLE__)
  return Isa::NeonDot;  // every Apple arm64 chip has the dot-product extension
#elif defined(__aarch64__)
  return Isa::Neon;  // NEON is part of every arm64 CPU
#endif
  return Isa::Scalar;
}

}  // namespace

Isa detect_isa() {
  Isa best = cpu_best_isa();
  if (const char* env = std::getenv("LEAPFROG_CPU_ISA")) {
    Isa want = best;
    if (std::strcmp(env, "scalar") == 0) want = Isa::Scalar;
    if (std::strcmp(env, "avx2") == 0) want = Isa::Avx2;
    if (std::strcmp(env, "avx512") == 0) want = Isa::Avx512;
    if (std::strcmp(env, "neon") == 0) want = Isa::Neon;
    if (std::strcmp(env, "neondot") == 0) want = Isa::NeonDot;
    if (want < best) best = want;  // only ever lower: a forced path must run on this CPU
  }
  return best;
}

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::Scalar:
      return "scalar";
    case Isa::Avx2:
      return "avx2";
    case Isa::Avx512:
      return "avx512";
    case Isa::Neon:
      return "neon";
    case Isa::NeonDot:
      return "neondot";
  }
  return "?";
}

std::vector<Isa> runnable_isas() {
#if defined(__aarch64__)
  const Isa levels[] = {Isa::Scalar, Isa::Neon, Isa::NeonDot};
#else
  const Isa levels[] = {Isa::Scalar, Isa::Avx2, Isa::Avx512};
#endif
  const Isa best = detect_isa();
  std::vector<Isa> out;
  for (Isa isa : levels) {
    if (isa <= best) out.push_back(isa);
  }
  return out;
}

ActFormat act_format_for(GgmlType t) {
  switch (t) {
    case GgmlType::F16:
      return ActFormat::F16;
    case GgmlType::BF16:
      return ActFormat::BF16;
    case GgmlType::Q8_0:
    case GgmlType::Q4_0:
    case GgmlType::Q5_0:
      return ActFormat::Q8_0;
    case GgmlType::Q4_K:
    case GgmlType::Q5_K:
    case GgmlType::Q6_K:
      return ActFormat::Q8_K;
    default:
      return ActFormat::F32;
  }
}

size_t act_row_bytes(ActFormat f, int64_t n) {
  switch (f) {
    case ActFormat::F32:
      return n * 4;
    case ActFormat::F16:
    case ActFormat::BF16:
      return n * 2;
    case ActFormat::Q8_0:
      return (n / kQK) * sizeof(ActQ8_0);
    case ActFormat::Q8_K:
      return (n / kQK_K) * sizeof(ActQ8_K);
  }
  return 0;
}

int kernel_slot(GgmlType t) {
  switch (t) {
    case GgmlType::F32:
      return 0;
    case GgmlType::F16:
      return 1;
    case GgmlType::BF16:
      return 2;
    case GgmlType::Q8_0:
      return 3;
    case GgmlType::Q4_0:
      return 4;
    case GgmlType::Q4_K:
      return 5;
    case GgmlType::Q5_K:
      return 6;
    case GgmlType::Q6_K:
      return 7;
    case GgmlType::Q5_0:
      return 8;
    default:
      return -1;
  }
}

const Kernels& kernels(Isa isa) {
  if (isa == Isa::Neon || isa == Isa::NeonDot) {
    if (const Kernels* k = isa == Isa::NeonDot ? kernels_neon_dot() : nullptr) return *k;
    if (const Kernels* k = kernels_neon()) return *k;
    return kernels_scalar();  // an arm64 level asked for on another architecture
  }
  if (const Kernels* k = isa == Isa::Avx512 ? kernels_avx512() : nullptr) return *k;
  if (isa != Isa::Scalar) {
    if (const Kernels* k = kernels_avx2()) return *k;
  }
  return kernels_scalar();
}

#if !(defined(__x86_64__) || defined(_M_X64))
const Kernels* kernels_avx2() { return nullptr; }
const Kernels* kernels_avx512() { return nullptr; }
#endif
#if !defined(__aarch64__)
const Kernels* kernels_neon() { return nullptr; }
const Kernels* kernels_neon_dot() { return nullptr; }
#endif

}  // namespace leapfrog::cpu
