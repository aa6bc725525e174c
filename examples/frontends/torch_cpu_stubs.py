"""Lets PyPI's x86_64 torch wheel import on a machine without its CUDA packages.

That wheel links its libraries against NVIDIA's CUDA libraries (cuBLAS, cuDNN, NCCL, ...:
gigabytes of packages that an export on the CPU never calls). setup.sh installs torch without
them, plus the two small ones the CPU library itself loads (the CUDA runtime and CUPTI), and runs
this script, which builds for every other missing library a tiny stand-in shared library with
the same soname and symbol versions: each symbol torch takes from it is a function that aborts
if ever called. Nothing on the CPU path calls them, and torch.cuda.is_available() stays False
(the real CUDA runtime finds no driver).

Usage: python torch_cpu_stubs.py   (run with the frontends virtual environment's python)
"""

import re
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

SITE = Path(sysconfig.get_paths()["purelib"])
TORCH_LIB = SITE / "torch" / "lib"
SEARCH = [TORCH_LIB, SITE / "nvidia" / "cu13" / "lib"]
STUB_MARK = "ipu_opt_cuda_stub"
# Loaded only on demand (runtime compilation for GPUs), never by an import.
SKIP = {"libcaffe2_nvrtc.so"}


def out(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def elves():
    files = [p for p in TORCH_LIB.glob("*.so*") if p.name not in SKIP and not is_stub(p)]
    return files + list((SITE / "torch").glob("_C*.so"))


def is_stub(path):
    try:
        if path.stat().st_size >= 1 << 20:
            return False
        return STUB_MARK.encode() in path.read_bytes()
    except OSError:
        return False


def needed(path):
    return re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", out(["readelf", "-d", str(path)]))


def system_has(name):
    return name in out(["/sbin/ldconfig", "-p"])


def found(name):
    return any((d / name).exists() for d in SEARCH) or system_has(name)


def version_needs(path):
    """{file: [version names]} from .gnu.version_r."""
    needs, current = {}, None
    for line in out(["readelf", "-V", "--wide", str(path)]).splitlines():
        m = re.search(r"File: (\S+)", line)
        if m:
            current = m.group(1)
            needs.setdefault(current, [])
            continue
        m = re.search(r"Name: (\S+)\s+Flags", line)
        if m and current:
            needs[current].append(m.group(1))
    return needs


def undefined(path):
    syms = []
    for line in out(["nm", "-D", "--undefined-only", str(path)]).splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] == "U":  # weak references may stay unresolved
            syms.append(parts[-1])
    return syms


def defined_anywhere():
    """Unversioned symbols some real library already provides."""
    names = set()
    libs = [p for d in SEARCH if d.exists() for p in d.glob("*.so*") if not is_stub(p)]
    for lib in libs:
        try:
            text = out(["nm", "-D", "--defined-only", str(lib)])
        except subprocess.CalledProcessError:
            continue
        for line in text.splitlines():
            parts = line.split()
            if len(parts) >= 3:
                names.add(parts[2].split("@")[0])
    return names


def main():
    if not TORCH_LIB.exists():
        sys.exit(f"torch_cpu_stubs: {TORCH_LIB} missing")
    files = elves()
    missing = sorted({n for f in files for n in needed(f) if not found(n)})
    if not missing:
        print("torch_cpu_stubs: nothing missing")
        return
    versions = {m: set() for m in missing}   # soname -> version names required of it
    symbols = {m: {} for m in missing}       # soname -> {symbol: version or None}
    known = None
    for f in files:
        deps = needed(f)
        lacking = [n for n in deps if n in versions]
        if not lacking:
            continue
        vneeds = version_needs(f)
        version_file = {v: file for file, vs in vneeds.items() for v in vs}
        for file in lacking:
            versions[file].update(vneeds.get(file, []))
        for sym in undefined(f):
            name, _, version = sym.partition("@")
            version = version.lstrip("@") or None
            if version:
                file = version_file.get(version)
                if file in versions:
                    symbols[file][name] = version
            else:
                if known is None:
                    known = defined_anywhere()
                if name not in known and not name.startswith("_ITM") and name not in (
                        "__gmon_start__", "__cxa_finalize"):
                    symbols[lacking[0]].setdefault(name, None)
    with tempfile.TemporaryDirectory() as tmp:
        for soname in missing:
            src = Path(tmp) / f"{soname}.c"
            script = Path(tmp) / f"{soname}.map"
            names = sorted(symbols[soname])
            body = ["#include <stdlib.h>", f"const char {STUB_MARK}[] = \"{soname}\";"]
            body += [f"void {n}(void) {{ abort(); }}" for n in names]
            src.write_text("\n".join(body) + "\n")
            nodes = sorted(versions[soname]) or [soname]
            first = nodes[0]
            lines = []
            for v in nodes:
                mine = [n for n in names if (symbols[soname][n] or first) == v]
                if v == first:
                    mine.append(STUB_MARK)
                lines.append(f"{v} {{ global: {' '.join(s + ';' for s in mine)} }};")
            script.write_text("\n".join(lines) + "\n")
            target = TORCH_LIB / soname
            subprocess.run(["cc", "-shared", "-fPIC", "-O0", "-o", str(target), str(src),
                            f"-Wl,-soname,{soname}", f"-Wl,--version-script={script}"], check=True)
            print(f"torch_cpu_stubs: {soname}: {len(names)} symbols, versions {nodes}")


if __name__ == "__main__":
    main()
