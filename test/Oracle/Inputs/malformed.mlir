// Line 3 does not parse.
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tosa.bogus %x : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
