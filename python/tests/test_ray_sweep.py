"""python -m ipu_opt.ray_sweep on a local Ray instance: the records, files and summary of
`ipu sweep` for the same sweep file, resuming, and the failures recorded as `ipu sweep` records
them (a timeout, a crash, a compile error, a failed numerical test, a binary that will not
start, a task that raises)."""

import csv
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

from conftest import EXAMPLES

import ray  # scripts/setup.sh installs it; missing is a failure, not a skip

from ipu_opt import _native, ray_sweep

MODEL = EXAMPLES / "mlp_small.mlir"

# Three points that run (two of the product, one explicit at another precision) and one whose
# pinned grid no lowering builds.
SWEEP = """\
[product]
tiles = [16, 64]

[[point]]
tiles = 32
precision = "fp8"

[[point]]
tiles = 64
constraints = { name = "impossible", ops = [{ op = 0, params = { grid = [1, 64, 64, 1] } }] }
"""

# Timing figures differ from run to run.
TIMES = {"wall_seconds", "compile_seconds"}


@pytest.fixture(scope="module")
def ray_env():
    """The environment of a Ray instance the tests start: its files in a short-lived directory
    of their own (short: Ray's socket paths must fit), no usage reporting, no cluster of the
    surroundings."""
    directory = tempfile.mkdtemp(prefix="ray", dir="/tmp")
    env = dict(os.environ, RAY_TMPDIR=directory, RAY_USAGE_STATS_ENABLED="0")
    env.pop("RAY_ADDRESS", None)
    yield env
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(scope="module")
def local_ray(ray_env):
    """A local Ray instance of 2 CPUs in this process."""
    saved = dict(os.environ)
    os.environ.update({k: ray_env[k] for k in ("RAY_TMPDIR", "RAY_USAGE_STATS_ENABLED")})
    os.environ.pop("RAY_ADDRESS", None)
    ray.init(address="local", num_cpus=2, include_dashboard=False)
    yield
    ray.shutdown()
    os.environ.clear()
    os.environ.update(saved)


def records(out):
    """results.jsonl's records by key (one line each)."""
    lines = (out / "results.jsonl").read_text().splitlines()
    by_key = {}
    for line in lines:
        entry = json.loads(line)
        assert entry["key"] not in by_key, "a point recorded twice"
        by_key[entry["key"]] = entry
    return by_key


def read_csv(path):
    """results.csv's rows by id."""
    with open(path, newline="") as file:
        return {row["id"]: row for row in csv.DictReader(file)}


def assert_same_record(ours, theirs, their_point_dir):
    """The record of a point run as a Ray task against `ipu sweep`'s: the same fields in the same
    order and the same values, but for timings; the diagnostic names the point's own files
    relative to its directory where `ipu sweep` names them by absolute path."""
    assert list(ours) == list(theirs)
    for field, value in theirs.items():
        if field in TIMES:
            assert isinstance(ours[field], float) or ours[field] is None, field
        elif field == "diagnostic" and value is not None:
            assert ours[field] == value.replace(f"{their_point_dir}/", ""), field
        elif field == "refined_error_percent" and value is not None:
            # `ipu sweep` re-reads the figure with serde_json's default (not round-trip exact)
            # float parsing; the record here holds the value `ipu run` wrote.
            assert math.isclose(ours[field], value, rel_tol=1e-12), (ours[field], value)
        else:
            assert ours[field] == value, field


