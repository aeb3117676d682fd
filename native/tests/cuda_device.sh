#!/usr/bin/env bash
# The CUDA backend's proof run on a GPU machine (the lent H200: no Node, no network).
# Expects the binaries built elsewhere in .devcarry/bin.tar.xz (see cuda_pack.sh), or builds
# them here when that is absent (cmake + nvcc, sm_90 only). Logs go to $OUT (or /tmp/lf-out).
#
#   bash native/tests/cuda_device.sh [test] [models] [arches] [types] [typebench] [graphs]
#                                    [graphbench] [moe] [bench] [bench7b]
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
  step 400 "build" bash -c "cmake -S '$ROOT/native' -B /tmp/lf-build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null && cmake --build /tmp/lf-build -j16 >/dev/null && cp /tmp/lf-build/{libleapfrog_cuda.so,cuda_*_test,backend_ops_test,backend_arch_ops_test,model_random_test,lf_bench,lf_run,lf_randmodel} '$BIN'/"
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
    arches)
      # The ops of starcoder2/granite/phi3/gemma* on the GPU: the op test against its
      # double-precision definitions, then whole random models against the CPU.
      step 120 "backend_arch_ops_test" ./backend_arch_ops_test
      ARCH_MODELS=""
      for a in starcoder2 granite phi3 gemma gemma2 gemma3; do
        step 30 "write tiny $a" ./lf_randmodel $M/tiny-$a.gguf --shape tiny --quant Q8_0 --arch $a --vocab 3000
        ARCH_MODELS="$ARCH_MODELS:$M/tiny-$a.gguf"
      done
      step 300 "cuda_model_test (arches)" env LEAPFROG_CUDA_MODELS="${ARCH_MODELS#:}" ./cuda_model_test
      ;;
    types)
      # Issue 20's tensor types and the mixture of experts on the GPU: whole random models
      # against the CPU (teacher-forced logits, batched rows, speculation).
      TYPE_MODELS=""
      for q in Q4_1 Q5_1 Q2_K Q3_K IQ4_NL IQ4_XS; do
        step 30 "write tiny $q" ./lf_randmodel $M/tiny-$q.gguf --shape tiny --quant $q --vocab 3000
        TYPE_MODELS="$TYPE_MODELS:$M/tiny-$q.gguf"
      done
      for q in Q4_K_M Q8_0; do
        step 30 "write tiny-moe $q" ./lf_randmodel $M/tiny-moe-$q.gguf --shape tiny-moe --quant $q --vocab 3000
        TYPE_MODELS="$TYPE_MODELS:$M/tiny-moe-$q.gguf"
      done
      step 60 "write 0.5B IQ4_XS (6 layers)" ./lf_randmodel $M/0.5b-iq4xs.gguf --shape 0.5b --quant IQ4_XS --layers 6
      step 60 "write 30b-a3b Q4_K_M (2 layers)" ./lf_randmodel $M/moe-4l.gguf --shape 30b-a3b --quant Q4_K_M --layers 2 --vocab 32000
      TYPE_MODELS="$TYPE_MODELS:$M/0.5b-iq4xs.gguf:$M/moe-4l.gguf"
      step 400 "cuda_model_test (types, moe)" env LEAPFROG_CUDA_MODELS="${TYPE_MODELS#:}" ./cuda_model_test
      ;;
    typebench)
      # Decode and batched passes of the new types on the GPU (1.5B shape), and the
      # Qwen3-Coder-30B-A3B shape (8 of 48 layers) on the GPU and on the host's CPU.
      for q in Q4_1 Q2_K Q3_K IQ4_XS; do
        step 90 "write 1.5B $q" ./lf_randmodel $M/1.5b-$q.gguf --shape 1.5b --quant $q
        step 120 "lf_bench 1.5B $q" ./lf_bench $M/1.5b-$q.gguf --backend cuda --sections tg,batch --batches 1,16,32 --tg 64 --ctx-tokens 1024 --reps 3
        rm -f $M/1.5b-$q.gguf
      done
      step 200 "write 30b-a3b Q4_K_M (8 layers)" ./lf_randmodel $M/moe-8l.gguf --shape 30b-a3b --quant Q4_K_M --layers 8
      step 120 "lf_bench moe-8l cuda" ./lf_bench $M/moe-8l.gguf --backend cuda --sections tg,batch --batches 1,16,32 --tg 64 --ctx-tokens 1024 --reps 3
      step 200 "lf_bench moe-8l cpu 16 threads" ./lf_bench $M/moe-8l.gguf --backend cpu --threads 16 --sections tg,batch --batches 1,16,32 --tg 64 --ctx-tokens 1024 --reps 3
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
      # Passes recorded and replayed as CUDA graphs (backend/cuda/pass_recorder.h). First the
      # recorder at the level of ops: replays read new inputs, a mid-pass download (the MoE
      # router's) sees the ops before it, fused launches equal separate ops (YaRN rope).
      step 60 "cuda_ops_test (pass recorder)" ./cuda_ops_test pass_recorder
      step 60 "cuda_ops_test (fusions)" ./cuda_ops_test fused
      # Then whole random models, the architectures' ops included (gemma2: softcap, sliding
      # window, GELU, post-norms, scaling; starcoder2: LayerNorm, biases; a MoE, whose passes
      # download the router's logits mid-pass and so never become graphs): every pass's
      # logits with graphs bit-identical to LEAPFROG_CUDA_GRAPHS=0 (decode, rolled-back
      # verification passes, a token tree), "# ... replays" lines show graphs replayed; the
      # graphed backend against the CPU (greedy, teacher-forced) and over 10,000 passes of
      # 1..33 tokens (no device memory growth once every size is captured).
      G_MODELS=""
      for spec in "q8 Q8_0 qwen2" "q4km-l Q4_K_M llama" "q5k-q3 Q5_K qwen3" "f16 F16 qwen2" \
        "gemma2 Q8_0 gemma2" "starcoder2 Q8_0 starcoder2" "moe Q4_K_M qwen3moe"; do
        set -- $spec
        f=$M/tiny-$1.gguf
        shape=tiny
        [ "$3" = qwen3moe ] && shape=tiny-moe  # a pass that downloads mid-pass (the router)
        [ -f "$f" ] || step 30 "write tiny $1" ./lf_randmodel "$f" --shape $shape --quant $2 --arch $3 --vocab 3000
        G_MODELS="$G_MODELS:$f"
      done
      G_MODELS="${G_MODELS#:}"
      step 120 "cuda_model_test graph (graphs = plain launches)" \
        env LEAPFROG_CUDA_MODELS="$G_MODELS" ./cuda_model_test graph_replays
      step 120 "cuda_model_test greedy (graphs vs cpu)" \
        env LEAPFROG_CUDA_MODELS="$G_MODELS" ./cuda_model_test greedy
      # Three sessions one after another on each model (plain, chain, tree): a session's
      # memory freed and allocated again must not replay the graphs of the one before.
      step 120 "cuda_model_test speculative (graphs)" \
        env LEAPFROG_CUDA_MODELS="$G_MODELS" ./cuda_model_test speculative
      step 90 "cuda_model_test memory growth (graphs)" env LEAPFROG_CUDA_MODELS="$M/tiny-q8.gguf" \
        ./cuda_model_test memory_growth
      # Decoding with and without graphs on a launch-bound model (0.5B: 24 layers of small
      # kernels); the JSON's "counters" show the replays.
      [ -f "$M/0.5b-q8.gguf" ] || step 120 "write 0.5B Q8_0" ./lf_randmodel $M/0.5b-q8.gguf --shape 0.5b --quant Q8_0
      for g in 0 1; do
        step 90 "lf_bench 0.5B Q8_0 graphs=$g" env LEAPFROG_CUDA_GRAPHS=$g ./lf_bench $M/0.5b-q8.gguf \
          --backend cuda --sections tg,batch --batches 1,16 --tg 64 --ctx-tokens 512 --reps 3
      done
      ;;
    moe)
      # The mixture of experts on the GPU: grouped products over slices of the gathered rows
      # against one product per expert, whole MoE models against the CPU, and the batched
      # passes of the 30B-A3B shape (8 of 48 layers).
      step 60 "backend_ops_test (grouped products)" ./backend_ops_test matmul_grouped
      if [ -f "$ROOT/.devcarry/planted.so.xz" ]; then  # a build with a planted bug must fail
        mkdir -p /tmp/lf-planted && cp ./backend_ops_test /tmp/lf-planted/ &&
          xz -dc "$ROOT/.devcarry/planted.so.xz" > /tmp/lf-planted/libleapfrog_cuda.so
        step 60 "backend_ops_test with the planted bug (must fail)" /tmp/lf-planted/backend_ops_test matmul_grouped_over
      fi
      MOE_MODELS=""
      for q in Q4_K_M Q8_0; do
        f=$M/tiny-moe-$q.gguf
        [ -f "$f" ] || step 30 "write tiny-moe $q" ./lf_randmodel "$f" --shape tiny-moe --quant $q --vocab 3000
        MOE_MODELS="$MOE_MODELS:$f"
      done
      step 60 "write 30b-a3b Q4_K_M (2 layers)" ./lf_randmodel $M/moe-2l.gguf --shape 30b-a3b --quant Q4_K_M --layers 2 --vocab 32000
      step 300 "cuda_model_test (moe)" env LEAPFROG_CUDA_MODELS="${MOE_MODELS#:}:$M/moe-2l.gguf" ./cuda_model_test
      [ -f $M/moe-8l.gguf ] || step 200 "write 30b-a3b Q4_K_M (8 layers)" ./lf_randmodel $M/moe-8l.gguf --shape 30b-a3b --quant Q4_K_M --layers 8
      step 120 "lf_bench moe-8l cuda" ./lf_bench $M/moe-8l.gguf --backend cuda --sections tg,batch --batches 1,16,32 --tg 64 --ctx-tokens 1024 --reps 3
      ;;
    graphbench)
      # Decode and verification passes with and without CUDA graphs: 1.5B and 7B Q4_K_M.
      for shape in 1.5b 7b; do
        f=$M/$shape-q4km.gguf
        [ -f "$f" ] || step 200 "write $shape Q4_K_M" ./lf_randmodel "$f" --shape $shape --quant Q4_K_M
        for g in 0 1; do
          step 120 "lf_bench $shape Q4_K_M graphs=$g" env LEAPFROG_CUDA_GRAPHS=$g ./lf_bench "$f" \
            --backend cuda --sections tg,batch --batches 1,16,32 --tg 128 --ctx-tokens 1024 --reps 3
        done
        rm -f "$f"
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
