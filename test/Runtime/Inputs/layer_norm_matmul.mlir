// A layer norm feeding a product (test/Runtime/split-gemm-row-a.test): the product's left
// operand is another op's row-major result, gathered into the split GEMM's panels.
func.func @ln_matmul(%x: tensor<40x96xf16>, %s: tensor<96xf16>, %t: tensor<96xf16>, %w: tensor<96x64xf16>) -> tensor<40x64xf16> {
  %0 = "ipu.layer_norm"(%x, %s, %t) {epsilon = 1.0e-05 : f32} : (tensor<40x96xf16>, tensor<96xf16>, tensor<96xf16>) -> tensor<40x96xf16>
  %1 = "ipu.matmul"(%0, %w) : (tensor<40x96xf16>, tensor<96x64xf16>) -> tensor<40x64xf16>
  return %1 : tensor<40x64xf16>
}
