"""ipu_opt.sweep on a tiny sweep: rows, a failed point with its diagnostic, resuming."""

import json
import subprocess
import sys

import ipu_opt
from conftest import EXAMPLES

TINY = {
    "product": {"tiles": [16, 64]},
    "point": [
        {"tiles": 64, "constraints": {"name": "impossible", "ops": [{"op": 0, "params": {"grid": [1, 64, 64, 1]}}]}},
    ],
}


def test_tiny_sweep_runs_records_and_resumes(tmp_path):
    out = tmp_path / "sweep"
    rows = ipu_opt.sweep(TINY, out, model=EXAMPLES / "mlp_small.mlir", jobs=2, seed=1)
    assert [row["params"]["tiles"] for row in rows] == [16, 64, 64]
    ok = [row for row in rows if row["status"] == "ok"]
    failed = [row for row in rows if row["status"] == "failed"]
    assert [row["params"]["tiles"] for row in ok] == [16, 64]
    for row in ok:
        assert row["numerical"] == "PASS" and row["device_program_cycles"] > 0
        assert row["plans"] is not None
    # Fewer tiles, more cycles per tile's share of the work.
    assert ok[0]["device_program_cycles"] > ok[1]["device_program_cycles"]
    assert len(failed) == 1 and failed[0]["params"]["constraints"]["name"] == "impossible"
    assert failed[0]["diagnostic"]
    for name in ("results.jsonl", "results.csv", "pareto.svg", "sweep.json"):
        assert (out / name).is_file(), name
    on_file = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert sorted(r["id"] for r in on_file) == sorted(r["id"] for r in rows)

    # A second call runs nothing: the same rows come back from the results file.
    again = ipu_opt.sweep(TINY, out, model=EXAMPLES / "mlp_small.mlir", jobs=2, seed=1)
    assert again == rows


def test_sweep_axes_without_a_file(tmp_path):
    rows = ipu_opt.sweep(None, tmp_path / "axes", model=EXAMPLES / "mlp_small.mlir", tiles=[32], jobs=1)
    assert len(rows) == 1 and rows[0]["status"] == "ok" and rows[0]["params"]["tiles"] == 32


def test_sweep_errors_are_input_errors(tmp_path):
    try:
        ipu_opt.sweep({"product": {"tiles": []}}, tmp_path / "bad", model=EXAMPLES / "mlp_small.mlir")
    except ipu_opt.InputError as error:
        assert "tiles" in str(error)
    else:
        raise AssertionError("an empty axis was accepted")
    try:
        ipu_opt.sweep(None, tmp_path / "none", model=EXAMPLES / "mlp_small.mlir")
    except ipu_opt.InputError as error:
        assert "nothing to sweep" in str(error)
    else:
        raise AssertionError("a sweep of nothing was accepted")


def test_command_line_module(tmp_path):
    package = tmp_path / "mlp.ipuexe"
    compiled = subprocess.run(
        [sys.executable, "-m", "ipu_opt", "compile", EXAMPLES / "mlp_small.mlir", "--tiles", "64", "-o", package],
        capture_output=True, text=True,
    )
    assert compiled.returncode == 0, compiled.stderr
    assert f"package={package} tiles=1472" in compiled.stdout
    assert ipu_opt.load(package).name == "mlp"
    usage = subprocess.run([sys.executable, "-m", "ipu_opt", "run"], capture_output=True, text=True)
    assert usage.returncode == 2 and "Usage" in usage.stderr
