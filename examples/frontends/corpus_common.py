"""Shared helpers of the frontend export scripts (export_jax.py, export_tf.py, export_torch.py).

Each model of the corpus lands in corpus/<route>/<name>/ as
  model.mlir              upstream dialects only (func, linalg, tensor, arith, math or tosa)
  inputs/arg<N>.npy       float32, one per function argument (weights passed as arguments too)
  expected/result<N>.npy  float32, the framework's own output for result N
and gets an entry in corpus/manifest.json. Before anything is written the module must verify
with stock mlir-opt of LLVM 22, and IREE's CPU run of the very file written must reproduce the
framework's output (its max abs error is recorded as evidence the export is faithful).
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"
MANIFEST = CORPUS / "manifest.json"
VENV_BIN = Path(sys.executable).parent

# IREE's run of the export must agree with the framework within this (f32 everywhere).
IREE_TOLERANCE = 1e-4

# Anything of IREE's own that must not survive into a checked-in model.
FORBIDDEN = re.compile(r"\b(util|flow|hal|stream)\.|iree_|\biree\.")


def mlir_opt():
    """Stock mlir-opt of LLVM 22."""
    for candidate in [os.environ.get("MLIR_OPT"), "/usr/bin/mlir-opt-22", "/usr/lib/llvm-22/bin/mlir-opt"]:
        if candidate and Path(candidate).exists():
            return candidate
    raise SystemExit("export: mlir-opt of LLVM 22 not found (set MLIR_OPT)")


def tool(name):
    path = VENV_BIN / name
    if not path.exists():
        raise SystemExit(f"export: {name} not found beside {sys.executable}; run setup.sh")
    return str(path)


def run(cmd, stdin=None):
    proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr[-4000:]}")
    return proc.stdout


def iree_input_lowering(text, input_type, extra_flags=()):
    """Lowers a frontend module (StableHLO or torch) with IREE's input pipeline to upstream
    linalg on tensors inside IREE's util.func wrapper, and unwraps it."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "in.mlir"
        out = Path(tmp) / "out.mlir"
        src.write_text(text)
        run([tool("iree-compile"), f"--iree-input-type={input_type}", *extra_flags,
             "--compile-to=input", str(src), "-o", str(out)])
        return unwrap_util(out.read_text())


def unwrap_util(text):
    """IREE's input lowering leaves the function as util.func / util.return, which are IREE
    ops; with no globals or calls they are plain func.func / func.return."""
    text = re.sub(r"\butil\.func public @", "func.func @", text)
    text = re.sub(r"\butil\.func private @", "func.func private @", text)
    text = re.sub(r"\butil\.return\b", "func.return", text)
    return text


def check_upstream(text, what):
    bad = sorted({m.group(0) for m in FORBIDDEN.finditer(text)})
    if bad:
        raise RuntimeError(f"{what}: non-upstream text remains after export: {bad}")


def verify(path):
    """Parses and verifies with stock mlir-opt-22 (raises with its diagnostics if not)."""
    run([mlir_opt(), str(path), "-o", os.devnull])


def op_counts(path):
    """Counts every operation by name, from mlir-opt-22's generic form (so custom syntax does
    not matter)."""
    generic = run([mlir_opt(), "--mlir-print-op-generic", "--mlir-elide-elementsattrs-if-larger=1",
                   "--mlir-elide-resource-strings-if-larger=1", str(path)])
    counts = {}
    for m in re.finditer(r'"([a-z_][a-z0-9_]*\.[a-z0-9_.]+)"\(', generic):
        counts[m.group(1)] = counts.get(m.group(1), 0) + 1
    counts.pop("builtin.module", None)
    return dict(sorted(counts.items()))


def iree_run(path, args, input_type, func="main", via_generic=False):
    """Compiles the checked-in model with iree-compile for llvm-cpu and runs it with IREE's
    python runtime; returns the results as float32 arrays."""
    import iree.compiler as ireec
    import iree.runtime as ireert

    with tempfile.TemporaryDirectory() as tmp:
        if via_generic:
            # IREE's MLIR is newer than LLVM 22 and prints and parses some ops (TOSA's
            # const_shape, for one) in another custom syntax; the generic form that
            # mlir-opt-22 prints of the checked-in file is read by both. Dense constants are
            # printed as element lists, not hex: the two store i1 in hex differently.
            generic = Path(tmp) / "generic.mlir"
            run([mlir_opt(), "--mlir-print-op-generic", "--mlir-print-elementsattrs-with-hex-if-larger=-1",
                 str(path), "-o", str(generic)])
            path = generic
        vmfb = ireec.compile_file(str(path), target_backends=["llvm-cpu"], input_type=input_type,
                                  extra_args=["--iree-llvmcpu-target-cpu=generic"])
    module = ireert.load_vm_flatbuffer(vmfb, driver="local-sync")
    outputs = module[func](*args)
    if not isinstance(outputs, (list, tuple)):
        outputs = [outputs]
    return [np.asarray(o.to_host() if hasattr(o, "to_host") else o, dtype=np.float32) for o in outputs]


