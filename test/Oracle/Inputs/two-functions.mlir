func.func @double(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tosa.add %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
func.func @pair(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf64>) {
  %w = tosa.cast %x : (tensor<4xf32>) -> tensor<4xf64>
  return %x, %w : tensor<4xf32>, tensor<4xf64>
}
func.func private @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
