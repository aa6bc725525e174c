// A 2x3 convolution with dilations 2 x 1 and stride 1, NHWC / HWCF (JAX's layout), batch 2,
// filter as an argument, zero init.
func.func @main(%x: tensor<2x7x6x5xf32>, %w: tensor<2x3x5x8xf32>) -> tensor<2x5x4x8xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<2x5x4x8xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x5x4x8xf32>) -> tensor<2x5x4x8xf32>
  %2 = linalg.conv_2d_nhwc_hwcf {dilations = dense<[2, 1]> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<2x7x6x5xf32>, tensor<2x3x5x8xf32>) outs(%1 : tensor<2x5x4x8xf32>) -> tensor<2x5x4x8xf32>
  return %2 : tensor<2x5x4x8xf32>
}
