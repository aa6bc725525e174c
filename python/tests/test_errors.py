"""Bad input is a clear Python exception naming the problem, before anything runs."""

import numpy as np
import pytest

import ipu_opt
from conftest import EXAMPLES

BAD_OP = """func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = "ipu.bogus"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
"""

BAD_MATMUL = """func.func @f(%x: tensor<4x8xf16>, %w: tensor<9x8xf16>) -> tensor<4x8xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<4x8xf16>, tensor<9x8xf16>) -> tensor<4x8xf16>
  return %y : tensor<4x8xf16>
}
"""


def test_errors_are_ipu_errors():
    assert issubclass(ipu_opt.InputError, ipu_opt.IpuError)
    assert issubclass(ipu_opt.InputError, ValueError)
    for error in (ipu_opt.CompileError, ipu_opt.RunError, ipu_opt.NumericalError):
        assert issubclass(error, ipu_opt.IpuError)


def test_text_diagnostic_has_line_and_column():
    with pytest.raises(ipu_opt.CompileError) as caught:
        ipu_opt.compile(BAD_OP, tiles=4)
    first = caught.value.diagnostics[0]
    assert (first.severity, first.file, first.line, first.column) == ("error", "<string>", 2, 8)
    assert "unregistered operation 'ipu.bogus'" in first.message
    assert "<string>:2:8: error: unregistered operation 'ipu.bogus'" in str(caught.value)


def test_file_diagnostic_names_the_file(tmp_path):
    model = tmp_path / "bad.mlir"
    model.write_text(BAD_MATMUL)
    with pytest.raises(ipu_opt.CompileError) as caught:
        ipu_opt.compile(model, tiles=4)
    first = caught.value.diagnostics[0]
    assert (first.file, first.line, first.column) == (str(model), 2, 8)
    assert "contraction sizes differ" in first.message
    assert f"{model}:2:8: error:" in str(caught.value)


@pytest.mark.parametrize(
    "options, message",
    [
        ({"precision": "f64"}, "precision 'f64': expected native, f16, f32 or fp8"),
        ({"tiles": 0}, "tiles=0 is outside 1..=1472"),
        ({"tiles": 5000}, "tiles=5000 is outside 1..=1472"),
        ({"weight_memory": "fast"}, "weight_memory 'fast'"),
        ({"beam_width": 0}, "beam_width must be at least 1"),
        ({"constraints": "/nonexistent/plans.json"}, "no such file"),
    ],
)
def test_bad_compile_options(options, message):
    with pytest.raises(ipu_opt.InputError, match=message.replace("(", r"\(").replace(".", r"\.")):
        ipu_opt.compile(EXAMPLES / "mlp_small.mlir", **options)


def test_missing_model_file():
    with pytest.raises(ipu_opt.InputError, match="cannot read model 'no/such/model.mlir': no such file"):
        ipu_opt.compile("no/such/model.mlir")


def test_module_of_another_type():
    with pytest.raises(ipu_opt.InputError, match="not int"):
        ipu_opt.compile(42)


@pytest.mark.parametrize(
    "inputs, message",
    [
        ({"argX": np.zeros(3, np.float32)}, "input 'argX' is not an input of the package \\(it takes: arg0 \\(input\\)"),
        ({"result0": np.zeros(3, np.float32)}, "input 'result0' is an output of the package"),
        ({"arg0": np.zeros((2, 48), np.float32)}, "input 'arg0': shape \\(2, 48\\) does not match: the package's input 'arg0' is f16 \\(2, 48, 128\\)"),
        ({"arg2": np.zeros((256, 1), np.float32)}, "input 'arg2': shape \\(256, 1\\) does not match"),
        ({"arg0": np.zeros((2, 48, 128))}, "input 'arg0': dtype float64 is not accepted: give float32 or float16"),
        ({"arg0": np.zeros((2, 48, 128), np.int32)}, "input 'arg0': dtype int32 is not accepted"),
        ({"arg0": np.zeros((2, 48, 128), ">f4")}, "input 'arg0': dtype >f4 is not accepted"),
        ({"arg0": [[1.0, 2.0]]}, "input 'arg0': expected a numpy.ndarray, got list"),
        ({7: np.zeros(3, np.float32)}, "input names must be strings \\(binding names\\), not int"),
    ],
)
def test_bad_inputs(mlp_small, inputs, message):
    with pytest.raises(ipu_opt.InputError, match=message):
        ipu_opt.run(mlp_small, inputs)


def test_huge_shape_is_refused_without_copying(mlp_small):
    # A broadcast view: 10^12 elements that occupy 4 bytes. Copying it would take 4 TB.
    huge = np.broadcast_to(np.float32(0), (1_000_000, 1_000_000))
    with pytest.raises(ipu_opt.InputError, match="shape \\(1000000, 1000000\\) does not match"):
        ipu_opt.run(mlp_small, {"arg1": huge})


def test_strided_input_is_read_in_logical_order(mlp_small):
    inputs = {"arg0": np.random.default_rng(0).standard_normal((2, 48, 128), dtype=np.float32)}
    contiguous, _ = ipu_opt.run(mlp_small, inputs)
    fortran = {"arg0": np.asfortranarray(inputs["arg0"])}
    strided, _ = ipu_opt.run(mlp_small, fortran)
    assert np.array_equal(contiguous["result0"], strided["result0"])


def test_inputs_not_a_mapping(mlp_small):
    with pytest.raises(ipu_opt.InputError, match="inputs must be a dict"):
        ipu_opt.run(mlp_small, [np.zeros(3)])


def test_bad_device_and_run_options(mlp_small):
    with pytest.raises(ipu_opt.InputError, match="device 'sim:nope': unknown target 'nope'"):
        ipu_opt.run(mlp_small, device="sim:nope")
    with pytest.raises(ipu_opt.InputError, match="over --max-cycles 10"):
        ipu_opt.run(mlp_small, max_cycles=10)
    with pytest.raises(ipu_opt.InputError, match="lock_timeout must be a non-negative"):
        ipu_opt.run(mlp_small, lock_timeout=-1.0)


def test_corrupt_package_files(tmp_path, mlp_small):
    not_a_package = tmp_path / "text.ipuexe"
    not_a_package.write_text("hello")
    with pytest.raises(ipu_opt.InputError, match="reading package .*text.ipuexe"):
        ipu_opt.load(not_a_package)
    with pytest.raises(ipu_opt.InputError, match="no such file|No such file"):
        ipu_opt.load(tmp_path / "missing.ipuexe")
    data = mlp_small.to_bytes()
    with pytest.raises(ipu_opt.InputError, match="not a package"):
        ipu_opt.Package.from_bytes(data[: len(data) // 2])
    flipped = bytearray(data)
    flipped[len(flipped) // 2] ^= 0xFF
    with pytest.raises(ipu_opt.InputError, match="not a package"):
        ipu_opt.Package.from_bytes(bytes(flipped))


def test_a_panic_in_the_extension_is_an_ipu_error():
    with pytest.raises(ipu_opt.IpuError, match="internal error in ipu-opt \\(please report it\\): boom at the boundary"):
        ipu_opt._native._panic_for_test("boom at the boundary")
