// A model whose first argument is f32 and whose product is F16 and only returned: under the
// native policy the product runs in F16, its operands' own type.
func.func @mixed(%s: tensor<16x64xf32>, %a: tensor<64x128xf16>, %b: tensor<128x64xf16>) -> (tensor<16x64xf32>, tensor<64x64xf16>) {
  %0 = "ipu.gelu"(%s) : (tensor<16x64xf32>) -> tensor<16x64xf32>
  %1 = "ipu.matmul"(%a, %b) : (tensor<64x128xf16>, tensor<128x64xf16>) -> tensor<64x64xf16>
  return %0, %1 : tensor<16x64xf32>, tensor<64x64xf16>
}
