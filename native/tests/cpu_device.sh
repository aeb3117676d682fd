#!/usr/bin/env bash
# CPU benchmarks on the device host's Xeon (a quiet machine, unlike the 2-core development VM):
# two CPU cores (taskset 0,1), 2 threads, as issue 13 measures. The binaries come packed in
# .devcarry/cpu-bin.tar.xz as lf_bench.<variant> (and lf_matbench.<variant>, lf_randmodel), built
# here; the random-weight models are written on the device (they are too large to carry).
#   bash native/tests/cpu_device.sh ROUNDS 'MODELS' VARIANT...
# alternates the builds' lf_bench round by round on each model whose name matches a pattern in
# MODELS (e.g. '0.5b-Q8_0 1.5b-*') and prints each pass size's min and median (and its ratio to
# one-token passes); a variant named X@avx512 runs build X with LEAPFROG_CPU_ISA lowered.
# Output goes to $OUT/cpu-device.log when OUT is set. Packing, here (the device has no compiler
# for this tree's CMake set-up to rely on, and building there costs device time):
#   T=$(mktemp -d); cp BUILD_A/lf_bench $T/lf_bench.A; cp BUILD_B/lf_bench $T/lf_bench.B
#   cp native/build/{lf_randmodel,lf_roofline} $T/; strip --strip-unneeded $T/*
#   tar cJf .devcarry/cpu-bin.tar.xz -C $T .      # then run with carry [".devcarry"]
set -u
ROUNDS=$1
MODELS=$2
shift 2
VARIANTS="$*"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=/tmp/lf-cpu-bin
M=/tmp/lf-cpu-models
LOG=${OUT:-/tmp}/cpu-device.log
mkdir -p "$BIN" "$M"
[ -x "$BIN/lf_randmodel" ] || tar xJf "$ROOT/.devcarry/cpu-bin.tar.xz" -C "$BIN"
exec > >(tee -a "$LOG") 2>&1
echo "== $(date -u +%FT%TZ) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
# The roofs of the two cores at this moment (the host is shared: a low figure says it is busy),
# and the int8 roof of each lowered level a variant asks for (X@avxvnni: the floor of that
# level's passes is computed from its own roof; the probe's fp32 figure stays the CPU's widest).
if [ -x "$BIN/lf_roofline" ]; then
  taskset -c 0,1 "$BIN/lf_roofline" --threads 2 | tail -1
  for isa in $(printf '%s\n' $VARIANTS | sed -n 's/.*@//p' | sort -u); do
    [ "$isa" = avx512 ] && isa=avx512vnni  # the probe's name for that level
    LEAPFROG_ROOFLINE_ISA=$isa taskset -c 0,1 "$BIN/lf_roofline" --threads 2 | tail -1
  done
fi
for spec in "0.5b Q8_0" "1.5b Q8_0" "1.5b Q4_K_M"; do
  set -- $spec
  f=$M/$1-$2.gguf
  [ -f "$f" ] || (cd "$BIN" && ./lf_randmodel "$f" --shape "$1" --quant "$2" >/dev/null)
done

run() {  # variant model -> JSON of one lf_bench run
  local v=$1 isa=
  case $v in *@*) isa=${v#*@}; v=${v%@*} ;; esac
  LEAPFROG_CPU_ISA=$isa taskset -c 0,1 "$BIN/lf_bench.$v" "$2" --threads 2 --reps 3 \
    --ctx-tokens 1024 --batches 1,16,32 --sections batch,pp --pp 512
}
export -f run
export BIN

for pat in $MODELS; do
  for f in "$M"/$pat.gguf; do
  python3 - "$f" "$ROUNDS" $VARIANTS <<'EOF'
import json, os, statistics, subprocess, sys
model, rounds, variants = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
res = {v: {} for v in variants}
for _ in range(rounds):
    for v in variants:
        out = subprocess.run(['bash', '-c', 'run "$0" "$1"', v, model], capture_output=True,
                             text=True, env=os.environ).stdout
        d = json.loads(out)
        for p in d['batch']['passes']:
            res[v].setdefault(p['n'], []).extend(p['ms'])
        res[v].setdefault('pp512 t/s', []).append(d['pp']['tokens_per_second'])
print(os.path.basename(model))
for v in variants:
    r = res[v]
    n1 = statistics.median(r[1])
    cells = ['n=%s min %.1f med %.1f (%.2fx)' % (n, min(x), statistics.median(x), statistics.median(x) / n1)
             for n, x in r.items() if n != 'pp512 t/s']
    print('  %-14s %s  pp512 %.0f t/s' % (v, '  '.join(cells), statistics.median(r['pp512 t/s'])))
EOF
  done
done
