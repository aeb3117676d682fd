#!/usr/bin/env bash
# On the GPU machine: speculative decoding with the bundled pair on CUDA and on the CPU, from
# binaries packed by native/tests/cuda_pack.sh into .devcarry/bin.tar.xz and prompts as token
# ids in .devcarry/ids-*.txt (`leapfrog tokenize --file F --json`, first 300 ids).
set -u
OUT=${OUT:-/tmp/lf-out}; mkdir -p "$OUT" /tmp/lf-bin
tar xJf .devcarry/bin.tar.xz -C /tmp/lf-bin
nvidia-smi --query-gpu=name --format=csv,noheader
for be in cuda cpu; do
for p in .devcarry/ids-*.txt; do
  for mode in off ngram draft auto; do
    LEAPFROG_CUDA_LIB=/tmp/lf-bin/libleapfrog_cuda.so timeout 120 /tmp/lf-bin/lf_bench models/leapfrog-coder.gguf --backend $be --threads 16 \
      --spec $mode --draft models/leapfrog-coder-draft.gguf --prompt-ids $p --max-tokens 128 --reps 3 --budget 16 2>>$OUT/err.log \
      | python3 -c "import sys,json; d=json.loads(sys.stdin.read()); print('$be', '$(basename $p)', '$mode', round(d['tokens_per_second']), round(d['accepted_per_pass'],2), d['target_passes'], d['drafted'], d['accepted'], hash(tuple(d['tokens'])) % 100000)" | tee -a $OUT/spec.txt
  done
done
done
