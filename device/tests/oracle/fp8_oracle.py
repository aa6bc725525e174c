#!/usr/bin/env python3
"""Independent FP8 oracle for ipu-device's numerics test, using PyPI ml_dtypes.

usage: fp8_oracle.py IN OUT

IN is a sequence of 8-byte little-endian records:
    u8 op      0 = encode (f32 -> fp8), 1 = decode (fp8 -> f32)
    u8 format  0 = float8_e4m3fnuz (F143), 1 = float8_e5m2fnuz (F152)
    i8 scale   power-of-two tensor scale: value = code * 2**scale
    u8 pad
    u32 payload  encode: the f32 bit pattern; decode: the code in the low byte
OUT receives one little-endian u32 per record: encode -> the fp8 code, decode -> the f32 bits.

Encoding scales in float64 (exact) and lets ml_dtypes round float64 -> fp8 directly, so there is
no double rounding. ml_dtypes overflows to NaN (0x80): the test compares its NaN-on-overflow mode.
Exit status 3 means numpy or ml_dtypes is missing (run scripts/setup.sh).
"""
import sys

try:
    import numpy as np
    import ml_dtypes
except ImportError as error:  # the Rust test turns this into a failure that names setup.sh
    sys.stderr.write(f"fp8_oracle: {error}; run scripts/setup.sh to install numpy and ml_dtypes\n")
    sys.exit(3)

RECORD = np.dtype([("op", "u1"), ("format", "u1"), ("scale", "i1"), ("pad", "u1"), ("payload", "<u4")])
FORMATS = [ml_dtypes.float8_e4m3fnuz, ml_dtypes.float8_e5m2fnuz]


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: fp8_oracle.py IN OUT\n")
        return 2
    records = np.fromfile(argv[1], dtype=RECORD)
    out = np.zeros(len(records), dtype="<u4")
    if np.any(records["format"] > 1) or np.any(records["op"] > 1):
        sys.stderr.write("fp8_oracle: bad op or format in input\n")
        return 2
    scale = np.ldexp(1.0, records["scale"].astype(np.int64))  # 2**scale as float64, exact
    for index, dtype in enumerate(FORMATS):
        encode = (records["op"] == 0) & (records["format"] == index)
        values = records["payload"][encode].view(np.float32).astype(np.float64) / scale[encode]
        out[encode] = values.astype(dtype).view(np.uint8).astype("<u4")

        decode = (records["op"] == 1) & (records["format"] == index)
        codes = (records["payload"][decode] & 0xFF).astype(np.uint8)
        decoded = codes.view(dtype).astype(np.float64) * scale[decode]
        out[decode] = decoded.astype(np.float32).view("<u4")
    out.tofile(argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