def test_ray_sweep_matches_ipu_sweep_and_resumes(tmp_path, ipu_binary, ray_env):
    sweep = tmp_path / "sweep.toml"
    sweep.write_text(SWEEP)
    rust_out, ray_out = tmp_path / "rust", tmp_path / "ray"
    rust = subprocess.run(
        [ipu_binary, "sweep", MODEL, "--sweep", sweep, "--seed", "1", "--jobs", "2", "-o", rust_out],
        capture_output=True, text=True,
    )
    assert rust.returncode == 0, rust.stderr
    env = dict(ray_env, IPU_BIN_DIR=str(ipu_binary.parent))
    command = [sys.executable, "-m", "ipu_opt.ray_sweep", MODEL, "--sweep", sweep, "--seed", "1",
               "--num-cpus", "2", "-o", ray_out]
    first = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert first.returncode == 0, first.stderr
    assert "sweep: 4 points, 0 already done, 4 to run as Ray tasks (2 CPUs, 1 a point)" in first.stdout
    assert "sweep: 4 points (4 run now on Ray in " in first.stdout
    assert "nothing to run" not in first.stdout
    # The summary is `ipu sweep`'s over the same figures.
    assert "best 3 of 3 ok points by simulated device-program cycles:" in first.stdout
    assert "1 failed points:" in first.stdout
    progress = [line for line in first.stderr.splitlines() if line.startswith("[")]
    assert sorted(line[:5] for line in progress) == ["[1/4]", "[2/4]", "[3/4]", "[4/4]"], first.stderr
    assert sum(" FAILED (" in line for line in progress) == 1

    ours, theirs = records(ray_out), records(rust_out)
    assert sorted(ours) == sorted(theirs)
    for key, entry in theirs.items():
        assert_same_record(ours[key], entry, rust_out.resolve() / "points" / entry["id"])
    ok = [entry for entry in ours.values() if entry["status"] == "ok"]
    failed = [entry for entry in ours.values() if entry["status"] == "failed"]
    assert len(ok) == 3 and all(e["numerical"] == "PASS" and e["device_program_cycles"] > 0 for e in ok)
    assert len(failed) == 1 and failed[0]["params"]["constraints"]["name"] == "impossible"
    assert "no candidate satisfies the constraint on op 0" in failed[0]["diagnostic"]
    assert failed[0]["exit_code"] == 1

    # The point directories hold what `ipu sweep`'s do; command.txt runs from there.
    for entry in ours.values():
        directory = ray_out / "points" / entry["id"]
        names = sorted(str(p.relative_to(directory)) for p in directory.rglob("*") if p.is_file())
        their_directory = rust_out / "points" / entry["id"]
        assert names == sorted(str(p.relative_to(their_directory)) for p in their_directory.rglob("*") if p.is_file())
        assert (directory / "command.txt").read_text().startswith(f"run {MODEL} --artifacts artifacts ")
    # results.csv and pareto.svg written by the Rust sweep from the same records.
    assert (ray_out / "pareto.svg").read_text() == (rust_out / "pareto.svg").read_text()
    ours_csv, theirs_csv = read_csv(ray_out / "results.csv"), read_csv(rust_out / "results.csv")
    assert sorted(ours_csv) == sorted(theirs_csv) and len(ours_csv) == 4
    for point_id, row in theirs_csv.items():
        for column, value in row.items():
            if column == "diagnostic":
                value = value.replace(f"{rust_out.resolve()}/points/{point_id}/", "")
            if column not in TIMES:
                assert ours_csv[point_id][column] == value, column

    # Rerunning runs nothing and leaves the records as they were; `ipu sweep` resumes them too.
    before = (ray_out / "results.jsonl").read_bytes()
    again = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert again.returncode == 0, again.stderr
    assert f"sweep: all 4 points already done in {ray_out}/results.jsonl; nothing to run" in again.stdout
    assert "sweep: 4 points (0 run now on Ray in " in again.stdout
    assert "Ray instance" not in again.stderr  # no Ray started for nothing
    assert (ray_out / "results.jsonl").read_bytes() == before
    resumed = subprocess.run([ipu_binary, "sweep", MODEL, "--sweep", sweep, "-o", ray_out], capture_output=True, text=True)
    assert resumed.returncode == 0 and "sweep: all 4 points already done" in resumed.stdout, resumed.stdout


FAKE_IPU = """\
#!/bin/bash
# Stands in for `ipu run`: how it ends depends on --tiles.
result=""; tiles=""
while [ $# -gt 0 ]; do
  case "$1" in
    --result-json) result="$2"; shift ;;
    --tiles) tiles="$2"; shift ;;
  esac
  shift
done
case "$tiles" in
  16) exec sleep 30 ;;
  32) echo "about to crash" >&2; kill -KILL $$ ;;
  40) kill -KILL $$ ;;
  48) echo "INFO compiling" >&2; echo "ipu: error: no plan for op 0" >&2; echo "INFO done" >&2; exit 1 ;;
  96) echo "referenceMaximumAbsoluteError=9.0 numericalTest=FAIL"; echo "ipu: numerical test failed" >&2; exit 1 ;;
  *) printf '{"device_program_cycles": %s, "numerical": "PASS", "unknown": 1}\\n' "$tiles" > "$result"; exit 0 ;;
esac
"""


