"""``python -m ipu_opt.ray_sweep MODEL --sweep FILE -o DIR``: ``ipu sweep`` with its points run
as Ray tasks, on a local Ray instance or on a cluster (``--address``).

The sweep is the one ``ipu sweep`` runs: the same sweep file (TOML, or JSON ending in
``.json``) and axis flags, expanded by the Rust sweep itself (``ipu_opt._native.sweep`` with a
launcher that runs nothing, in a scratch directory), so the points, their keys and ids and the
sweep file's errors are ``ipu sweep``'s. Each point not yet on record becomes one Ray task
(``--cpus-per-point`` CPUs) that runs ``ipu run ... --result-json`` on whichever node Ray picks,
in a directory of its own there, and returns the point's files (stdout, stderr,
``command.txt``, ``result.json``, ``plans.json``, ``constraints.json``, ``artifacts/``); the
driver writes them to ``<out>/points/<id>/`` and appends the point's record to
``<out>/results.jsonl`` as ``ipu sweep`` builds it, as each task finishes. A point that fails
(the planner refused, the numerical test failed, the process crashed or timed out, the Ray task
itself failed) is recorded as ``failed`` with its diagnostic; the sweep goes on. Points already
on record (matched by their key, as ``ipu sweep`` matches them) are skipped, so a rerun resumes
and a sweep can move between ``ipu sweep`` and this driver. At the end the Rust sweep, finding
every point on record, writes ``results.csv`` and ``pareto.svg`` and prints the summary.

The cluster is ``--address``, else ``RAY_ADDRESS`` when set, else a new local instance of
``--num-cpus`` CPUs. Each node needs the ``ipu`` binary (``--ipu``: a path that is the same on
every node, or a bare name looked up on each node's ``PATH``; default: ``$IPU_BIN_DIR/ipu``,
else ``ipu`` on this machine's ``PATH``) and the Python environment Ray runs its workers in;
the task's code is shipped by value, so the workers need ``ray`` but not ``ipu_opt``. The model
is read where it is when a node sees the same file (same path, same contents), else a copy is
shipped with the task.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path, PurePosixPath
from typing import Any

PROGRAM = "ray_sweep"

# The figures `ipu run --result-json` writes, in the order a record of `results.jsonl` holds
# them (driver/src/cli/run_result.rs, `RunResult`).
RESULT_FIELDS = (
    "device_tiles",
    "target",
    "compile_seconds",
    "simulated_cycles",
    "device_program_cycles",
    "host_exchange_cycles",
    "refined_cycles",
    "final_cycles",
    "refined_error_percent",
    "peak_standard_bytes",
    "peak_interleaved_bytes",
    "peak_total_bytes",
    "hardware",
    "numerical",
    "max_abs_error",
    "expected",
    "expected_max_abs_error",
    "expected_tolerance",
    "hardware_cycles",
    "fidelity_error_percent",
)

# What Rust's `str::trim` removes: the characters of Unicode's White_Space property.
_WHITE_SPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680"
    + "".join(map(chr, range(0x2000, 0x200B)))
    + "\u2028\u2029\u202f\u205f\u3000"
)


# Terminal colours, which Ray's task errors carry.
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


class UsageError(Exception):
    """Something the caller can fix; nothing ran (exit 2, as `ipu sweep`'s input errors)."""


# ---------------------------------------------------------------------------------------------
# The Ray task: one point's `ipu run`. Self-contained (the standard library only): it is
# shipped to the workers by value.


def _same_file(path: str, data: bytes) -> bool:
    """Whether the file at `path` on this node holds `data`."""
    try:
        if os.path.getsize(path) != len(data):
            return False
        with open(path, "rb") as file:
            return file.read() == data
    except OSError:
        return False


def _die_with_parent() -> None:
    """In the child between fork and exec: SIGKILL it when the worker that started it dies
    (a cancelled or killed task leaves no `ipu run` behind), as `ipu sweep` does."""
    import ctypes

    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, 9)


