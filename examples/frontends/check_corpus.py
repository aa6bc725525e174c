"""Checks the checked-in frontend corpus without any frontend installed (standard library only):
every corpus/<route>/<name>/model.mlir parses and verifies with stock mlir-opt, its function has
one inputs/arg<N>.npy per argument and one expected/result<N>.npy per result, all float32, with
the shapes of the function's signature and of manifest.json.

Usage: check_corpus.py [--mlir-opt PATH] CORPUS_DIR     (exit 1 if anything is wrong)
"""

import argparse
import ast
import json
import re
import subprocess
import sys
from pathlib import Path


def npy_header(path):
    """(dtype descr, shape) of a .npy file, read from its header."""
    data = path.read_bytes()[:4096]
    if data[:6] != b"\x93NUMPY":
        raise ValueError(f"{path.name}: not a .npy file")
    major = data[6]
    if major == 1:
        length, start = int.from_bytes(data[8:10], "little"), 10
    else:
        length, start = int.from_bytes(data[8:12], "little"), 12
    header = ast.literal_eval(data[start:start + length].decode("latin1"))
    return header["descr"], tuple(header["shape"])


def signature(text):
    """Argument and result shapes of func.func @main (ranked f32 tensors)."""
    m = re.search(r"func\.func @main\((.*?)\)\s*->\s*(\(.*?\)|tensor<[^>]*>)\s*(attributes|\{)", text, re.S)
    if not m:
        raise ValueError("no func.func @main")

    def shapes(s):
        out = []
        for t in re.findall(r"tensor<([^>]*)>", s):
            dims, elem = t.rsplit("x", 1) if "x" in t else ("", t)
            out.append((tuple(int(d) for d in dims.split("x") if d), elem))
        return out
    return shapes(m.group(1)), shapes(m.group(2))


def check_model(d, entry, mlir_opt):
    problems = []
    model = d / "model.mlir"
    if not model.exists():
        return ["model.mlir missing"]
    proc = subprocess.run([mlir_opt, str(model), "-o", "/dev/null"], capture_output=True, text=True)
    if proc.returncode != 0:
        problems.append("mlir-opt: " + (proc.stderr.strip().splitlines() or ["failed"])[0])
    try:
        args, results = signature(model.read_text())
    except ValueError as e:
        return problems + [str(e)]
    for kind, folder, stem, sig in [("argument", "inputs", "arg", args),
                                    ("result", "expected", "result", results)]:
        files = sorted((d / folder).glob("*.npy")) if (d / folder).exists() else []
        if len(files) != len(sig):
            problems.append(f"{len(sig)} {kind}s but {len(files)} files in {folder}/")
        for i, (shape, elem) in enumerate(sig):
            f = d / folder / f"{stem}{i}.npy"
            if not f.exists():
                problems.append(f"{folder}/{f.name} missing")
                continue
            descr, got = npy_header(f)
            if descr != "<f4" or elem != "f32":
                problems.append(f"{folder}/{f.name}: {descr} for a {elem} {kind}, want float32")
            if got != shape:
                problems.append(f"{folder}/{f.name}: shape {list(got)}, the function says {list(shape)}")
    if entry is None:
        problems.append("no manifest entry")
    else:
        if [tuple(a["shape"]) for a in entry["arguments"]] != [s for s, _ in args]:
            problems.append("manifest argument shapes differ from the function's")
        if [tuple(r["shape"]) for r in entry["results"]] != [s for s, _ in results]:
            problems.append("manifest result shapes differ from the function's")
    return problems


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mlir-opt", default="mlir-opt")
    parser.add_argument("corpus", type=Path)
    opts = parser.parse_args()
    manifest_path = opts.corpus / "manifest.json"
    if not manifest_path.exists():
        print(f"check_corpus: error: {manifest_path} missing")
        return 1
    manifest = json.loads(manifest_path.read_text())
    entries = {(m["route"], m["name"]): m for m in manifest["models"] if "failed" not in m}
    dirs = sorted(p.parent for p in opts.corpus.glob("*/*/model.mlir"))
    found = {(d.parent.name, d.name) for d in dirs}
    failed = 0
    for d in dirs:
        key = (d.parent.name, d.name)
        problems = check_model(d, entries.get(key), opts.mlir_opt)
        if problems:
            failed += 1
            print(f"FAIL {key[0]}/{key[1]}: " + "; ".join(problems))
        else:
            print(f"ok {key[0]}/{key[1]}")
    for key in sorted(set(entries) - found):
        failed += 1
        print(f"FAIL {key[0]}/{key[1]}: in the manifest but model.mlir missing")
    total = len(dirs) + len(set(entries) - found)
    print(f"check_corpus: {total} models, {total - failed} ok, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
