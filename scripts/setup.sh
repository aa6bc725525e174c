#!/usr/bin/env bash
# Installs every system package ipu-opt needs (see docs/design/TOOLCHAIN.md) and the lit
# runner. Idempotent: when everything is present it only checks and returns in well under a second.
set -euo pipefail

PACKAGES=(
  llvm-22-dev llvm-22-tools libpolly-22-dev libmlir-22-dev mlir-22-tools
  libclang1-22 libclang-common-22-dev libzstd-dev zlib1g-dev libffi-dev libxml2-dev
  # Headless browser for the profile report test (driver/tests/all/cli.rs renders report.html).
  chromium
)
# Optional oracles used by some tests (FP8 conversions, numpy checks); psutil for lit's per-test --timeout (scripts/upstream-conformance.py).
# maturin builds the Python package (python/) and pytest runs its tests (scripts/test.sh); Ray
# (core only) runs `python -m ipu_opt.ray_sweep`, tested on a local instance; all pinned, so
# every machine builds and tests it with the same tools.
RAY_VERSION=2.60.0
PY_PACKAGES=(ml_dtypes numpy psutil maturin==1.16.0 pytest==9.2.0 "ray==$RAY_VERSION")

SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  if ! DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/tmp/ipu-setup-apt.log 2>&1; then
    echo "setup: error: apt-get could not install: ${missing[*]}" >&2
    echo "setup: the last lines of its log (/tmp/ipu-setup-apt.log):" >&2
    tail -n 20 /tmp/ipu-setup-apt.log >&2
    exit 1
  fi
fi

if [ ! -x /usr/bin/chromium ]; then
  echo "setup: error: /usr/bin/chromium is missing after installing the chromium package" >&2
  exit 1
fi

for tool in FileCheck not count mlir-opt llvm-config; do
  if [ ! -x "/usr/lib/llvm-22/bin/$tool" ]; then
    echo "setup: error: /usr/lib/llvm-22/bin/$tool is missing after installing the LLVM 22 packages" >&2
    exit 1
  fi
done

# Python tools (the lit runner, the ml_dtypes/numpy oracles) live in a virtual environment of
# the repository's own (.venv, git-ignored); scripts/test.sh and scripts/run-example.sh put its
# bin/ first on PATH, so nothing is installed into the system's Python.
VENV="$(cd "$(dirname "$0")/.." && pwd)/.venv"
if ! "$VENV/bin/python" -c "import lit, numpy, ml_dtypes, psutil, pytest" >/dev/null 2>&1 \
  || [ "$("$VENV/bin/maturin" --version 2>/dev/null)" != "maturin 1.16.0" ] \
  || [ "$("$VENV/bin/python" -c "from importlib.metadata import version; print(version('ray'))" 2>/dev/null)" != "$RAY_VERSION" ]; then
  echo "setup: creating the Python environment $VENV (lit ${PY_PACKAGES[*]})"
  if [ ! -x "$VENV/bin/python" ] && ! python3 -m venv "$VENV" >/tmp/ipu-setup-venv.log 2>&1; then
    # Debian's python3 needs python3-venv for `python3 -m venv`.
    $SUDO apt-get install -y -qq --no-install-recommends python3-venv >>/tmp/ipu-setup-venv.log 2>&1 || true
    python3 -m venv "$VENV" >>/tmp/ipu-setup-venv.log 2>&1 || {
      echo "setup: error: could not create $VENV (log: /tmp/ipu-setup-venv.log)" >&2
      tail -n 20 /tmp/ipu-setup-venv.log >&2
      exit 1
    }
  fi
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check lit "${PY_PACKAGES[@]}" \
    || { echo "setup: error: pip could not install lit ${PY_PACKAGES[*]} into $VENV" >&2; exit 1; }
fi
echo "setup: all system packages present (LLVM/MLIR 22 in /usr/lib/llvm-22, $("$VENV/bin/lit" --version 2>&1 | head -1) in $VENV)"
