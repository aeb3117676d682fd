#!/usr/bin/env bash
# Packs the binaries of a CUDA build (default /tmp/cuda-build) into .devcarry/bin.tar.xz for
# cuda_device.sh on a GPU machine (stripped; the working tree that travels is limited).
set -eu
B=${1:-/tmp/cuda-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d)
# What cuda_device.sh runs (every phase: test, models, arches, graphs, bench).
for f in libleapfrog_cuda.so cuda_layout_test cuda_ops_test cuda_model_test backend_ops_test \
  backend_arch_ops_test lf_bench lf_run lf_randmodel; do
  cp "$B/$f" "$T/"
  strip --strip-unneeded "$T/$f"
done
mkdir -p "$ROOT/.devcarry"
tar cJf "$ROOT/.devcarry/bin.tar.xz" -C "$T" .
rm -rf "$T"
ls -la "$ROOT/.devcarry"
