#!/bin/bash
# Benchmark (not a test): batched passes of two lf_bench builds, each run from several copies
# of its binary, in shuffled turns. Why copies: on the 2-core Zen 5 VM of session 23 the same
# bytes copied to different files ran 16-token passes of the 0.5B Q8_0 up to 11 % apart, copy
# for copy, every round (where the file's pages lie matters, not its code), so two builds
# compared one file each can differ by that much with no change between them.
# Prints one line per run, then per build the mean over runs of the median and of the minimum
# pass time per size. BENCHMARKS.md, session 23, has the figures.
#
#   A=old/lf_bench B=new/lf_bench M=model.gguf [BATCHES=1,16,32] [COPIES=4] [ROUNDS=2] \
#     [REPS=20] [CTX=1024] bash test/bench/ab-copies.sh
set -euo pipefail
A=${A:?set A to the first lf_bench}
B=${B:?set B to the second lf_bench}
M=${M:?set M to a GGUF model}
BATCHES=${BATCHES:-1,16,32}
COPIES=${COPIES:-4}
ROUNDS=${ROUNDS:-2}
REPS=${REPS:-20}
CTX=${CTX:-1024}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
runs=()
for c in $(seq 1 "$COPIES"); do
  cp "$A" "$dir/A$c"
  cp "$B" "$dir/B$c"
  runs+=("A$c" "B$c")
done
out="$dir/runs.txt"
for _ in $(seq 1 "$ROUNDS"); do
  for r in $(printf '%s\n' "${runs[@]}" | shuf); do
    "$dir/$r" "$M" --threads 2 --reps "$REPS" --ctx-tokens "$CTX" --batches "$BATCHES" \
      --sections batch 2>/dev/null | tail -1 | node -e '
        const d = JSON.parse(require("fs").readFileSync(0, "utf8"));
        const cells = d.batch.passes.map((p) => `${p.n}:${p.median_ms.toFixed(2)}/${Math.min(...p.ms).toFixed(2)}`);
        console.log(process.argv[1], cells.join(" "));' "$r" | tee -a "$out"
  done
done
# Per build: mean of medians / mean of minima for each size.
node -e '
  const lines = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n");
  const acc = {};
  for (const line of lines) {
    const [run, ...cells] = line.split(" ");
    const build = run[0];
    for (const c of cells) {
      const [n, v] = c.split(":");
      const [med, min] = v.split("/").map(Number);
      const k = `${build} n=${n}`;
      (acc[k] ??= []).push([med, min]);
    }
  }
  for (const [k, v] of Object.entries(acc).sort()) {
    const mean = (i) => (v.reduce((s, x) => s + x[i], 0) / v.length).toFixed(2);
    console.log(`${k}: mean median ${mean(0)} ms, mean min ${mean(1)} ms (${v.length} runs)`);
  }' "$out"
