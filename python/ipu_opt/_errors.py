"""The exceptions ipu_opt raises. Every one is an :class:`IpuError`."""

from __future__ import annotations

from typing import NamedTuple


class IpuError(Exception):
    """Base class of every error ipu_opt raises (also for an internal error of ipu-opt)."""


class InputError(IpuError, ValueError):
    """Something the caller can fix: an unknown input name, an array of the wrong shape or
    dtype, an unreadable or corrupt file, a bad option value. Nothing ran."""


class Diagnostic(NamedTuple):
    """One diagnostic of the compiler, as mlir-opt prints it: ``file:line:column: severity:
    message``. ``file`` is the model's path, or ``"<string>"`` for model text."""

    severity: str
    file: str | None
    line: int | None
    column: int | None
    message: str

    def __str__(self) -> str:
        if self.file is not None and self.line is not None and self.column is not None:
            return f"{self.file}:{self.line}:{self.column}: {self.severity}: {self.message}"
        return f"loc(unknown): {self.severity}: {self.message}"


class CompileError(IpuError):
    """The compiler refused the model. ``diagnostics`` holds MLIR's diagnostics (with file,
    line and column) when there were any; the message ends with them."""

    def __init__(self, message: str, diagnostics: list[tuple] | None = None) -> None:
        super().__init__(message)
        self.diagnostics: list[Diagnostic] = [Diagnostic(*d) for d in diagnostics or []]


class RunError(IpuError):
    """The run failed on the device: the simulator refused the package or faulted (what
    ``ipu run`` reports as ``hardwareTest=FAIL``), or the device could not be owned."""


class NumericalError(IpuError):
    """The device's outputs differ from the host reference beyond the workload's tolerance
    (``numericalTest=FAIL``). The run's ``outputs`` and ``profile`` are attached."""

    def __init__(self, message: str, outputs: dict | None = None, profile: dict | None = None) -> None:
        super().__init__(message)
        self.outputs = outputs if outputs is not None else {}
        self.profile = profile if profile is not None else {}
