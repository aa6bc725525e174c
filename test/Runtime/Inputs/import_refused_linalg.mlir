func.func @main(%x: tensor<4x16xf32>, %v: tensor<16xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.matvec ins(%x, %v : tensor<4x16xf32>, tensor<16xf32>) outs(%init : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
