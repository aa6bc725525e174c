func.func @main(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %y = "ipu.gelu"(%x : tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