def run_arguments(model: str, params: dict[str, Any], seed: int, max_cycles: int | None) -> list[str]:
    """The `ipu run` arguments of a point, as `ipu sweep` gives them (driver/src/cli/sweep/
    point.rs, `arguments`), with the point's files relative to the point's directory."""
    args = [
        "run", model,
        "--artifacts", "artifacts",
        "--name", "run",
        "--seed", str(seed),
        "--dump-plans", "plans.json",
        "--result-json", "result.json",
    ]
    if max_cycles is not None:
        args += ["--max-cycles", str(max_cycles)]
    options = [
        ("--tiles", "tiles"),
        ("--precision", "precision"),
        ("--weight-memory", "weight_memory"),
        ("--beam-width", "beam_width"),
        ("--candidates-per-op", "candidates_per_op"),
        ("--finalists", "finalists"),
    ]
    for flag, key in options:
        if params.get(key) is not None:
            args += [flag, str(params[key])]
    constraints = params.get("constraints")
    if constraints is not None and constraints.get("document") is not None:
        args += ["--constraints", "constraints.json"]
    return args


def run_point(
    ipu: str,
    model_path: str,
    model_text: bytes,
    params: dict[str, Any],
    seed: int,
    max_cycles: int | None,
    timeout: float | None,
) -> dict[str, Any]:
    """Runs one point's `ipu run` in a fresh directory of this node and returns how it ended
    and the files it left there (by path relative to that directory). Never raises for what
    the point does: a process that cannot start, crashes or times out is in the answer."""
    started = time.monotonic()
    work = tempfile.mkdtemp(prefix="ipu-sweep-point-")
    answer: dict[str, Any] = {"exit_code": None, "signal": False, "timed_out": False, "error": None}
    try:
        model = model_path
        shipped = None
        if not _same_file(model_path, model_text):
            # This node does not see the driver's model: run the copy shipped with the task.
            shipped = "model-" + os.path.basename(model_path)
            with open(os.path.join(work, shipped), "wb") as file:
                file.write(model_text)
            model = shipped
        args = run_arguments(model, params, seed, max_cycles)
        constraints = params.get("constraints")
        if constraints is not None and constraints.get("document") is not None:
            with open(os.path.join(work, "constraints.json"), "w", encoding="utf-8") as file:
                file.write(json.dumps(constraints["document"], indent=2, ensure_ascii=False))
        with open(os.path.join(work, "command.txt"), "w", encoding="utf-8") as file:
            file.write(" ".join(args) + "\n")
        stdout_path, stderr_path = os.path.join(work, "stdout.txt"), os.path.join(work, "stderr.txt")
        with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
            try:
                child = subprocess.Popen(
                    [ipu, *args], cwd=work, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                    preexec_fn=_die_with_parent,
                )
            except (OSError, subprocess.SubprocessError) as error:
                answer["error"] = f"the point did not run: {ipu}: {error}"
            else:
                try:
                    code = child.wait(timeout=timeout)
                except subprocess.TimeoutExpired:
                    child.kill()
                    child.wait()
                    answer["timed_out"] = True
                else:
                    if code < 0:
                        answer["signal"] = True
                    else:
                        answer["exit_code"] = code
        files: dict[str, bytes] = {}
        for directory, _, names in os.walk(work):
            for name in names:
                path = os.path.join(directory, name)
                relative = os.path.relpath(path, work)
                if relative == shipped or os.path.islink(path):
                    continue
                with open(path, "rb") as file:
                    files[relative] = file.read()
        answer["files"] = files
    except OSError as error:
        answer["error"] = f"the point did not run: {error}"
        answer.setdefault("files", {})
    finally:
        shutil.rmtree(work, ignore_errors=True)
    answer["wall_seconds"] = time.monotonic() - started
    return answer


# ---------------------------------------------------------------------------------------------
# Records, as `ipu sweep` writes them (driver/src/cli/sweep/results.rs and point.rs).


