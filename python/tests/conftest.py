"""Shared fixtures of the ipu_opt tests: the repository's examples and the `ipu` binary the
package is compared with."""

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="session")
def ipu_binary() -> Path:
    """The `ipu` binary of this checkout (IPU_BIN_DIR, as scripts/test.sh exports it for lit,
    else target/debug). Missing is a failure, not a skip: the comparison is the test."""
    directory = Path(os.environ.get("IPU_BIN_DIR", REPO / "target" / "debug"))
    binary = directory / "ipu"
    if not binary.is_file():
        pytest.fail(f"no ipu binary at {binary}: build it (cargo build -p ipu-driver) or set IPU_BIN_DIR")
    return binary


@pytest.fixture(scope="session")
def mlp_small():
    """examples/mlp_small.mlir compiled for 64 tiles, once for the session."""
    import ipu_opt

    return ipu_opt.compile(EXAMPLES / "mlp_small.mlir", tiles=64)