def frameworks(*names):
    from importlib import metadata
    return {n: metadata.version(n) for n in names}


def write_model(route, name, mlir_text, args, expected, *, description, versions,
                input_type, tolerance=IREE_TOLERANCE, iree_via_generic=False):
    """Checks and writes one model.

    args: list of (argument name, array, is_weight), in function-argument order.
    expected: list of the framework's outputs, in result order.
    Returns the manifest entry.
    """
    check_upstream(mlir_text, f"{route}/{name}")
    if not mlir_text.endswith("\n"):
        mlir_text += "\n"
    out = CORPUS / route / name
    if out.exists():
        shutil.rmtree(out)
    (out / "inputs").mkdir(parents=True)
    (out / "expected").mkdir()
    model = out / "model.mlir"
    model.write_text(mlir_text)
    verify(model)

    arrays = []
    for i, (_, a, _) in enumerate(args):
        a = np.ascontiguousarray(np.asarray(a, dtype=np.float32))
        arrays.append(a)
        np.save(out / "inputs" / f"arg{i}.npy", a)
    results = []
    for i, r in enumerate(expected):
        r = np.ascontiguousarray(np.asarray(r, dtype=np.float32))
        results.append(r)
        np.save(out / "expected" / f"result{i}.npy", r)

    got = iree_run(model, arrays, input_type, via_generic=iree_via_generic)
    if len(got) != len(results):
        raise RuntimeError(f"{route}/{name}: IREE returned {len(got)} results, framework {len(results)}")
    error = 0.0
    for g, r in zip(got, results):
        if g.shape != r.shape:
            raise RuntimeError(f"{route}/{name}: IREE result shape {g.shape} != framework {r.shape}")
        error = max(error, float(np.max(np.abs(g - r))) if r.size else 0.0)
    if not error <= tolerance:
        raise RuntimeError(f"{route}/{name}: IREE differs from the framework by {error:.3g} (> {tolerance})")

    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    entry = {
        "route": route,
        "name": name,
        "description": description,
        "frameworks": versions,
        "arguments": [
            {"index": i, "name": n, "shape": list(a.shape), "dtype": "float32", "weight": bool(w)}
            for i, ((n, _, w), a) in enumerate(zip(args, arrays))
        ],
        "results": [{"index": i, "shape": list(r.shape), "dtype": "float32"} for i, r in enumerate(results)],
        "precision": "f32",
        "iree_max_abs_error": float(f"{error:.3g}"),
        "iree_tolerance": tolerance,
        "ops": op_counts(model),
        "bytes": {"model.mlir": model.stat().st_size, "total": size},
    }
    print(f"{route}/{name}: {len(arrays)} args, {len(results)} results, "
          f"IREE max abs error {error:.3g}, {size} bytes", flush=True)
    return entry


def record_failure(route, name, description, error):
    """A model the route could not export: kept in the manifest with the exact error."""
    print(f"{route}/{name}: FAILED: {error}", flush=True)
    return {"route": route, "name": name, "description": description, "failed": str(error)}


def update_manifest(route, entries):
    """Replaces the route's entries in corpus/manifest.json (other routes kept)."""
    manifest = {"models": []}
    if MANIFEST.exists():
        manifest = json.loads(MANIFEST.read_text())
    kept = [m for m in manifest["models"] if m["route"] != route]
    models = sorted(kept + entries, key=lambda m: (m["route"], m["name"]))
    manifest = {
        "precision": "f32",
        "layout": "corpus/<route>/<name>/{model.mlir, inputs/arg<N>.npy, expected/result<N>.npy}",
        "models": models,
    }
    MANIFEST.parent.mkdir(parents=True, exist_ok=True)
    MANIFEST.write_text(json.dumps(manifest, indent=1) + "\n")
    # Models of this route no longer produced are removed so the corpus matches the manifest.
    route_dir = CORPUS / route
    names = {m["name"] for m in entries if "failed" not in m}
    if route_dir.exists():
        for d in route_dir.iterdir():
            if d.is_dir() and d.name not in names:
                shutil.rmtree(d)


def summary(route, entries):
    """Prints the route's outcome; the exit status is 1 if any model failed."""
    failed = [e["name"] for e in entries if "failed" in e]
    print(f"{route}: {len(entries) - len(failed)} exported, {len(failed)} failed"
          + (f" ({', '.join(failed)})" if failed else ""))
    return 1 if failed else 0


def rng(seed):
    return np.random.default_rng(seed)


def normal(r, shape, scale=1.0):
    return (r.standard_normal(shape) * scale).astype(np.float32)