def test_failures_are_recorded_as_ipu_sweep_records_them(tmp_path, local_ray, monkeypatch):
    fake = tmp_path / "fake-ipu"
    fake.write_text(FAKE_IPU)
    fake.chmod(0o755)
    axes = [os.fspath(MODEL), "--tiles", "16,32,40,48,96,128", "--timeout", "1"]
    rust_out, ray_out = tmp_path / "rust", tmp_path / "ray"
    theirs = {r["key"]: r for r in json.loads(_native.sweep([*axes, "--out", os.fspath(rust_out)], [os.fspath(fake)]))}
    assert ray_sweep.main([*axes, "--ipu", os.fspath(fake), "-o", os.fspath(ray_out)]) == 0
    ours = records(ray_out)
    assert sorted(ours) == sorted(theirs)
    for key, entry in theirs.items():
        assert_same_record(ours[key], entry, rust_out.resolve() / "points" / entry["id"])
    by_tiles = {entry["params"]["tiles"]: entry for entry in ours.values()}
    assert by_tiles[16]["diagnostic"] == "timed out after 1 s (--timeout)" and by_tiles[16]["exit_code"] is None
    assert by_tiles[32]["diagnostic"] == "ipu run was killed by a signal\nabout to crash"
    assert by_tiles[40]["diagnostic"] == "ipu run was killed by a signal"
    assert by_tiles[48]["diagnostic"] == "ipu: error: no plan for op 0" and by_tiles[48]["exit_code"] == 1
    assert by_tiles[96]["diagnostic"] == "ipu: numerical test failed\nreferenceMaximumAbsoluteError=9.0 numericalTest=FAIL"
    assert by_tiles[128]["status"] == "ok" and by_tiles[128]["device_program_cycles"] == 128

    # --retry-failed over tiles 48 and 128 runs the failed 48 again (128 is ok and stays); its
    # new record is appended and is the one read back.
    assert ray_sweep.main([*axes, "--ipu", os.fspath(fake), "-o", os.fspath(ray_out), "--retry-failed", "--tiles", "48,128"]) == 0
    lines = (ray_out / "results.jsonl").read_text().splitlines()
    assert len(lines) == 7 and json.loads(lines[-1])["params"]["tiles"] == 48
    on_record, unreadable = ray_sweep.load(ray_out / "results.jsonl")
    assert not unreadable and on_record[json.loads(lines[-1])["key"]] == json.loads(lines[-1])

    # A binary that does not start: every point recorded as failed, the sweep finishes.
    missing = tmp_path / "missing"
    assert ray_sweep.main([os.fspath(MODEL), "--tiles", "64", "--ipu", "/nonexistent/ipu", "-o", os.fspath(missing)]) == 0
    (entry,) = records(missing).values()
    assert entry["status"] == "failed" and entry["exit_code"] is None
    assert entry["diagnostic"].startswith("the point did not run: /nonexistent/ipu: ")

    # A task that raises (here: in place of the point's run): recorded, the sweep finishes.
    monkeypatch.setattr(ray_sweep, "run_point", lambda *arguments: 1 / 0)
    broken = tmp_path / "broken"
    assert ray_sweep.main([os.fspath(MODEL), "--tiles", "64", "-o", os.fspath(broken)]) == 0
    (entry,) = records(broken).values()
    assert entry["status"] == "failed" and entry["exit_code"] is None and entry["plans"] is None
    assert entry["diagnostic"].startswith("the Ray task of the point failed: ")
    assert "ZeroDivisionError" in entry["diagnostic"] and "\x1b" not in entry["diagnostic"]


def test_a_node_without_the_model_runs_the_shipped_copy(tmp_path, ipu_binary):
    """The task on a node that does not see the driver's model file runs the copy it was given
    (here: the task called directly with a model path that does not exist)."""
    text = MODEL.read_bytes()
    params = {"tiles": 64, "precision": None, "weight_memory": None, "beam_width": None,
              "candidates_per_op": None, "finalists": None,
              "constraints": {"name": "pin", "document": {"ops": [{"op": 0, "params": {"grid": [1, 64, 64, 1]}}]}}}
    answer = ray_sweep.run_point(os.fspath(ipu_binary), "/nonexistent/mlp_small.mlir", text, params, 0, None, None)
    assert answer["exit_code"] == 1 and answer["error"] is None
    assert answer["files"]["command.txt"].decode().startswith("run model-mlp_small.mlir --artifacts artifacts ")
    assert "model-mlp_small.mlir" not in answer["files"]
    assert json.loads(answer["files"]["constraints.json"]) == params["constraints"]["document"]
    assert b'loc("model-mlp_small.mlir":6:8)' in answer["files"]["stderr.txt"]
    params["constraints"] = None
    answer = ray_sweep.run_point(os.fspath(ipu_binary), "/nonexistent/mlp_small.mlir", text, params, 0, None, None)
    assert answer["exit_code"] == 0, answer["files"]["stderr.txt"]
    assert json.loads(answer["files"]["result.json"])["numerical"] == "PASS"
    assert "artifacts/run/model-final.ipuexe" in answer["files"]


def test_the_sweep_file_is_read_as_ipu_sweep_reads_it(tmp_path, ipu_binary, capsys):
    bad = tmp_path / "unknown.toml"
    bad.write_text("[product]\ntiles = [64]\nbeam = [2]\n")
    assert ray_sweep.main([os.fspath(MODEL), "--sweep", os.fspath(bad), "-o", os.fspath(tmp_path / "u")]) == 2
    error = capsys.readouterr().err
    assert "unknown.toml: TOML parse error at line 3, column 1" in error and "unknown field `beam`" in error
    assert not (tmp_path / "u").exists()
    sweep = tmp_path / "sweep.toml"
    sweep.write_text(SWEEP)
    assert ray_sweep.main([os.fspath(MODEL), "--sweep", os.fspath(sweep), "--precision", "f16,fp8", "--dry-run"]) == 0
    listed = capsys.readouterr().out
    dry = subprocess.run([ipu_binary, "sweep", MODEL, "--sweep", sweep, "--precision", "f16,fp8", "--dry-run"],
                         capture_output=True, text=True)
    assert listed == dry.stdout and "6 points" in listed
