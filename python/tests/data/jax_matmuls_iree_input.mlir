// jax.jit(lambda x, w1, w2: (x @ w1) @ w2).lower(...).as_text() (jax 0.10.2) lowered by
// iree-compile --iree-input-type=stablehlo --compile-to=input (iree-base-compiler 3.13.0), stored as it printed.
module @jit_mlp {
  util.func public @main(%arg0: tensor<4x8xf32>, %arg1: tensor<8x16xf32>, %arg2: tensor<16x8xf32>) -> tensor<4x8xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<4x16xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4x16xf32>) -> tensor<4x16xf32>
    %2 = linalg.matmul ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<8x16xf32>) outs(%1 : tensor<4x16xf32>) -> tensor<4x16xf32>
    %3 = tensor.empty() : tensor<4x8xf32>
    %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<4x8xf32>) -> tensor<4x8xf32>
    %5 = linalg.matmul ins(%2, %arg2 : tensor<4x16xf32>, tensor<16x8xf32>) outs(%4 : tensor<4x8xf32>) -> tensor<4x8xf32>
    util.return %5 : tensor<4x8xf32>
  }
}