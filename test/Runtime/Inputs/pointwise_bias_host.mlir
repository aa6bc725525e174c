// An elementwise op of host inputs (test/Runtime/pointwise-plans.test).
func.func @bias(%x: tensor<64x1024xf16>, %b: tensor<1024xf16>) -> tensor<64x1024xf16> {
  %0 = "ipu.add"(%b, %x) : (tensor<1024xf16>, tensor<64x1024xf16>) -> tensor<64x1024xf16>
  return %0 : tensor<64x1024xf16>
}
