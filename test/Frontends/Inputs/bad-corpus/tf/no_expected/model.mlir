func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  func.return %arg0 : tensor<2xf32>
}