def _lines(text: str) -> list[str]:
    """Rust's `str::lines`: split at `\\n` (a `\\r` before it goes too), no empty last line."""
    if not text:
        return []
    parts = text.split("\n")
    last = parts.pop()
    lines = [part[:-1] if part.endswith("\r") else part for part in parts]
    if last:
        lines.append(last)
    return lines


def diagnostic(stdout: str, stderr: str) -> str:
    """The diagnostic of a failed run: its `error:` and failed-test lines, else the end of its
    stderr, cut at 4000 bytes (`ipu sweep`'s)."""
    lines = [line for line in _lines(stderr) if "error:" in line or "numerical test failed" in line]
    lines += [line for line in _lines(stdout) if "=FAIL" in line]
    if not lines:
        lines = _lines(stderr)[-5:]
    text = "\n".join(lines)
    encoded = text.encode("utf-8")
    if len(encoded) > 4000:
        cut = 4000
        while (encoded[cut] & 0xC0) == 0x80:
            cut -= 1
        text = encoded[:cut].decode("utf-8") + " ..."
    return text


def label(params: dict[str, Any]) -> str:
    """`tiles=64 precision=f16 ...`: the parameters that are set (`Point::label`)."""
    parts = []
    for key in ("tiles", "precision", "weight_memory", "beam_width", "candidates_per_op", "finalists"):
        if params.get(key) is not None:
            parts.append(f"{key}={params[key]}")
    if params.get("constraints") is not None:
        parts.append(f"constraints={params['constraints']['name']}")
    return " ".join(parts) if parts else "defaults"


def _text(files: dict[str, bytes], name: str) -> str:
    """A file of the point as text; missing or not UTF-8: empty (Rust's `read_to_string(..)
    .unwrap_or_default()`)."""
    try:
        return files.get(name, b"").decode("utf-8")
    except UnicodeDecodeError:
        return ""


def record(
    point: dict[str, Any], model: str, model_hash: str, answer: dict[str, Any], timeout: float | None
) -> dict[str, Any]:
    """The `results.jsonl` record of a point from its task's answer (`point::run`)."""
    files = answer.get("files", {})
    stdout, stderr = _text(files, "stdout.txt"), _text(files, "stderr.txt")
    try:
        result = json.loads(_text(files, "result.json"))
    except ValueError:
        result = None
    if not isinstance(result, dict):
        result = {}
    try:
        plans = json.loads(_text(files, "plans.json"))
    except ValueError:
        plans = None
    status, text, exit_code = "failed", None, None
    if answer.get("error"):
        text = answer["error"]
    elif answer.get("timed_out"):
        text = f"timed out after {timeout or 0:.0f} s (--timeout)"
    else:
        exit_code = None if answer.get("signal") else answer.get("exit_code")
        if exit_code == 0:
            status = "ok"
        else:
            text = diagnostic(stdout, stderr)
            if exit_code is None:
                text = f"ipu run was killed by a signal\n{text}"
            text = text.strip(_WHITE_SPACE)
    entry: dict[str, Any] = {
        "key": point["key"],
        "id": point["id"],
        "model": model,
        "model_hash": model_hash,
        "params": point["params"],
        "status": status,
        "diagnostic": text,
        "exit_code": exit_code,
        "wall_seconds": answer.get("wall_seconds", 0.0),
    }
    for field in RESULT_FIELDS:
        entry[field] = result.get(field)
    entry["plans"] = plans
    return entry


def _is_record(value: Any) -> bool:
    """Whether a parsed line reads as a record."""
    if not isinstance(value, dict):
        return False
    strings = all(isinstance(value.get(k), str) for k in ("key", "id", "model", "model_hash"))
    wall = value.get("wall_seconds")
    wall_ok = isinstance(wall, (int, float)) and not isinstance(wall, bool)
    return strings and wall_ok and value.get("status") in ("ok", "failed") and isinstance(value.get("params"), dict)


