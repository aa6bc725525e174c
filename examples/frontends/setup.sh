#!/usr/bin/env bash
# Creates examples/frontends/.venv with the pinned frontend packages that export the corpus
# (see README.md beside this script). Idempotent: a package already present at its pinned
# version is skipped, so a second run takes seconds. Installs one big package at a time and
# names the package that failed.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$here/.venv"
python="${PYTHON:-python3}"

# Pinned versions (all from PyPI).
NUMPY=2.4.6
JAX=0.10.2
JAXLIB=0.10.2
FLAX=0.12.8
IREE_COMPILER=3.13.0
IREE_RUNTIME=3.13.0
TENSORFLOW=2.21.0
KERAS=3.15.1
TOSA_TFLITE=2026.2.0
TORCH=2.15.0
CUDA_TOOLKIT=13.2.2  # the version torch 2.15.0 names; only cudart and cupti are installed
IREE_TURBINE=3.9.0
TRANSFORMERS=5.25.0

if [ ! -x "$venv/bin/python" ]; then
  echo "setup: creating $venv"
  "$python" -m venv "$venv" || { echo "setup: FAILED to create the virtual environment with $python" >&2; exit 1; }
fi
pip=("$venv/bin/python" -m pip --disable-pip-version-check)

installed_version() {
  "$venv/bin/python" - "$1" <<'PY' 2>/dev/null || true
import sys
from importlib import metadata
try:
    print(metadata.version(sys.argv[1]))
except metadata.PackageNotFoundError:
    pass
PY
}

# install NAME VERSION [extra pip arguments...]
install() {
  local name="$1" version="$2"; shift 2
  if [ "$(installed_version "$name")" = "$version" ]; then
    echo "setup: $name $version present"
    return 0
  fi
  echo "setup: installing $name==$version"
  if ! "${pip[@]}" install --no-cache-dir "$@" "$name==$version"; then
    echo "setup: FAILED to install $name==$version" >&2
    exit 1
  fi
}

install numpy "$NUMPY"
install jaxlib "$JAXLIB"
install jax "$JAX"
install flax "$FLAX"
install iree-base-compiler "$IREE_COMPILER"
install iree-base-runtime "$IREE_RUNTIME"
install tensorflow-cpu "$TENSORFLOW"
install keras "$KERAS"
install tosa-converter-for-tflite "$TOSA_TFLITE"
# PyPI's x86_64 torch wheel depends on NVIDIA's CUDA packages (gigabytes; this machine's disk
# cannot hold them and an export on the CPU never calls them): install torch without its
# dependencies, then its pure-Python dependencies, the two small CUDA packages its CPU library
# loads (runtime and CUPTI), and stand-ins for the rest (torch_cpu_stubs.py; needs cc).
install torch "$TORCH" --no-deps
install_deps() {
  local what="$1"; shift
  if ! "${pip[@]}" install --no-cache-dir -q "$@"; then
    echo "setup: FAILED to install $what" >&2
    exit 1
  fi
}
if ! "$venv/bin/python" -c "import torch" 2>/dev/null; then
  install_deps "torch's dependencies" filelock "typing-extensions>=4.13.0" "sympy>=1.13.3" \
    "networkx>=2.5.1" jinja2 "fsspec>=0.8.5" "setuptools>=77.0.3" "cuda-toolkit[cudart,cupti]==$CUDA_TOOLKIT"
  if ! "$venv/bin/python" "$here/torch_cpu_stubs.py"; then
    echo "setup: FAILED to build the CUDA stand-ins torch needs (torch_cpu_stubs.py)" >&2
    exit 1
  fi
fi
install iree-turbine "$IREE_TURBINE" --no-deps
if ! "$venv/bin/python" -c "import iree.turbine.aot" 2>/dev/null; then
  install_deps "iree-turbine's dependencies" "decorator>=5.2.1" "Jinja2>=3.1.4" "ml_dtypes>=0.5.0" typing_extensions
fi
install transformers "$TRANSFORMERS"

# Everything imports.
for module in jax flax iree.compiler iree.runtime tensorflow keras tosa_converter_for_tflite torch iree.turbine.aot transformers; do
  if ! "$venv/bin/python" -c "import $module" >/dev/null 2>&1; then
    echo "setup: FAILED: $module does not import:" >&2
    "$venv/bin/python" -c "import $module" 2>&1 | tail -3 >&2
    exit 1
  fi
done
echo "setup: ready ($venv)"
