#!/usr/bin/env bash
# The CUDA backend's proof run on a GPU machine (the lent H200: no Node, no network).
# Expects the binaries built elsewhere in .devcarry/bin.tar.xz (see cuda_pack.sh), or builds
# them here when that is absent (cmake + nvcc, sm_90 only). Logs go to $OUT (or /tmp/lf-out).
#
#   bash native/tests/cuda_device.sh [test] [models] [bench] [graphs] [bench7b]
set -u
OUT=${OUT:-/tmp/lf-out}
mkdir -p "$OUT"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=/tmp/lf-bin
M=/tmp/lf-models
mkdir -p "$BIN" "$M"
LOG="$OUT/device.log"
say() { echo "== $*" | tee -a "$LOG"; }
step() {  # step SECONDS NAME cmd...: runs with a time limit, output to the log
  local limit=$1 name=$2
  shift 2
  say "$name"
  local t0=$(date +%s%N)
  timeout "$limit" "$@" >>"$LOG" 2>&1
  local rc=$?
  local t1=$(date +%s%N)
  say "$name: rc=$rc ($(( (t1 - t0) / 1000000 )) ms)"
  return $rc
}

phases=${*:-test models bench}
say "GPU"
nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used,clocks.sm,clocks.mem --format=csv >>"$LOG" 2>&1
if [ -f "$ROOT/.devcarry/bin.tar.xz" ]; then
  tar xJf "$ROOT/.devcarry/bin.tar.xz" -C "$BIN"
else
  step 400 "build" bash -c "cmake -S '$ROOT/native' -B /tmp/lf-build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null && cmake --build /tmp/lf-build -j16 >/dev/null && cp /tmp/lf-build/{libleapfrog_cuda.so,cuda_*_test,backend_ops_test,lf_bench,lf_run,lf_randmodel} '$BIN'/"
fi
cd "$BIN" || exit 1
ls -la >>"$LOG"
DATA="$ROOT/.devcarry"

