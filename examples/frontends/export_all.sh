#!/usr/bin/env bash
# Regenerates the whole frontend corpus: installs the pinned frontends (setup.sh, quick when
# present), runs the three export scripts, checks the result and prints the op-count table.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$here/setup.sh"
cd "$here"
status=0
for route in jax tf torch; do
  .venv/bin/python "export_$route.py" || status=1
done
.venv/bin/python check_corpus.py --mlir-opt "${MLIR_OPT:-/usr/lib/llvm-22/bin/mlir-opt}" corpus | tail -1
.venv/bin/python op_table.py corpus/manifest.json
exit $status
