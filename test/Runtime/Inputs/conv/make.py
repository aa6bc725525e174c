"""Inputs and NumPy's float64 convolutions (rounded to float32) for conv-import.test."""
import sys
import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(7)


def conv_nhwc(x, w, stride, dilation):
    n, h, wd, c = x.shape
    kh, kw, _, f = w.shape
    oh = (h - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    y = np.zeros((n, oh, ow, f))
    for i in range(kh):
        for j in range(kw):
            window = x[:, i * dilation[0]:, j * dilation[1]:, :][:, ::stride[0], ::stride[1], :][:, :oh, :ow, :]
            y += window @ w[i, j]
    return y


def save(name, arrays):
    import os
    for kind, values in arrays.items():
        os.makedirs(f"{out}/{name}/{kind}", exist_ok=True)
        for binding, value in values.items():
            np.save(f"{out}/{name}/{kind}/{binding}.npy", value.astype(np.float32))


x = rng.standard_normal((1, 3, 9, 9)).astype(np.float32)
w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
b = rng.standard_normal(4).astype(np.float32)
y = conv_nhwc(x.transpose(0, 2, 3, 1).astype(np.float64), w.transpose(2, 3, 1, 0).astype(np.float64), (2, 2), (1, 1))
y = y.transpose(0, 3, 1, 2) + b[None, :, None, None]
save("nchw", {"inputs": {"arg0": x, "arg1": w, "arg2": b}, "expected": {"result0": y}})

x = rng.standard_normal((2, 7, 6, 5)).astype(np.float32)
w = rng.standard_normal((2, 3, 5, 8)).astype(np.float32)
y = conv_nhwc(x.astype(np.float64), w.astype(np.float64), (1, 1), (2, 1))
save("nhwc", {"inputs": {"arg0": x, "arg1": w}, "expected": {"result0": y}})

# A patch embedding in PyTorch's layout with the filter and bias as inline constants (permuted
# at import): 2x2 patches of an 8x8 image, stride 2.
x = rng.standard_normal((1, 3, 8, 8)).astype(np.float32)
w = rng.standard_normal((5, 3, 2, 2)).astype(np.float32)
b = rng.standard_normal(5).astype(np.float32)
y = conv_nhwc(x.transpose(0, 2, 3, 1).astype(np.float64), w.transpose(2, 3, 1, 0).astype(np.float64), (2, 2), (1, 1))
y = y.transpose(0, 3, 1, 2) + b[None, :, None, None]
save("patches", {"inputs": {"arg0": x}, "expected": {"result0": y}})


def literal(array):
    return "[" + ", ".join(literal(a) for a in array) + "]" if array.ndim else repr(float(array))


with open(f"{out}/patches/model.mlir", "w") as model:
    model.write(f"""func.func @main(%x: tensor<1x3x8x8xf32>) -> tensor<1x5x4x4xf32> {{
  %w = arith.constant dense<{literal(w)}> : tensor<5x3x2x2xf32>
  %b = arith.constant dense<{literal(b)}> : tensor<5xf32>
  %0 = tensor.empty() : tensor<1x5x4x4xf32>
  %1 = linalg.broadcast ins(%b : tensor<5xf32>) outs(%0 : tensor<1x5x4x4xf32>) dimensions = [0, 2, 3]
  %2 = linalg.conv_2d_nchw_fchw {{dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}} ins(%x, %w : tensor<1x3x8x8xf32>, tensor<5x3x2x2xf32>) outs(%1 : tensor<1x5x4x4xf32>) -> tensor<1x5x4x4xf32>
  return %2 : tensor<1x5x4x4xf32>
}}
""")
