"""Compile and run from numpy, matching `ipu run`; save and load."""

import json
import math
import subprocess

import numpy as np
import pytest

import ipu_opt
from conftest import EXAMPLES


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


def mlp_inputs(rng, batch, tokens, hidden, inner):
    """float32 inputs of an MLP block, weights scaled by 1/sqrt(fan_in)."""
    return {
        "arg0": rng.standard_normal((batch, tokens, hidden), dtype=np.float32),
        "arg1": (rng.standard_normal((hidden, inner), dtype=np.float32) / np.sqrt(hidden)).astype(np.float32),
        "arg2": (0.1 * rng.standard_normal(inner, dtype=np.float32)).astype(np.float32),
        "arg3": (rng.standard_normal((inner, hidden), dtype=np.float32) / np.sqrt(inner)).astype(np.float32),
        "arg4": (0.1 * rng.standard_normal(hidden, dtype=np.float32)).astype(np.float32),
    }


def test_mlp_from_numpy_matches_numpy(mlp_small):
    inputs = mlp_inputs(np.random.default_rng(7), 2, 48, 128, 256)
    outputs, profile = ipu_opt.run(mlp_small, inputs)
    assert set(outputs) == {"result0"}
    out = outputs["result0"]
    assert out.shape == (2, 48, 128) and out.dtype == np.float32
    # An independent float32 reference of the same block (the device computes in f16).
    h = gelu_tanh(inputs["arg0"] @ inputs["arg1"] + inputs["arg2"])
    expected = h @ inputs["arg3"] + inputs["arg4"]
    error = np.abs(out - expected).max()
    assert error < 0.05 * np.abs(expected).max(), error
    assert profile["hardware"] == "PASS"
    assert profile["numerical"] == "PASS"
    assert profile["device_program_cycles"] > 0
    assert profile["simulated_cycles"] == profile["device_program_cycles"] + profile["host_exchange_cycles"]
    assert profile["refined_cycles"] == mlp_small.estimates["refined_cycles"]
    assert profile["device_tiles"] == 1472


def test_generated_inputs_follow_the_seed(mlp_small):
    first, _ = ipu_opt.run(mlp_small, seed=3)
    again, _ = ipu_opt.run(mlp_small, seed=3)
    other, _ = ipu_opt.run(mlp_small, seed=4)
    assert np.array_equal(first["result0"], again["result0"])
    assert not np.array_equal(first["result0"], other["result0"])


def test_float16_inputs_equal_float32_inputs_of_the_same_values(mlp_small):
    inputs = mlp_inputs(np.random.default_rng(1), 2, 48, 128, 256)
    halves = {name: array.astype(np.float16) for name, array in inputs.items()}
    rounded = {name: array.astype(np.float32) for name, array in halves.items()}
    from_halves, _ = ipu_opt.run(mlp_small, halves)
    from_rounded, _ = ipu_opt.run(mlp_small, rounded)
    assert np.array_equal(from_halves["result0"], from_rounded["result0"])


def test_check_false_skips_the_numerical_test(mlp_small):
    _, profile = ipu_opt.run(mlp_small, check=False)
    assert profile["numerical"] is None
    assert profile["hardware"] == "PASS"


def test_save_load_round_trip(mlp_small, tmp_path):
    path = tmp_path / "mlp.ipuexe"
    mlp_small.save(path)
    loaded = ipu_opt.load(path)
    assert loaded.to_bytes() == mlp_small.to_bytes()
    assert loaded.name == "mlp" and loaded.tiles == 1472
    assert loaded.bindings == mlp_small.bindings
    assert loaded.estimates is None  # the compiler's figures are not in the file
    from_memory, profile = ipu_opt.run(mlp_small, seed=5)
    from_file, loaded_profile = ipu_opt.run(loaded, seed=5)
    from_path, _ = ipu_opt.run(path, seed=5)
    assert np.array_equal(from_memory["result0"], from_file["result0"])
    assert np.array_equal(from_memory["result0"], from_path["result0"])
    assert loaded_profile["device_program_cycles"] == profile["device_program_cycles"]
    assert loaded_profile["refined_cycles"] is None
    assert ipu_opt.Package.from_bytes(mlp_small.to_bytes()).to_bytes() == mlp_small.to_bytes()


def test_profile_file_is_written(mlp_small, tmp_path, ipu_binary):
    path = tmp_path / "run.ipuprof"
    ipu_opt.run(mlp_small, profile_path=path)
    assert path.stat().st_size > 0
    query = subprocess.run(
        [ipu_binary, "profile", "query", path, "--group-by", "op", "--json"],
        capture_output=True, text=True, check=True,
    )
    assert json.loads(query.stdout)


def test_siglip_mlp_from_numpy_matches_ipu_run(tmp_path, ipu_binary):
    """The issue's done-criterion: the SigLIP MLP compiled and run from numpy gives the
    outputs and figures `ipu run --result-json` gives on the same inputs."""
    model = EXAMPLES / "siglip_mlp.mlir"
    inputs = mlp_inputs(np.random.default_rng(2024), 4, 729, 1152, 4304)
    package = ipu_opt.compile(model, tiles=1472, precision="f16")
    outputs, profile = ipu_opt.run(package, inputs)
    assert profile["numerical"] == "PASS" and profile["hardware"] == "PASS"

    given = tmp_path / "inputs"
    given.mkdir()
    for name, array in inputs.items():
        np.save(given / f"{name}.npy", array)
    result = tmp_path / "result.json"
    ran = subprocess.run(
        [ipu_binary, "run", model, "--tiles", "1472", "--precision", "f16",
         "--inputs", given, "--outputs", tmp_path / "outputs", "--result-json", result,
         "--artifacts", tmp_path / "artifacts"],
        capture_output=True, text=True,
    )
    assert ran.returncode == 0, ran.stderr
    expected = json.loads(result.read_text())
    expected_output = np.load(tmp_path / "outputs" / "result0.npy")
    assert np.array_equal(outputs["result0"], expected_output)
    for key in expected:
        if key != "compile_seconds":
            assert profile[key] == expected[key], key
    assert profile["device_program_cycles"] > 0 and profile["refined_cycles"] > 0
