#!/bin/bash
# Benchmark (not a test): decode speed with the packed-weight cache off (private anonymous
# huge pages) and on (the shared file mapping), alternated round by round so that a noisy
# machine weighs on both alike. Before each run it waits until no other process uses the CPU.
# One line per run; BENCHMARKS.md, "Shared packed weights (issue 18)", has the medians.
#
#   M=model.gguf ROUNDS=6 [LEAPFROG_CACHE_DIR=dir] bash test/bench/packed-cache-ab.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
M=${M:?set M to a GGUF model}
ROUNDS=${ROUNDS:-6}
if [ -z "${LEAPFROG_CACHE_DIR:-}" ]; then
  LEAPFROG_CACHE_DIR=$(mktemp -d)
  trap 'rm -rf "$LEAPFROG_CACHE_DIR"' EXIT  # the cache file is about the model's size
fi
export LEAPFROG_CACHE_DIR
wait_idle() {
  for _ in $(seq 1 120); do
    busy=$(ps -eo pid,pcpu,comm --no-headers | awk -v me=$$ '$2 > 20 && $1 != me {print $3}' |
      grep -v -E '^(ps|awk)$' | head -1 || true)
    [ -z "$busy" ] && return 0
    sleep 5
  done
  echo "still busy: $busy" >&2
}
# The first run with the cache on writes it: not timed.
LEAPFROG_PACKED_CACHE=on "$root/native/build/lf_bench" "$M" --threads 2 --sections tg --tg 1 --reps 1 \
  >/dev/null 2>&1
for r in $(seq 1 "$ROUNDS"); do
  for mode in off on; do
    wait_idle
    load=$(cut -d' ' -f1 /proc/loadavg)
    if [ "$mode" = off ]; then cache=off; else cache=on; fi
    LEAPFROG_PACKED_CACHE=$cache "$root/native/build/lf_bench" "$M" --threads 2 \
      --sections tg,batch --tg 64 --reps 3 --batches 1,16 --ctx-tokens 256 2>/dev/null |
      tail -1 | python3 -c "
import json, sys
d = json.load(sys.stdin); t = d['tg']; b = {p['n']: p['median_ms'] for p in d['batch']['passes']}
print('round $r $mode load1=$load load_ms=%.0f tg_tok_s=%.2f pass1=%.1f pass16=%.1f'
      % (d['load_ms'], t['tokens_per_second'], b[1], b[16]))"
  done
done
