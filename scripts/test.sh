#!/usr/bin/env bash
# Runs every test: the cargo tests of all crates, then the lit suite against the built tools.
# Prints each runner's summary. Exits non-zero if any test fails.
set -euo pipefail
cd "$(dirname "$0")/.."
# Python tools (lit, the oracles' numpy and ml_dtypes) from the environment scripts/setup.sh made.
export PATH="$PWD/.venv/bin:$PATH"

echo "== cargo build (tools used by lit) =="
cargo build --workspace --bins

echo "== cargo test =="
mkdir -p target
cargo test --workspace 2>&1 | tee target/cargo-test.log | grep -E "^(test result:|running [0-9]+ tests|error|failures:|---- )" || true
if grep -qE "^test result: FAILED|^error(\[|:)" target/cargo-test.log; then
  echo "cargo test: FAILED (full log: target/cargo-test.log)"
  grep -E "^---- |panicked" target/cargo-test.log | head -40
  exit 1
fi
passed=$(grep -E "^test result: ok" target/cargo-test.log | sed -E 's/.* ([0-9]+) passed.*/\1/' | awk '{ total += $1 } END { print total + 0 }')
echo "cargo test: ${passed} passed, 0 failed"

echo "== lit =="
# The tools lit runs come from the build above (honouring CARGO_TARGET_DIR).
export IPU_BIN_DIR="${IPU_BIN_DIR:-${CARGO_TARGET_DIR:-$PWD/target}/debug}"
lit -sv test/

echo "== python (pytest) =="
# The Python package (python/) built with the dev profile (it reuses the debug build above),
# installed into .venv, then its tests; they compare with the `ipu` binary in IPU_BIN_DIR.
started=$(date +%s)
rm -rf target/wheels-test
maturin build --quiet --profile dev -m python/Cargo.toml -o target/wheels-test -i .venv/bin/python
python -m pip install -q --disable-pip-version-check --force-reinstall --no-deps target/wheels-test/ipu_opt-*.whl
echo "python package built and installed in $(( $(date +%s) - started )) s"
python -m pytest -q -p no:cacheprovider python/tests
