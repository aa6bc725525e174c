func.func @main(%x: tensor<1x8x8x2xf32>, %k: tensor<2x2xf32>) -> tensor<1x4x4x2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  %r = linalg.pooling_nhwc_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %k : tensor<1x8x8x2xf32>, tensor<2x2xf32>) outs(%init : tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  return %r : tensor<1x4x4x2xf32>
}
