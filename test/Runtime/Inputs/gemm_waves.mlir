// A plain product of two host operands whose K (150) is neither a multiple of 16 nor of the
// panel, and whose rows (37) do not split evenly: the GEMM in waves' test model.
func.func @gemm(%a: tensor<37x150xf16>, %b: tensor<150x64xf16>) -> tensor<37x64xf16> {
  %0 = "ipu.matmul"(%a, %b) : (tensor<37x150xf16>, tensor<150x64xf16>) -> tensor<37x64xf16>
  return %0 : tensor<37x64xf16>
}
