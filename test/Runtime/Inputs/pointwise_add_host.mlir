// An elementwise op of host inputs (test/Runtime/pointwise-plans.test).
func.func @add(%x: tensor<64x1024xf16>, %y: tensor<64x1024xf16>) -> tensor<64x1024xf16> {
  %0 = "ipu.add"(%x, %y) : (tensor<64x1024xf16>, tensor<64x1024xf16>) -> tensor<64x1024xf16>
  return %0 : tensor<64x1024xf16>
}
