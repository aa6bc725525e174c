"""ipu_opt: compile models for the Graphcore IPU21 (C600), run them on the simulated device and
sweep plan options, from Python.

The functions call the project's Rust compiler and runtime in this process (the ``_native``
extension); nothing shells out to the ``ipu`` binary except :func:`sweep`, whose points each
run in a process of their own (``python -m ipu_opt run ...``), as ``ipu sweep`` runs them.

>>> import numpy as np, ipu_opt
>>> package = ipu_opt.compile("examples/mlp_small.mlir", tiles=64)
>>> x = np.random.default_rng(0).standard_normal((2, 48, 128), dtype=np.float32)
>>> outputs, profile = ipu_opt.run(package, {"arg0": x})
>>> outputs["result0"].shape, profile["numerical"]
((2, 48, 128), 'PASS')
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Callable

import numpy as np

from . import _native
from ._errors import CompileError, Diagnostic, InputError, IpuError, NumericalError, RunError
from ._native import Package

__all__ = [
    "Package",
    "compile",
    "load",
    "run",
    "sweep",
    "from_jax",
    "iree_input_to_func",
    "IpuError",
    "InputError",
    "CompileError",
    "RunError",
    "NumericalError",
    "Diagnostic",
    "DEFAULT_DEVICE",
]

#: The device :func:`run` uses when none is named: the simulated C600.
DEFAULT_DEVICE: str = _native.DEFAULT_DEVICE

PathLike = str | os.PathLike


def _model_text(module: PathLike) -> tuple[str, str]:
    """The model's text and the name diagnostics give it: a path (``os.PathLike``, or a
    string without ``{`` and newlines) is read; anything else is MLIR text, named
    ``<string>``."""
    if isinstance(module, os.PathLike) or (
        isinstance(module, str) and "{" not in module and "\n" not in module
    ):
        path = os.fspath(module)
        try:
            with open(path, encoding="utf-8") as handle:
                return handle.read(), path
        except FileNotFoundError:
            raise InputError(f"cannot read model '{path}': no such file") from None
        except (OSError, UnicodeDecodeError) as error:
            raise InputError(f"cannot read model '{path}': {error}") from None
    if isinstance(module, str):
        return module, "<string>"
    raise InputError(
        f"module must be MLIR text or a path to a .mlir file, not {type(module).__name__}"
    )


def compile(
    module: PathLike,
    tiles: int | None = 1472,
    precision: str | None = "f16",
    *,
    constraints: PathLike | Mapping[str, Any] | None = None,
    active_tiles: Sequence[int] | None = None,
    beam_width: int | None = None,
    candidates_per_op: int | None = None,
    finalists: int | None = None,
    memory_budget: int | None = None,
    weight_memory: str | None = None,
    dump_plans: PathLike | None = None,
) -> Package:
    """Compile a model to a :class:`Package`, as ``ipu compile`` does.

    Args:
        module: MLIR text, or the path of a ``.mlir`` file, of ``ipu`` graph ops or of TOSA /
            linalg ops (imported first).
        tiles: tiles the program may use (``None``: the whole device).
        precision: ``"native"`` (each product in its operands' types), ``"f16"``, ``"f32"`` or
            ``"fp8"`` (``None``: native).
        constraints: plan constraints the planner must satisfy: a JSON file, or its content as
            a dict (``{"ops": [...]}``), in the form ``dump_plans`` writes.
        active_tiles: tile counts plans may use.
        beam_width: partial plans the planner's beam keeps per format group (default 8).
        candidates_per_op: candidates per op kept before the beam (default 24).
        finalists: finalists planning keeps and selection schedules (default 4).
        memory_budget: per-tile memory budget in bytes.
        weight_memory: memory class of GEMM weights: ``"auto"``, ``"interleaved"`` or
            ``"standard"``.
        dump_plans: write the chosen plans to this file.

    Raises:
        CompileError: the compiler refused the model; ``.diagnostics`` holds MLIR's
            diagnostics with file, line and column (``<string>`` for text).
        InputError: an unreadable file or a bad option value.
    """
    source, file = _model_text(module)
    with tempfile.TemporaryDirectory(prefix="ipu-opt-") as scratch:
        constraints_path = None
        if isinstance(constraints, Mapping):
            constraints_path = os.path.join(scratch, "constraints.json")
            with open(constraints_path, "w", encoding="utf-8") as handle:
                json.dump(dict(constraints), handle)
        elif constraints is not None:
            constraints_path = os.fspath(constraints)
        return _native.compile(
            source,
            file,
            tiles=tiles,
            precision=precision,
            constraints=constraints_path,
            active_tiles=list(active_tiles) if active_tiles is not None else None,
            beam_width=beam_width,
            candidates_per_op=candidates_per_op,
            finalists=finalists,
            memory_budget=memory_budget,
            weight_memory=weight_memory,
            dump_plans=os.fspath(dump_plans) if dump_plans is not None else None,
        )


def load(path: PathLike) -> Package:
    """Read a package file (``.ipuexe``), as written by :meth:`Package.save` or ``ipu
    compile``. A missing, truncated or corrupt file raises :class:`InputError`."""
    return _native.load(os.fspath(path))


def run(
    package: Package | PathLike,
    inputs: Mapping[str, np.ndarray] | None = None,
    seed: int = 0,
    check: bool = True,
    *,
    device: str | None = None,
    max_cycles: int = 10_000_000_000,
    lock_dir: PathLike | None = None,
    lock_timeout: float | None = None,
    config: PathLike | None = None,
    profile_path: PathLike | None = None,
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Run a package on the simulated device, as ``ipu run`` does.

    Args:
        package: a :class:`Package`, or the path of a package file.
        inputs: arrays by binding name (``arg0``, ...; a weight's name, ``const3``, replaces
            that weight). float32 or float16, of the binding's shape; the host rounds them to
            the binding's element type. Inputs not given are generated from ``seed`` (the same
            values ``ipu run --seed`` generates).
        seed: seed of the generated inputs.
        check: run the numerical test against the host reference and raise
            :class:`NumericalError` when it fails; ``False`` skips it (``numerical`` is then
            ``None``).
        device: ``"sim:c600"`` (default) or another ``sim:<target>``.
        max_cycles: refuse a program estimated at more device cycles than this.
        lock_dir: directory of the device's ownership lock (default: under the system's
            temporary directory).
        lock_timeout: seconds to wait for the device (default: wait).
        config: a device configuration file replayed after the package's register writes.
        profile_path: also write the run's profile (``.ipuprof``) here.

    Returns:
        ``(outputs, profile)``: the outputs as float32 arrays by binding name (``result0``,
        ...), and the figures ``ipu run --result-json`` writes: ``simulated_cycles``,
        ``device_program_cycles``, ``host_exchange_cycles``, ``refined_cycles`` and
        ``final_cycles`` (for a package compiled in this process), ``refined_error_percent``,
        ``peak_*_bytes``, ``device_tiles``, ``target``, ``compile_seconds``, ``hardware``, ``numerical``
        and ``max_abs_error``.

    Raises:
        InputError: an unknown input name, an array of the wrong shape or dtype, a bad device
            name, a program over ``max_cycles``.
        RunError: the simulator refused the package or faulted.
        NumericalError: (with ``check``) the outputs differ from the reference.
    """
    if not isinstance(package, Package):
        package = load(package)
    if inputs is not None and not isinstance(inputs, dict):
        if not isinstance(inputs, Mapping):
            raise InputError(
                f"inputs must be a dict of numpy arrays by binding name, not {type(inputs).__name__}"
            )
        inputs = dict(inputs)
    outputs, result, failures = _native.run(
        package,
        inputs,
        seed=seed,
        check=check,
        device=device,
        max_cycles=max_cycles,
        lock_dir=os.fspath(lock_dir) if lock_dir is not None else None,
        lock_timeout=lock_timeout,
        config=os.fspath(config) if config is not None else None,
        profile_path=os.fspath(profile_path) if profile_path is not None else None,
    )
    profile = json.loads(result)
    if check and profile.get("numerical") == "FAIL":
        detail = "\n".join(failures) if failures else "the outputs differ from the reference"
        raise NumericalError(
            f"numerical test failed (max abs error {profile.get('max_abs_error')}):\n{detail}",
            outputs,
            profile,
        )
    return outputs, profile


def _absolute_constraint_files(spec: Any) -> Any:
    """The sweep dict with each constraint set's relative ``file`` made absolute (resolved
    against the current directory, not the directory the dict is written to)."""

    def fix(entry: Any) -> Any:
        if isinstance(entry, Mapping) and "file" in entry:
            entry = dict(entry)
            entry["file"] = os.path.abspath(os.fspath(entry["file"]))
        return entry

    spec = json.loads(json.dumps(spec))
    product = spec.get("product")
    if isinstance(product, dict) and isinstance(product.get("constraints"), list):
        product["constraints"] = [fix(c) for c in product["constraints"]]
    points = spec.get("point")
    if isinstance(points, list):
        for point in points:
            if isinstance(point, dict) and "constraints" in point:
                point["constraints"] = fix(point["constraints"])
    return spec


def sweep(
    sweep: PathLike | Mapping[str, Any] | None,
    out_dir: PathLike,
    *,
    model: PathLike,
    tiles: Sequence[int] | None = None,
    precision: Sequence[str] | None = None,
    weight_memory: Sequence[str] | None = None,
    beam_width: Sequence[int] | None = None,
    candidates_per_op: Sequence[int] | None = None,
    finalists: Sequence[int] | None = None,
    jobs: int | None = None,
    seed: int = 0,
    max_cycles: int | None = None,
    timeout: float | None = None,
    retry_failed: bool = False,
    top: int = 10,
) -> list[dict[str, Any]]:
    """Compile and simulate ``model`` at every point of a sweep, as ``ipu sweep`` does: each
    point in a process of its own (``python -m ipu_opt run ...``), ``jobs`` at a time, into
    ``out_dir`` (``results.jsonl``, ``results.csv``, ``pareto.svg``, ``points/``). Points
    already in ``out_dir/results.jsonl`` are not run again; a failed point is a row with its
    ``diagnostic``, never an exception.

    Args:
        sweep: a sweep file (TOML, or JSON ending in ``.json``), or its content as a dict
            (``{"product": {...}, "point": [...]}``; a constraint set's relative ``file`` is
            resolved against the current directory), or ``None`` when the axis arguments say
            it all.
        out_dir: the results directory.
        model: the model, a ``.mlir`` file.
        tiles, precision, weight_memory, beam_width, candidates_per_op, finalists: axes that
            replace the sweep's own.
        jobs: points run at once (default: the available cores).
        seed: seed of every point's generated inputs.
        max_cycles: each point's ``max_cycles``.
        timeout: seconds a point may take before it is stopped and recorded as failed.
        retry_failed: run again the points on record as failed.
        top: rows of the printed summary table.

    Returns:
        One dict per point of this sweep, in the sweep's order: ``id``, ``params``,
        ``status`` (``"ok"`` or ``"failed"``), ``diagnostic``, ``wall_seconds``, ``plans``
        and the figures of :func:`run`'s profile.
    """
    out = Path(out_dir)
    arguments = [os.fspath(model), "--out", os.fspath(out)]
    if isinstance(sweep, Mapping):
        out.mkdir(parents=True, exist_ok=True)
        spec_path = out / "sweep.json"
        spec_path.write_text(json.dumps(_absolute_constraint_files(sweep), indent=2) + "\n")
        arguments += ["--sweep", os.fspath(spec_path)]
    elif sweep is not None:
        arguments += ["--sweep", os.fspath(sweep)]
    axes = {
        "--tiles": tiles,
        "--precision": precision,
        "--weight-memory": weight_memory,
        "--beam-width": beam_width,
        "--candidates-per-op": candidates_per_op,
        "--finalists": finalists,
    }
    for flag, values in axes.items():
        if values is not None:
            if isinstance(values, (str, int)):
                values = [values]
            arguments.append(f"{flag}={','.join(str(v) for v in values)}")
    options = {"--jobs": jobs, "--max-cycles": max_cycles, "--timeout": timeout}
    for flag, value in options.items():
        if value is not None:
            arguments.append(f"{flag}={value}")
    arguments += ["--seed", str(seed), "--top", str(top)]
    if retry_failed:
        arguments.append("--retry-failed")
    sys.stdout.flush()
    records = _native.sweep(arguments, [sys.executable, "-m", "ipu_opt"])
    return json.loads(records)


_IREE_LEFTOVERS = re.compile(r"\b(util|flow|hal|stream)\.[a-z_]+|\biree_[a-z_]+\.[a-z_]+")


def iree_input_to_func(text: str) -> str:
    """Turn ``iree-compile --compile-to=input`` output into upstream MLIR: ``util.func`` (and
    its ``public``) becomes ``func.func`` and ``util.return`` becomes ``func.return``.

    Raises:
        CompileError: an IREE op remains (``util.``, ``flow.``, ``hal.``, ``stream.`` or an
            ``iree_*`` dialect): the model used something upstream MLIR cannot express; the
            message names the op and its line.
    """
    renamed = re.sub(r"\butil\.func\s+public\s+@", "func.func @", text)
    renamed = re.sub(r"\butil\.func\b", "func.func", renamed)
    renamed = re.sub(r"\butil\.return\b", "func.return", renamed)
    for number, line in enumerate(renamed.splitlines(), start=1):
        code = line.split("//", 1)[0]
        found = _IREE_LEFTOVERS.search(code)
        if found:
            raise CompileError(
                f"<iree-input>:{number}: '{found.group(0)}' is IREE's, not upstream MLIR: "
                "the model lowers to something convert-linalg-to-ipu cannot import"
            )
    return renamed


def _iree_compile() -> str | None:
    """The ``iree-compile`` program: on ``PATH``, or beside this interpreter (a virtual
    environment's ``bin`` that is not on ``PATH``)."""
    found = shutil.which("iree-compile")
    if found:
        return found
    beside = Path(sys.executable).parent / "iree-compile"
    return os.fspath(beside) if beside.is_file() and os.access(beside, os.X_OK) else None


def from_jax(fn: Callable[..., Any], *example_args: Any, **compile_kwargs: Any) -> Package:
    """Compile a JAX function for the IPU through the StableHLO route: ``jax.jit(fn).lower(
    *example_args).as_text()``, ``iree-compile --iree-input-type=stablehlo
    --compile-to=input`` (linalg on tensors), :func:`iree_input_to_func`, then
    :func:`compile` with ``compile_kwargs``. ``example_args`` fix the shapes and dtypes;
    the package's inputs are the function's arguments (``arg0``, ...).

    Raises:
        ImportError: ``jax`` is not installed (``name="jax"``), or ``iree-compile`` is not
            found (``name="iree-base-compiler"``, the package that provides it).
        CompileError: iree-compile or the compiler refused the function.
    """
    try:
        import jax
    except ImportError as error:
        raise ImportError(
            "ipu_opt.from_jax needs the 'jax' package (pip install jax)", name="jax"
        ) from error
    iree = _iree_compile()
    if iree is None:
        raise ImportError(
            "ipu_opt.from_jax needs iree-compile, from the 'iree-base-compiler' package "
            "(pip install iree-base-compiler)",
            name="iree-base-compiler",
        )
    stablehlo = jax.jit(fn).lower(*example_args).as_text()
    lowered = subprocess.run(
        [iree, "--iree-input-type=stablehlo", "--compile-to=input", "-", "-o", "-"],
        input=stablehlo,
        capture_output=True,
        text=True,
    )
    if lowered.returncode != 0:
        raise CompileError(
            f"iree-compile could not lower the function (exit {lowered.returncode}):\n"
            + lowered.stderr.strip()
        )
    return compile(iree_input_to_func(lowered.stdout), **compile_kwargs)
