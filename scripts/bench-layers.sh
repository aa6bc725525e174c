#!/usr/bin/env bash
# Real transformer layers at their real sizes (issue 17), written by
# examples/gen_encoder_layer.py and compiled and run on the simulated C600 (1472 tiles),
# each checked against the host reference. Prints one line per run: the layer, its
# precision, the device-program cycles, the refined estimate's error, the numerical test and
# the wall time (compile, simulation and the f64 reference), or the first error when it does
# not compile. Usage: scripts/bench-layers.sh [path/to/ipu] [layer[:precision] ...]
# (default ipu: the release build, `cargo build --release -p ipu-driver`; default runs:
# every layer in F16, So400m's in FP8, and So400m's at batch 4 in both; encoders as
# <layer>_x<N>, e.g. tiny_x3; a batch of N images as <layer>-b<N>, e.g. siglip_so400m-b4).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
IPU=${1:-$HERE/../target/release/ipu}
shift || true
RUNS=("$@")
if [ ${#RUNS[@]} -eq 0 ]; then
  RUNS=(vit_b16:f16 bert_base:f16 gpt2_small:f16 siglip_so400m:f16 siglip_so400m:fp8
    siglip_so400m-b4:f16 siglip_so400m-b4:fp8)
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
for run in "${RUNS[@]}"; do
  layer=${run%%:*}
  precision=f16
  [[ $run == *:* ]] && precision=${run#*:}
  name=$layer
  args=(--out "$WORK")
  # The generator writes <layer>[_x<layers>][_b<batch>].mlir.
  file=$name
  if [[ $name =~ ^(.*)-b([0-9]+)$ ]]; then
    name=${BASH_REMATCH[1]}
    args+=(--batch "${BASH_REMATCH[2]}")
    file=${name}_b${BASH_REMATCH[2]}
  fi
  if [[ $name =~ ^(.*)_x([0-9]+)$ ]]; then
    name=${BASH_REMATCH[1]}
    args+=(--layers "${BASH_REMATCH[2]}")
  fi
  python3 "$HERE/../examples/gen_encoder_layer.py" "${args[@]}" "$name" >/dev/null
  start=$(date +%s.%N)
  out=$("$IPU" run "$WORK/$file.mlir" --tiles 1472 --precision "$precision" \
    --artifacts "$WORK/a" 2>&1 || true)
  wall=$(echo "$(date +%s.%N) - $start" | bc)
  cycles=$(grep -o 'deviceProgramCycles=[0-9]*' <<<"$out" | head -1 | cut -d= -f2 || true)
  if [ -z "$cycles" ]; then
    echo "$layer $precision: FAILED: $(grep -m1 'error' <<<"$out" | cut -c1-400)"
    continue
  fi
  refined=$(grep -o 'refinedError=[-+0-9.]*%' <<<"$out" | head -1)
  numerical=$(grep -o 'numericalTest=[A-Z]*' <<<"$out" | head -1)
  printf '%s %s: deviceProgramCycles=%s %s %s wall=%.0fs\n' \
    "$layer" "$precision" "$cycles" "$refined" "$numerical" "$wall"
done
