#!/usr/bin/env bash
# Flash attention at the anchor's measured sizes (../shared/design/ANCHOR-PLANS.md, section 3:
# non-causal F16, 16 heads, sequence 1024, head dims 48 / 64 / 72, batch 1 and 8) and the other
# real-model attention shapes of issue 17, compiled and run on the simulated C600 (1472 tiles).
# Prints each run's cycles line, numerical test and the device-program cycles against the
# anchor's hardware cycles. Usage: scripts/bench-attention.sh [path/to/ipu] (default: the
# release build; build it with `cargo build --release -p ipu-driver`).
set -euo pipefail
IPU=${1:-$(dirname "$0")/../target/release/ipu}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
# name, shape (leading axes x sequence x head dim), anchor hardware cycles (0: none)
CASES=(
  "flash_h768 16x1024x48 348378"
  "flash_h1024 16x1024x64 426132"
  "flash_h1152 16x1024x72 524616"
  "flash_h1152_b8 8x16x1024x72 1903842"
  "vit_b_12x197x64 12x197x64 0"
  "gpt2_12x1024x64 12x1024x64 0"
  "siglip_16x729x72 16x729x72 0"
)
for case in "${CASES[@]}"; do
  read -r name shape anchor <<<"$case"
  t="tensor<${shape}xf16>"
  cat >"$WORK/$name.mlir" <<MLIR
func.func @attention(%q: $t, %k: $t, %v: $t) -> $t {
  %0 = "ipu.attention"(%q, %k, %v) : ($t, $t, $t) -> $t
  return %0 : $t
}
MLIR
  start=$(date +%s.%N)
  out=$("$IPU" run "$WORK/$name.mlir" --tiles 1472 --artifacts "$WORK/a" 2>&1 || true)
  wall=$(echo "$(date +%s.%N) - $start" | bc)
  cycles=$(grep -o 'deviceProgramCycles=[0-9]*' <<<"$out" | head -1 | cut -d= -f2 || true)
  if [ -z "$cycles" ]; then
    echo "$name $shape: FAILED: $(grep -m1 'error' <<<"$out")"
    continue
  fi
  line=$(grep -m1 'simulatedCycles=' <<<"$out")
  numerical=$(grep -o 'numericalTest=[A-Z]*' <<<"$out" | head -1)
  if [ "$anchor" -gt 0 ]; then
    ratio=$(echo "scale=1; 100 * $cycles / $anchor" | bc)
    echo "$name $shape: $line $numerical anchor=$anchor ratio=${ratio}% wall=${wall}s"
  else
    echo "$name $shape: $line $numerical wall=${wall}s"
  fi
done
