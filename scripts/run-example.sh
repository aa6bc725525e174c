#!/usr/bin/env bash
# The main job: take the example models through ipu-opt, compile a GEMM to a package and run it on
# the simulated C600 (sim:c600, 1472 tiles). The run ends like the seed's: profile=...,
# referenceMaximumAbsoluteError=... numericalTest=PASS (the package's source module evaluated by
# the host reference) and package=... tiles=1472 hardwareTest=PASS; a failed test exits 1.
# See README.md "Status" for what is still being built.
set -euo pipefail
cd "$(dirname "$0")/.."
# Python tools (lit, the oracles' numpy and ml_dtypes) from the environment scripts/setup.sh made.
export PATH="$PWD/.venv/bin:$PATH"
cargo build -p ipu-driver --bins
BIN=target/debug
OUT=artifacts/example
mkdir -p "$OUT"
export RUST_LOG="${RUST_LOG:-info}"

echo "== ipu-opt: verify, simplify and annotate examples/siglip_mlp.mlir =="
"$BIN/ipu-opt" examples/siglip_mlp.mlir \
  --pass-pipeline='builtin.module(ipu-cleanup, ipu-annotate-flops)' \
  --mlir-timing --mlir-pass-statistics -o "$OUT/siglip_mlp-simplified.mlir"

echo "== ipu-opt: ipu-compile plans and lowers the FP8 GEMM (250x256x512: a split GEMM, operands encoded in FP8 by the host) for 64 tiles =="
"$BIN/ipu-opt" examples/gemm_fp8.mlir \
  --pass-pipeline='builtin.module(ipu-compile{tiles=64 precision=fp8 fp8-scale=0})' \
  -o "$OUT/gemm_fp8-tiles.mlir"

echo "== ipu-translate: the emitted ipu_tile program -> $OUT/model-final.ipuexe =="
"$BIN/ipu-translate" --ipu-to-package "$OUT/gemm_fp8-tiles.mlir" --precision fp8 \
  -o "$OUT/model-final.ipuexe"

echo "== ipu run: the package on sim:c600, checked against the host reference =="
"$BIN/ipu" run "$OUT/model-final.ipuexe" --device sim:c600 --artifacts "$OUT"

echo "== ipu run: compile the SigLIP MLP (examples/siglip_mlp.mlir) for all 1472 tiles and run it on sim:c600 =="
"$BIN/ipu" run examples/siglip_mlp.mlir --device sim:c600 --artifacts "$OUT"
