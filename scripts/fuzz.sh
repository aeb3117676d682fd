#!/usr/bin/env bash
# Fuzzes the GGUF reader with libFuzzer (clang from Debian) for N seconds (default 60).
# Usage: scripts/fuzz.sh [seconds]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
cmake -S native -B native/build-fuzz -DLEAPFROG_FUZZ=ON -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined -fsanitize=fuzzer-no-link" >/dev/null
cmake --build native/build-fuzz --target gguf_fuzz --parallel 2 >/dev/null
work="$(mktemp -d)"
cp native/fuzz/corpus/* "$work/"
./native/build-fuzz/gguf_fuzz -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 "$work" 2>&1 | tail -n 12