for phase in $phases; do
  case $phase in
    test)
      step 60 "cuda_layout_test" ./cuda_layout_test
      step 240 "cuda_ops_test" ./cuda_ops_test
      step 240 "backend_ops_test" ./backend_ops_test
      ;;
    models)
      step 60 "tiny models" bash -c "
        ./lf_randmodel $M/tiny-q8.gguf --shape tiny --quant Q8_0 --vocab 3000 &&
        ./lf_randmodel $M/tiny-q4km-l.gguf --shape tiny --quant Q4_K_M --arch llama --vocab 3000 &&
        ./lf_randmodel $M/tiny-q5k-q3.gguf --shape tiny --quant Q5_K --arch qwen3 --vocab 3000 &&
        ./lf_randmodel $M/tiny-q4_0.gguf --shape tiny --quant Q4_0 --vocab 3000 &&
        ./lf_randmodel $M/tiny-f16.gguf --shape tiny --quant F16 --vocab 3000 &&
        ./lf_randmodel $M/0.5b-q4km.gguf --shape 0.5b --quant Q4_K_M --layers 6"
      MODELS="$M/tiny-q8.gguf:$M/tiny-q4km-l.gguf:$M/tiny-q5k-q3.gguf:$M/tiny-q4_0.gguf:$M/tiny-f16.gguf:$M/0.5b-q4km.gguf"
      [ -f "$DATA/stories260K.gguf" ] && MODELS="$MODELS:$DATA/stories260K.gguf"
      for f in "$ROOT"/models/leapfrog-coder*.gguf; do [ -f "$f" ] && MODELS="$MODELS:$f"; done
      step 300 "cuda_model_test" env LEAPFROG_CUDA_MODELS="$MODELS" ./cuda_model_test
      step 120 "memcheck (backend_ops_test attention, cuda_ops_test multi)" bash -c "
        compute-sanitizer --tool memcheck --error-exitcode 9 --print-limit 6 ./backend_ops_test attention 2>&1 | head -60;
        compute-sanitizer --tool memcheck --error-exitcode 9 ./cuda_ops_test multi 2>&1 | tail -4;
        compute-sanitizer --tool racecheck --error-exitcode 9 ./backend_ops_test matmul_multi 2>&1 | tail -4"
      if [ -f "$DATA/stories260K.gguf" ]; then
        # llama.cpp's greedy continuation of "Once upon a time" (stories260K.expected.json).
        step 30 "stories260K cpu" ./lf_run "$DATA/stories260K.gguf" 1 403 407 261 378 --n 24 --backend cpu
        step 30 "stories260K cuda" ./lf_run "$DATA/stories260K.gguf" 1 403 407 261 378 --n 24 --backend cuda
      fi
      ;;
    profile)
      step 200 "ncu" env LEAPFROG_CUDA_PROFILE=1 ncu --clock-control none --section SpeedOfLight \
        --section Occupancy --section LaunchStats --section WarpStateStats --section SourceCounters \
        -k regex:"attn|mmq" ./cuda_ops_test profile
      ;;
    bench)
      step 120 "kernel bench" env LEAPFROG_CUDA_BENCH=1 ./cuda_ops_test bench
      step 120 "write 1.5B Q4_K_M" ./lf_randmodel $M/1.5b-q4km.gguf --shape 1.5b --quant Q4_K_M
      step 120 "1.5B greedy cpu vs cuda" env LEAPFROG_CUDA_MODELS=$M/1.5b-q4km.gguf ./cuda_model_test greedy
      step 180 "lf_bench 1.5B Q4_K_M" ./lf_bench $M/1.5b-q4km.gguf --backend cuda --sections pp,tg,batch --batches 1,2,4,8,16,32,64 --tg 128 --ctx-tokens 1024 --reps 5
      step 120 "write 0.5B Q8_0" ./lf_randmodel $M/0.5b-q8.gguf --shape 0.5b --quant Q8_0
      step 180 "lf_bench 0.5B Q8_0" ./lf_bench $M/0.5b-q8.gguf --backend cuda --sections tg,batch --batches 1,16,32 --tg 128 --ctx-tokens 1024 --reps 5
      ;;
    graphs)
      # Plain launches (LEAPFROG_CUDA_GRAPHS=0) against graph replays, same binary, same file.
      for spec in "1.5b Q4_K_M" "0.5b Q8_0" "7b Q4_K_M" "7b Q8_0"; do
        set -- $spec
        f=$M/$1-$2.gguf
        [ -f "$f" ] || step 200 "write $1 $2" ./lf_randmodel "$f" --shape $1 --quant $2
        for g in 0 1; do
          step 180 "lf_bench $1 $2 graphs=$g" env LEAPFROG_CUDA_GRAPHS=$g ./lf_bench "$f" --backend cuda \
            --sections tg,batch --batches 1,2,4,8,16,32,64 --tg 128 --ctx-tokens 1024 --reps 5
        done
        case $1 in 7b) rm -f "$f" ;; esac
      done
      ;;
    bench7b)
      step 200 "write 7B Q4_K_M" ./lf_randmodel $M/7b-q4km.gguf --shape 7b --quant Q4_K_M
      step 180 "lf_bench 7B Q4_K_M" ./lf_bench $M/7b-q4km.gguf --backend cuda --sections pp,tg,batch --batches 1,16,32,64 --tg 128 --ctx-tokens 1024 --reps 5
      rm -f $M/7b-q4km.gguf
      step 200 "write 7B Q8_0" ./lf_randmodel $M/7b-q8.gguf --shape 7b --quant Q8_0
      step 180 "lf_bench 7B Q8_0" ./lf_bench $M/7b-q8.gguf --backend cuda --sections tg,batch --batches 1,16,32 --tg 128 --ctx-tokens 1024 --reps 5
      ;;
  esac
done
say "summary"
grep -E "^(ok|not ok|skip|#|==|\{)" "$LOG" | grep -vE "^== .*: rc=0" | tail -150
