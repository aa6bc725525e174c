"""Prints a markdown table of what each exported model is made of (from corpus/manifest.json,
whose op counts come from mlir-opt-22's generic form of each model.mlir).

Usage: op_table.py corpus/manifest.json
"""

import json
import sys

# Bookkeeping ops left out of the "other ops" column.
QUIET = {"func.func", "func.return", "linalg.yield", "arith.constant", "tosa.const", "tosa.const_shape"}


def main():
    manifest = json.load(open(sys.argv[1]))
    print("| route/model | IREE err | bytes | linalg.generic | named linalg | tensor | tosa | arith/math in bodies |")
    print("|---|---|---|---|---|---|---|---|")
    for m in manifest["models"]:
        if "failed" in m:
            print(f"| {m['route']}/{m['name']} | FAILED | | | | | | |")
            continue
        ops = m["ops"]
        named = {k: v for k, v in ops.items() if k.startswith("linalg.") and k not in ("linalg.generic", "linalg.yield", "linalg.index")}
        tensor = {k: v for k, v in ops.items() if k.startswith("tensor.")}
        tosa = {k: v for k, v in ops.items() if k.startswith("tosa.") and k not in QUIET}
        scalar = {k: v for k, v in ops.items() if k.split(".")[0] in ("arith", "math") and k not in QUIET}
        scalar.update({k: v for k, v in ops.items() if k == "linalg.index"})

        def fmt(d):
            return ", ".join(f"{k.split('.', 1)[1]} {v}" for k, v in sorted(d.items()))
        print(f"| {m['route']}/{m['name']} | {m['iree_max_abs_error']:.2g} | {m['bytes']['total']} | "
              f"{ops.get('linalg.generic', 0)} | {fmt(named)} | {fmt(tensor)} | {fmt(tosa)} | {fmt(scalar)} |")


if __name__ == "__main__":
    main()
