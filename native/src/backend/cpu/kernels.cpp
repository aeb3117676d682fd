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
#ifndef HWCAP2_I8MM
#define HWCAP2_I8MM (1 << 13)
#endif
#endif

#include "backend/cpu/quant_blocks.h"

namespace leapfrog::cpu {

namespace {

// This architecture's levels, lowest first.
#if defined(__aarch64__)
constexpr Isa kLevels[] = {Isa::Scalar, Isa::Neon, Isa::NeonDot, Isa::NeonI8mm};
#else
constexpr Isa kLevels[] = {Isa::Scalar, Isa::Avx2, Isa::AvxVnni, Isa::Avx512};
#endif

}  // namespace

bool cpu_supports(Isa isa) {
  if (isa == Isa::Scalar) return true;
#if defined(__x86_64__) || defined(_M_X64)
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                    __builtin_cpu_supports("f16c");
  switch (isa) {
    case Isa::Avx2:
      return avx2;
    case Isa::AvxVnni:
      return avx2 && __builtin_cpu_supports("avxvnni");
    case Isa::Avx512:
      return avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
    default:
      return false;
  }
#elif defined(__aarch64__) && defined(__linux__)
  // The kernel reports the dot-product extension (sdot) separately from plain NEON, and the
  // int8 matrix multiply (smmla) in the second word.
  const unsigned long hw = getauxval(AT_HWCAP);
  const bool dot = (hw & HWCAP_ASIMD) && (hw & HWCAP_ASIMDDP);
  if (isa == Isa::Neon) return hw & HWCAP_ASIMD;
  if (isa == Isa::NeonDot) return dot;
  if (isa == Isa::NeonI8mm) return dot && (getauxval(AT_HWCAP2) & HWCAP2_I8MM);
  return false;
#elif defined(__aarch64__) && defined(__APPLE__)
  // Every Apple arm64 chip has sdot; smmla (M2 on) is not claimed: no macOS build is tested.
  return isa == Isa::Neon || isa == Isa::NeonDot;
#elif defined(__aarch64__)
  return isa == Isa::Neon;  // NEON is part of every arm64 CPU
#else
  return false;
#endif
}

Isa detect_isa() {
  Isa best = Isa::Scalar;
  for (Isa isa : kLevels) {
    if (cpu_supports(isa)) best = isa;
  }
  if (const char* env = std::getenv("LEAPFROG_CPU_ISA")) {
    for (Isa isa : kLevels) {
      // Only ever lower, and only to a level this CPU has: a forced path must run here.
      if (std::strcmp(env, isa_name(isa)) == 0 && isa < best && cpu_supports(isa)) best = isa;
    }
  }
  return best;
}

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::Scalar:
      return "scalar";
    case Isa::Avx2:
      return "avx2";
    case Isa::AvxVnni:
      return "avxvnni";
    case Isa::Avx512:
      return "avx512";
    case Isa::Neon:
      return "neon";
    case Isa::NeonDot:
      return "neondot";
    case Isa::NeonI8mm:
      return "neoni8mm";
  }
  return "?";
}

std::vector<Isa> runnable_isas() {
  const Isa best = detect_isa();
  std::vector<Isa> out;
  for (Isa isa : kLevels) {
    if (isa <= best && cpu_supports(isa)) out.push_back(isa);
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
    case GgmlType::Q4_1:  // llama.cpp takes Q8_1 (Q8_0 plus d * sum): see kernels_scalar_lowbit
    case GgmlType::Q5_1:
    case GgmlType::IQ4_NL:
      return ActFormat::Q8_0;
    case GgmlType::Q2_K:
    case GgmlType::Q3_K:
    case GgmlType::IQ4_XS:
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
    case GgmlType::Q4_1:
      return 9;
    case GgmlType::Q5_1:
      return 10;
    case GgmlType::IQ4_NL:
      return 11;
    case GgmlType::Q2_K:
      return 12;
    case GgmlType::Q3_K:
      return 13;
    case GgmlType::IQ4_XS:
      return 14;
    default:
      return -1;
  }
}

const Kernels& kernels(Isa isa) {
  if (isa == Isa::Neon || isa == Isa::NeonDot || isa == Isa::NeonI8mm) {
    if (const Kernels* k = isa == Isa::NeonI8mm ? kernels_neon_i8mm() : nullptr) return *k;
    if (const Kernels* k = isa != Isa::Neon ? kernels_neon_dot() : nullptr) return *k;
    if (const Kernels* k = kernels_neon()) return *k;
    return kernels_scalar();  // an arm64 level asked for on another architecture
  }
  if (const Kernels* k = isa == Isa::Avx512 ? kernels_avx512() : nullptr) return *k;
  if (const Kernels* k = isa == Isa::AvxVnni ? kernels_avx_vnni() : nullptr) return *k;
  if (isa != Isa::Scalar) {
    if (const Kernels* k = kernels_avx2()) return *k;
  }
  return kernels_scalar();
}

#if !(defined(__x86_64__) || defined(_M_X64))
const Kernels* kernels_avx2() { return nullptr; }
const Kernels* kernels_avx_vnni() { return nullptr; }
const Kernels* kernels_avx512() { return nullptr; }
#endif
#if !defined(__aarch64__)
const Kernels* kernels_neon() { return nullptr; }
const Kernels* kernels_neon_dot() { return nullptr; }
const Kernels* kernels_neon_i8mm() { return nullptr; }
#endif

}  // namespace leapfrog::cpu
