// An elementwise op of host inputs (test/Runtime/pointwise-plans.test).
func.func @gelu(%x: tensor<2x4096xf16>) -> tensor<2x4096xf16> {
  %0 = "ipu.gelu"(%x) {approximate = "erf"} : (tensor<2x4096xf16>) -> tensor<2x4096xf16>
  return %0 : tensor<2x4096xf16>
}
