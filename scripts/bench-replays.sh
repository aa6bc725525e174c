#!/usr/bin/env bash
# Replays of the anchor's hardware-measured runs (examples/replay/<name>.plan.json, facts in
# ../shared/design/ANCHOR-PLANS.md) on the simulated C600: each is `ipu run <name>.mlir --plan
# <name>.plan.json`, which prints the simulated device program against the measured cycles
# (fidelityError) and whether the replay is exact. A replay our lowering cannot yet follow
# prints its error. Usage: scripts/bench-replays.sh [path/to/ipu] (default: the debug build).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
IPU=${1:-$ROOT/target/debug/ipu}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
for plan in "$ROOT"/examples/replay/*.plan.json; do
  name=$(basename "$plan" .plan.json)
  start=$(date +%s.%N)
  out=$("$IPU" run "$ROOT/examples/replay/$name.mlir" --plan "$plan" --artifacts "$WORK" 2>&1 || true)
  wall=$(echo "$(date +%s.%N) - $start" | bc)
  fidelity=$(grep -m1 '^hardwareCycles=' <<<"$out" || true)
  if [ -z "$fidelity" ]; then
    echo "$name: FAILED: $(grep -m1 'error' <<<"$out")"
    continue
  fi
  device=$(grep -o 'deviceProgramCycles=[0-9]*' <<<"$out" | head -1)
  numerical=$(grep -o 'numericalTest=[A-Z]*' <<<"$out" | head -1)
  echo "$name: $device $fidelity $numerical wall=${wall}s"
done
