func.func @main(%x: tensor<1x4x16xf32>) -> tensor<1x4x16xf32> {
  %r = tosa.sin %x : (tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  return %r : tensor<1x4x16xf32>
}
