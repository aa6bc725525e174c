"""Type stubs of ipu_opt._native, the Rust extension behind ipu_opt (see ipu_opt/__init__.py
for the documented API)."""

from typing import Any

import numpy as np

DEFAULT_DEVICE: str

class Package:
    """A compiled application package (``.ipuexe``): what ``ipu compile`` writes and ``ipu
    run`` runs. Made by :func:`ipu_opt.compile` or :func:`ipu_opt.load`."""

    @property
    def name(self) -> str:
        """The function the package runs."""
    @property
    def tiles(self) -> int:
        """Tiles of the package's target device."""
    @property
    def target(self) -> str:
        """The target device table (``c600``, ``bow``)."""
    @property
    def bindings(self) -> list[dict[str, Any]]:
        """One dict per host tensor: ``name``, ``role`` (``input``, ``weight``,
        ``output``), ``shape`` (a tuple) and ``dtype`` (the element type on the device)."""
    @property
    def estimates(self) -> dict[str, Any] | None:
        """The compiler's figures (``refined_cycles``, ``final_cycles``,
        ``peak_standard_bytes``, ``peak_interleaved_bytes``, ``peak_total_bytes``,
        ``compile_seconds``) when compiled in this process; ``None`` for a loaded package."""
    def save(self, path: str) -> None:
        """Write the package to ``path`` (atomically)."""
    def to_bytes(self) -> bytes:
        """The package file's bytes."""
    @staticmethod
    def from_bytes(data: bytes) -> Package:
        """Read a package from its file's bytes (``InputError`` when they are not one)."""

def compile(
    source: str,
    file: str,
    *,
    tiles: int | None = None,
    precision: str | None = None,
    constraints: str | None = None,
    active_tiles: list[int] | None = None,
    beam_width: int | None = None,
    candidates_per_op: int | None = None,
    finalists: int | None = None,
    memory_budget: int | None = None,
    weight_memory: str | None = None,
    dump_plans: str | None = None,
) -> Package: ...
def load(path: str) -> Package: ...
def run(
    package: Package,
    inputs: dict[str, np.ndarray] | None = None,
    *,
    seed: int = 0,
    check: bool = True,
    device: str | None = None,
    max_cycles: int = 10_000_000_000,
    lock_dir: str | None = None,
    lock_timeout: float | None = None,
    config: str | None = None,
    profile_path: str | None = None,
) -> tuple[dict[str, np.ndarray], str, list[str]]:
    """Returns the outputs, the run's figures as JSON and the numerical test's failures."""
def sweep(arguments: list[str], launcher: list[str]) -> str:
    """``ipu sweep`` with ``arguments``; returns the records as a JSON array."""
def cli_main(argv: list[str], launcher: list[str]) -> int:
    """The ``ipu`` command line in this process; returns the exit code."""
def _panic_for_test(message: str) -> None:
    """Panics inside the extension's guard (tests: the panic arrives as ``IpuError``)."""
