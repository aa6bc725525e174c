"""``python -m ipu_opt ARGS``: the ``ipu`` command line (``compile``, ``run``, ``inspect``,
``profile``, ``sweep``) from the installed package, without the ``ipu`` binary."""

import sys

from ipu_opt import _native


def main() -> int:
    launcher = [sys.executable, "-m", "ipu_opt"]
    return _native.cli_main(["ipu", *sys.argv[1:]], launcher)


if __name__ == "__main__":
    sys.exit(main())
