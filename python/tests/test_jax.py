"""from_jax: the missing-package errors, the IREE-to-upstream text step on stored outputs,
and the whole route with stand-ins for jax and iree-compile that replay stored outputs."""

import os
import stat
import sys
import types

import numpy as np
import pytest

import ipu_opt
from conftest import DATA


def test_missing_jax_raises_import_error_naming_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "jax", None)  # `import jax` raises ImportError
    with pytest.raises(ImportError, match="needs the 'jax' package") as caught:
        ipu_opt.from_jax(lambda x: x, np.zeros(4, np.float32))
    assert caught.value.name == "jax"


def test_missing_iree_compile_raises_import_error_naming_its_package(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "jax", types.ModuleType("jax"))
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    with pytest.raises(ImportError, match="iree-base-compiler") as caught:
        ipu_opt.from_jax(lambda x: x, np.zeros(4, np.float32))
    assert caught.value.name == "iree-base-compiler"


def test_iree_input_becomes_upstream_mlir():
    text = (DATA / "jax_matmuls_iree_input.mlir").read_text()
    assert "util.func public @main" in text and "util.return" in text
    upstream = ipu_opt.iree_input_to_func(text)
    assert "util." not in upstream
    assert "func.func @main(%arg0: tensor<4x8xf32>, %arg1: tensor<8x16xf32>, %arg2: tensor<16x8xf32>) -> tensor<4x8xf32> {" in upstream
    assert "func.return %5 : tensor<4x8xf32>" in upstream
    # Only the two renames: everything else is the text IREE printed.
    assert upstream.replace("func.func @", "util.func public @").replace("func.return", "util.return") == text


def test_iree_leftovers_are_refused_with_their_line():
    text = "util.func public @main() {\n  %0 = flow.dispatch @x() : () -> ()\n  util.return\n}\n"
    with pytest.raises(ipu_opt.CompileError, match="<iree-input>:2: 'flow.dispatch' is IREE's"):
        ipu_opt.iree_input_to_func(text)


def test_stored_iree_input_compiles_and_runs():
    upstream = ipu_opt.iree_input_to_func((DATA / "jax_matmuls_iree_input.mlir").read_text())
    package = ipu_opt.compile(upstream, tiles=4, precision="f32")
    rng = np.random.default_rng(3)
    x, w1, w2 = (rng.standard_normal(s, dtype=np.float32) for s in [(4, 8), (8, 16), (16, 8)])
    outputs, profile = ipu_opt.run(package, {"arg0": x, "arg1": w1, "arg2": w2})
    assert profile["numerical"] == "PASS"
    np.testing.assert_allclose(outputs["result0"], (x @ w1) @ w2, rtol=1e-5, atol=1e-5)


def test_jax_relu_mlp_imports_and_runs():
    # JAX's ReLU is a linalg.generic of arith.maximumf: imported as an ipu.map.
    upstream = ipu_opt.iree_input_to_func((DATA / "jax_relu_mlp_iree_input.mlir").read_text())
    package = ipu_opt.compile(upstream, tiles=4, precision="f32")
    rng = np.random.default_rng(5)
    x, w1, w2 = (rng.standard_normal(s, dtype=np.float32) for s in [(4, 8), (8, 16), (16, 8)])
    outputs, profile = ipu_opt.run(package, {"arg0": x, "arg1": w1, "arg2": w2})
    assert profile["numerical"] == "PASS"
    np.testing.assert_allclose(outputs["result0"], np.maximum(x @ w1, 0.0) @ w2, rtol=1e-5, atol=1e-5)


def test_unimportable_op_is_a_located_compile_error():
    # A body op no map kernel computes (math.atan) stays a located import error.
    upstream = ipu_opt.iree_input_to_func(
        (DATA / "jax_relu_mlp_iree_input.mlir").read_text().replace(
            "%8 = arith.maximumf %in, %cst : f32", "%8 = math.atan %in : f32"
        )
    )
    with pytest.raises(ipu_opt.CompileError) as caught:
        ipu_opt.compile(upstream, tiles=4, precision="f32")
    first = caught.value.diagnostics[0]
    assert (first.file, first.line, first.column) == ("<string>", 10, 10)
    assert "'linalg.generic' op cannot be converted to ipu" in first.message
    assert "'math.atan' is not an op an elementwise body can compute" in first.message


def test_from_jax_route_with_stand_ins(monkeypatch, tmp_path):
    """jax's lowering and iree-compile replaced by stand-ins that check what they are given
    and replay the stored outputs of the real ones."""
    stablehlo = (DATA / "jax_matmuls_stablehlo.mlir").read_text()
    lowered_by = []

    class Lowered:
        def as_text(self):
            return stablehlo

    class Jitted:
        def __init__(self, fn):
            self.fn = fn

        def lower(self, *args):
            lowered_by.append([a.shape for a in args])
            return Lowered()

    fake_jax = types.ModuleType("jax")
    fake_jax.jit = Jitted
    monkeypatch.setitem(sys.modules, "jax", fake_jax)
    tool = tmp_path / "iree-compile"
    tool.write_text(
        "#!/bin/sh\n"
        f'[ "$*" = "--iree-input-type=stablehlo --compile-to=input - -o -" ] || {{ echo "bad arguments: $*" >&2; exit 2; }}\n'
        f'grep -q "stablehlo.dot_general" || {{ echo "not the StableHLO" >&2; exit 3; }}\n'
        f"cat {DATA / 'jax_matmuls_iree_input.mlir'}\n"
    )
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")

    args = [np.zeros(s, np.float32) for s in [(4, 8), (8, 16), (16, 8)]]
    package = ipu_opt.from_jax(lambda x, w1, w2: None, *args, tiles=4, precision="f32")
    assert lowered_by == [[(4, 8), (8, 16), (16, 8)]]
    assert package.name == "main"
    _, profile = ipu_opt.run(package)
    assert profile["numerical"] == "PASS"
    assert [b["shape"] for b in package.bindings if b["role"] == "input"] == [(4, 8), (8, 16), (16, 8)]

    failing = tmp_path / "fail" / "iree-compile"
    failing.parent.mkdir()
    failing.write_text("#!/bin/sh\necho 'error: unsupported op' >&2\nexit 1\n")
    failing.chmod(failing.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{failing.parent}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(ipu_opt.CompileError, match="iree-compile could not lower the function \\(exit 1\\):\nerror: unsupported op"):
        ipu_opt.from_jax(lambda x, w1, w2: None, *args)
