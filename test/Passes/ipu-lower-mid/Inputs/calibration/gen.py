#!/usr/bin/env python3
"""Writes the .npy sample files of the calibration tests (calibration*.mlir); run from any
directory: python3 gen.py. Deterministic (no random data), so the files are reproducible."""
import os

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))


def save(name, array):
    np.save(os.path.join(here, name), array)


# Activation samples, f32: max |x| = 5.0 (a negative element), so the FP8 scale is
# ceil(log2(5 / 240)) = -5.
x = np.linspace(-1.0, 1.0, 32, dtype=np.float32).reshape(4, 8)
x[2, 3] = -5.0
save("x-f32.npy", x)
# Weight samples, f16: max |x| = 1000 -> ceil(log2(1000 / 240)) = 3.
w = np.full((2, 8), 0.25, dtype=np.float16)
w[1, 7] = 1000.0
save("w-f16.npy", w)
# Bad inputs: f64 (not f16/f32), a non-finite sample, no samples.
save("bad-f64.npy", np.ones((2, 2), dtype=np.float64))
bad = np.ones(4, dtype=np.float32)
bad[2] = np.inf
save("bad-inf.npy", bad)
save("empty.npy", np.zeros((0,), dtype=np.float32))
