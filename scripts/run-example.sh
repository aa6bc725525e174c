#!/usr/bin/env bash
# The main job: compile the example model (examples/siglip_mlp.mlir) and run it on the simulated
# C600. Stages that have landed run; see README.md "Status" for what is still being built.
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL="${1:-examples/siglip_mlp.mlir}"
cargo build --release -p ipu-driver --bins
BIN=target/release
mkdir -p artifacts/example
echo "== ipu-opt: verify and simplify ${MODEL} =="
RUST_LOG="${RUST_LOG:-info}" "$BIN/ipu-opt" "$MODEL" \
  --pass-pipeline='builtin.module(ipu-cleanup, ipu-annotate-flops)' \
  --mlir-timing --mlir-pass-statistics -o artifacts/example/model-simplified.mlir
echo "wrote artifacts/example/model-simplified.mlir"
if [ -x "$BIN/ipu" ] && "$BIN/ipu" --help 2>/dev/null | grep -q "run"; then
  echo "== ipu run: compile to a package and run on sim:c600 =="
  "$BIN/ipu" run "$MODEL" --device sim:c600 --artifacts artifacts/example
fi
