#!/usr/bin/env bash
# Builds the Python package's wheel (python/: the ipu_opt module, maturin + PyO3) into
# target/wheels, with maturin pinned in a virtual environment of its own (target/maturin-venv).
#
#   scripts/build-python.sh            # release build
#   scripts/build-python.sh --dev      # the dev profile: reuses cargo's debug build, much faster
#   pip install target/wheels/ipu_opt-*.whl
#
# Extra arguments go to `maturin build`. `pip install ./python` builds the same package through
# pip (maturin is its build backend). The wheel links MLIR and LLVM statically and needs the
# system libraries scripts/setup.sh installs (libstdc++, libzstd, libffi).
set -euo pipefail
cd "$(dirname "$0")/.."
MATURIN_VERSION=1.16.0
VENV=target/maturin-venv
if [ "$("$VENV/bin/maturin" --version 2>/dev/null)" != "maturin $MATURIN_VERSION" ]; then
  echo "build-python: installing maturin $MATURIN_VERSION into $VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check "maturin==$MATURIN_VERSION"
fi
profile=(--release)
if [ "${1:-}" = "--dev" ]; then
  profile=(--profile dev)
  shift
fi
"$VENV/bin/maturin" build "${profile[@]}" -m python/Cargo.toml -o target/wheels -i python3 "$@"
