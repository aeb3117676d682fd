#!/usr/bin/env bash
# The arm64 path of the engine, tested on any x86-64 Debian machine: cross-compiles the core
# and the C++ tests (no Node addon) into native/build-arm64/ with g++-aarch64-linux-gnu and
# runs every test under qemu-aarch64, once per instruction-set level:
#   scalar, neon, neondot, neoni8mm
#                          forced with LEAPFROG_CPU_ISA on qemu's default CPU (it has the
#                          dot-product extension and the int8 matrix multiply; the tests
#                          themselves iterate over every level at or below the forced one)
#   cortex-a53             the kernel tests on a CPU without dot products, where run-time
#                          detection must settle on plain NEON
# Prints each test's output, one "## arm64 LEVEL: passed N failed M skipped K" line per
# level (test/run-all.mjs reads them) and a total; exits non-zero on any failure.
# Needs `apt-get install g++-aarch64-linux-gnu qemu-user`.
# Usage: scripts/test-arm64.sh [level...]   (default: all five)
set -uo pipefail
cd "$(dirname "$0")/.."

for tool in aarch64-linux-gnu-g++ qemu-aarch64; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIP arm64: $tool not found (apt-get install g++-aarch64-linux-gnu qemu-user)"
    exit 2
  fi
done

build=native/build-arm64
tests=()
for src in native/tests/*_test.cpp; do tests+=("$(basename "$src" .cpp)"); done

cmake -S native -B "$build" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_TOOLCHAIN_FILE="$PWD/native/cmake/aarch64-linux-gnu.cmake" >/dev/null || exit 1
cmake --build "$build" --parallel 2 --target "${tests[@]}" >/dev/null || {
  echo "arm64: the cross build failed (run: cmake --build $build)"
  exit 1
}

levels=("$@")
[ ${#levels[@]} -eq 0 ] && levels=(scalar neon neondot neoni8mm cortex-a53)
export LEAPFROG_EMULATED=1 # timing tests skip: wall time under emulation means nothing
total_p=0 total_f=0 total_s=0 status=0
for level in "${levels[@]}"; do
  # The emulated CPU, the tests, and the level detect_isa() must report (LEAPFROG_EXPECT_ISA,
  # checked by backend_kernels_test).
  cpu=() run=("${tests[@]}")
  if [ "$level" = cortex-a53 ]; then
    cpu=(-cpu cortex-a53) run=(backend_kernels_test matmul_batch_test) expect=neon
    unset LEAPFROG_CPU_ISA
  else
    export LEAPFROG_CPU_ISA="$level"
    expect="$level"
  fi
  p=0 f=0 s=0
  for t in "${run[@]}"; do
    echo "# arm64 $level: $t"
    out="$(LEAPFROG_EXPECT_ISA="$expect" qemu-aarch64 "${cpu[@]}" -L /usr/aarch64-linux-gnu \
      "$build/$t" 2>&1)"
    rc=$?
    echo "$out"
    counts="$(grep -Eo '^# passed [0-9]+ failed [0-9]+ skipped [0-9]+' <<<"$out" | tail -n 1)"
    if [ -z "$counts" ]; then
      echo "not ok - $t: exited with $rc and no summary"
      f=$((f + 1))
    else
      read -r _ _ tp _ tf _ ts <<<"$counts"
      p=$((p + tp)) f=$((f + tf)) s=$((s + ts))
      [ "$rc" -ne 0 ] && [ "$tf" -eq 0 ] && f=$((f + 1)) # crashed after its summary
    fi
  done
  echo "## arm64 $level: passed $p failed $f skipped $s"
  total_p=$((total_p + p)) total_f=$((total_f + f)) total_s=$((total_s + s))
  [ "$f" -ne 0 ] && status=1
done
echo "# passed $total_p failed $total_f skipped $total_s"
exit $status