def load(path: Path) -> tuple[dict[str, dict[str, Any]], list[int]]:
    """The records of `results.jsonl` by key (a later one of a key replaces an earlier one)
    and the numbers of the lines that do not read as one."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}, []
    records: dict[str, dict[str, Any]] = {}
    unreadable = []
    for number, line in enumerate(_lines(text), start=1):
        if not line.strip(_WHITE_SPACE):
            continue
        try:
            value = json.loads(line)
        except ValueError:
            value = None
        if _is_record(value):
            records[value["key"]] = value
        else:
            unreadable.append(number)
    return records, unreadable


class Appender:
    """`results.jsonl` open for appending: a record is one write of one line, flushed."""

    def __init__(self, path: Path) -> None:
        self.file = open(path, "a+b")
        size = self.file.seek(0, os.SEEK_END)
        if size > 0:
            self.file.seek(size - 1)
            if self.file.read(1) != b"\n":
                # A line cut short by an interrupt: the next record starts a line of its own.
                self.file.write(b"\n")
                self.file.flush()

    def append(self, entry: dict[str, Any]) -> None:
        line = json.dumps(entry, separators=(",", ":"), ensure_ascii=False, allow_nan=False) + "\n"
        self.file.write(line.encode("utf-8"))
        self.file.flush()

    def close(self) -> None:
        self.file.close()


def write_point_files(points_dir: Path, point_id: str, files: dict[str, bytes]) -> None:
    """Writes a point's files into `<out>/points/<id>/`, replacing an earlier attempt's."""
    directory = points_dir / point_id
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    for relative, data in files.items():
        parts = PurePosixPath(relative).parts
        if not parts or PurePosixPath(relative).is_absolute() or ".." in parts:
            continue
        target = directory.joinpath(*parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


# ---------------------------------------------------------------------------------------------
# The Rust sweep, in a process of its own: the expansion and the closing summary.

_RUST_SWEEP = """
import json, sys
from ipu_opt import _native, InputError
arguments, launcher, answer = json.loads(sys.argv[1])
try:
    records = _native.sweep(arguments, launcher)
except InputError as error:
    print(error, file=sys.stderr)
    sys.exit(2)
except Exception as error:
    print(error, file=sys.stderr)
    sys.exit(1)
if answer:
    with open(answer, "w", encoding="utf-8") as file:
        file.write(records)
"""


def _rust_sweep(arguments: list[str], launcher: list[str], answer: str | None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", _RUST_SWEEP, json.dumps([arguments, launcher, answer])],
        capture_output=True, text=True,
    )


def expand(sweep_arguments: list[str]) -> list[dict[str, Any]]:
    """The sweep's points in its order, as `ipu sweep` expands them: the records of a sweep
    whose launcher runs nothing (`true`), in a scratch directory. Each record has `key`, `id`,
    `params`, `model` (the model as given) and `model_hash`."""
    scratch = tempfile.mkdtemp(prefix="ipu-ray-sweep-expand-")
    try:
        answer = os.path.join(scratch, "points.json")
        noop = shutil.which("true") or "/bin/true"
        ran = _rust_sweep([*sweep_arguments, "--out", os.path.join(scratch, "out")], [noop], answer)
        if ran.returncode == 2:
            raise UsageError(ran.stderr.strip())
        if ran.returncode != 0:
            raise RuntimeError(f"expanding the sweep failed: {ran.stderr.strip()}")
        with open(answer, encoding="utf-8") as file:
            return json.load(file)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


_NOTHING_TO_RUN = re.compile(r"^sweep: all \d+ points already done in .*; nothing to run$")
_RUN_NOW = re.compile(r"^sweep: \d+ points \(0 run now in [0-9.]+ s, \d+ already done\); \d+ ok, \d+ failed$")


def summarize(sweep_arguments: list[str], out: Path, top: int, tally: str) -> int:
    """`results.csv`, `pareto.svg` and the summary, by the Rust sweep over the results (every
    point on record, so it runs none); its line counting what ran becomes `tally`."""
    refuse = [sys.executable, "-c", "import sys; sys.exit('ray_sweep: a point reached the summary unrun')"]
    arguments = [*sweep_arguments, "--out", os.fspath(out), "--top", str(top), "--jobs", "1"]
    ran = _rust_sweep(arguments, refuse, None)
    if ran.returncode != 0:
        print(f"{PROGRAM}: error: writing the summary: {ran.stderr.strip()}", file=sys.stderr)
        return 1
    for line in ran.stdout.splitlines():
        if _NOTHING_TO_RUN.match(line):
            continue
        print(tally if _RUN_NOW.match(line) else line)
    return 0


# ---------------------------------------------------------------------------------------------
# The driver.


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m ipu_opt.ray_sweep",
        description="Run `ipu sweep` with every point a Ray task: the same sweep file, axis flags "
        "and results directory (results.jsonl, results.csv, pareto.svg, points/), resuming as "
        "`ipu sweep` does.",
    )
    parser.add_argument("model", help="the model: an MLIR module, as `ipu run` takes it")
    parser.add_argument(
        "--sweep", metavar="FILE", help="sweep file (TOML; JSON when it ends in .json), as `ipu sweep --sweep`"
    )
    for flag, what in (
        ("--tiles", "tile counts"),
        ("--precision", "precisions (native, f16, f32, fp8)"),
        ("--weight-memory", "memory classes of GEMM weights (auto, interleaved, standard)"),
        ("--beam-width", "beam widths"),
        ("--candidates-per-op", "candidates per op"),
        ("--finalists", "finalist counts"),
        ("--constraints", "plan-constraint files"),
    ):
        parser.add_argument(
            flag, metavar="LIST", help=f"{what} to sweep, comma-separated (replaces the file's axis)"
        )
    parser.add_argument("-o", "--out", default="sweep", help="directory of the results [default: sweep]")
    parser.add_argument("--seed", type=int, default=0, help="seed of every point's generated inputs")
    parser.add_argument("--max-cycles", type=int, help="passed to each point's `ipu run --max-cycles`")
    parser.add_argument(
        "--timeout", type=float, metavar="SECONDS",
        help="seconds a point may take before it is stopped and recorded as failed",
    )
    parser.add_argument("--retry-failed", action="store_true", help="run again the points on record as failed")
    parser.add_argument("--top", type=int, default=10, help="rows of the summary table")
    parser.add_argument("--dry-run", action="store_true", help="list the points and exit without running any")
    ray_options = parser.add_argument_group("Ray")
    ray_options.add_argument(
        "--address",
        help="the Ray cluster to run on (`auto`: the one this machine is part of, `HOST:PORT`, "
        "`ray://HOST:PORT`) [default: RAY_ADDRESS when set, else a new local instance]",
    )
    ray_options.add_argument(
        "--num-cpus", type=int, help="CPUs of the local instance [default: Ray's, the machine's cores]"
    )
    ray_options.add_argument(
        "--cpus-per-point", type=float, default=1.0, help="CPUs Ray reserves for each point's task [default: 1]"
    )
    ray_options.add_argument("--ipu", metavar="PATH", help="the `ipu` binary on the nodes [default: $IPU_BIN_DIR/ipu, else `ipu` on PATH]")
    return parser


def _sweep_arguments(args: argparse.Namespace) -> list[str]:
    """What `ipu sweep` gets for the points: the model, the sweep file and the axis flags."""
    arguments = [args.model]
    if args.sweep is not None:
        arguments += ["--sweep", args.sweep]
    for flag in ("tiles", "precision", "weight_memory", "beam_width", "candidates_per_op", "finalists", "constraints"):
        value = getattr(args, flag)
        if value is not None:
            arguments.append(f"--{flag.replace('_', '-')}={value}")
    return arguments


def _ipu_binary(given: str | None) -> str:
    """The `ipu` binary the tasks run: `--ipu` (a path made absolute; a bare name is looked up
    on each node's PATH), else `$IPU_BIN_DIR/ipu`, else `ipu` on this machine's PATH."""
    if given is not None:
        return os.path.abspath(given) if os.sep in given else given
    directory = os.environ.get("IPU_BIN_DIR")
    found = os.path.join(directory, "ipu") if directory else shutil.which("ipu")
    if not found or not os.path.isfile(found):
        raise UsageError(
            "no ipu binary: give --ipu PATH, set IPU_BIN_DIR or put `ipu` on PATH"
            + (f" (IPU_BIN_DIR/ipu is {found})" if directory else "")
        )
    return os.path.abspath(found)


def _absolute(path: str) -> str:
    """The path made absolute as Rust's `std::path::absolute` does on Unix: joined to the
    working directory, `.` components and repeated separators dropped, `..` kept."""
    joined = path if os.path.isabs(path) else os.path.join(os.getcwd(), path)
    return str(PurePosixPath(joined))


def _lock(out: Path):
    """Holds `<out>/sweep.lock` as `ipu sweep` does (one sweep at a time writes a results
    directory, whichever runs it)."""
    path = out / "sweep.lock"
    file = open(path, "a")
    try:
        fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        file.close()
        raise UsageError(
            f"another sweep is writing to '{out}' (it holds {path}); wait for it or use another --out"
        ) from None
    return file


def _cluster_address(args: argparse.Namespace) -> str | None:
    """The cluster to run on: `--address`, else `RAY_ADDRESS` (Ray's convention: a job on a
    cluster has it set), else None: a new local instance."""
    return args.address or os.environ.get("RAY_ADDRESS") or None


def _connect(args: argparse.Namespace) -> bool:
    """Connects to Ray: the cluster (`_cluster_address`), or a new local instance of
    `--num-cpus` CPUs. Returns whether this call connected (an already connected process,
    such as a test's, is left as it is)."""
    import ray

    if ray.is_initialized():
        return False
    address = _cluster_address(args)
    if address is not None:
        ray.init(address=address)
    else:
        # A local instance reports no usage statistics unless the environment asks for them.
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        ray.init(address="local", num_cpus=args.num_cpus, include_dashboard=False)
    return True


def _run_on_ray(
    args: argparse.Namespace,
    todo: list[dict[str, Any]],
    model: str,
    model_hash: str,
    ipu: str,
    out: Path,
    records: dict[str, dict[str, Any]],
) -> None:
    """Runs `todo` as Ray tasks, recording each point as its task finishes."""
    import ray

    if __name__ != "__main__":
        # Ship the task's code by value: the workers need Ray, not this package.
        ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    task = ray.remote(num_cpus=args.cpus_per_point)(run_point)
    model_path = _absolute(args.model)
    model_text = ray.put(Path(args.model).read_bytes())
    pending = {
        task.remote(ipu, model_path, model_text, point["params"], args.seed, args.max_cycles, args.timeout): point
        for point in todo
    }
    appender = Appender(out / "results.jsonl")
    finished = 0
    try:
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                point = pending.pop(ref)
                try:
                    answer = ray.get(ref)
                except Exception as error:  # the task, its worker or its node failed
                    what = _ANSI.sub("", f"{type(error).__name__}: {error}").strip(_WHITE_SPACE)
                    if len(what) > 4000:
                        what = what[:4000] + " ..."
                    answer = {"error": f"the Ray task of the point failed: {what}", "files": {}}
                write_point_files(out / "points", point["id"], answer.get("files", {}))
                entry = record(point, model, model_hash, answer, args.timeout)
                appender.append(entry)
                records[entry["key"]] = entry
                finished += 1
                if entry["status"] == "ok":
                    cycles = entry.get("device_program_cycles")
                    verdict = f"ok deviceProgramCycles={'?' if cycles is None else cycles}"
                else:
                    verdict = "FAILED"
                print(
                    f"[{finished}/{len(todo)}] {entry['id']} {label(entry['params'])} {verdict} ({entry['wall_seconds']:.1f} s)",
                    file=sys.stderr, flush=True,
                )
    finally:
        appender.close()
        for ref in pending:
            # Interrupted: the points still running stop with the sweep, as `ipu sweep`'s do.
            try:
                ray.cancel(ref, force=True)
            except Exception:  # the cluster is out of reach; Ray ends a driver's tasks with it
                pass


def run(argv: list[str] | None = None) -> int:
    """The command line; returns the exit code. Raises `UsageError` for what the caller can fix."""
    args = _parser().parse_args(argv)
    if args.timeout is not None and not (args.timeout > 0 and args.timeout != float("inf")):
        raise UsageError("--timeout must be a positive number of seconds")
    if args.num_cpus is not None and _cluster_address(args) is not None:
        raise UsageError("--num-cpus sizes a local instance; a cluster (--address or RAY_ADDRESS) has its own CPUs")
    if not args.cpus_per_point > 0:
        raise UsageError("--cpus-per-point must be positive")
    sweep_arguments = _sweep_arguments(args)
    if args.dry_run:
        ran = _rust_sweep([*sweep_arguments, "--dry-run"], ["true"], None)
        if ran.returncode == 2:
            raise UsageError(ran.stderr.strip())
        print(ran.stdout, end="")
        return ran.returncode
    try:
        import ray  # noqa: F401
    except ImportError:
        raise UsageError("ipu_opt.ray_sweep needs the 'ray' package (pip install ray)") from None
    points = expand(sweep_arguments)
    ipu = _ipu_binary(args.ipu)
    model, model_hash = points[0]["model"], points[0]["model_hash"]
    out = Path(args.out)
    (out / "points").mkdir(parents=True, exist_ok=True)
    lock = _lock(out)
    try:
        jsonl = out / "results.jsonl"
        records, unreadable = load(jsonl)
        for number in unreadable:
            print(f"{PROGRAM}: warning: {jsonl}:{number} is not a result (cut short by an interrupt?); ignored", file=sys.stderr)
        for key in sorted(records):
            if records[key]["model_hash"] != model_hash:
                raise UsageError(
                    f"{jsonl} holds results of another model ('{records[key]['model']}', or an edited one); use another --out"
                )

        def done(point: dict[str, Any]) -> bool:
            on_record = records.get(point["key"])
            return on_record is not None and not (args.retry_failed and on_record["status"] == "failed")

        todo = [point for point in points if not done(point)]
        skipped = len(points) - len(todo)
        started = time.monotonic()
        if not todo:
            print(f"sweep: all {len(points)} points already done in {jsonl}; nothing to run", flush=True)
        else:
            connected = _connect(args)
            try:
                import ray

                cpus = ray.cluster_resources().get("CPU", 0)
                print(
                    f"sweep: {len(points)} points, {skipped} already done, {len(todo)} to run as Ray tasks "
                    f"({cpus:g} CPUs, {args.cpus_per_point:g} a point); results in {out}",
                    flush=True,
                )
                _run_on_ray(args, todo, model, model_hash, ipu, out, records)
            finally:
                if connected:
                    ray.shutdown()
    finally:
        lock.close()
    ours = [records[point["key"]] for point in points if point["key"] in records]
    if len(ours) != len(points):
        print(f"{PROGRAM}: error: {len(points) - len(ours)} points have no result; run the command again to finish them", file=sys.stderr)
        return 1
    ok = sum(1 for entry in ours if entry["status"] == "ok")
    tally = (
        f"sweep: {len(points)} points ({len(todo)} run now on Ray in {time.monotonic() - started:.1f} s, "
        f"{skipped} already done); {ok} ok, {len(ours) - ok} failed"
    )
    return summarize(sweep_arguments, out, args.top, tally)


def main(argv: list[str] | None = None) -> int:
    try:
        return run(argv)
    except UsageError as error:
        print(f"{PROGRAM}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROGRAM}: interrupted; the finished points are on record, the same command runs the rest", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
