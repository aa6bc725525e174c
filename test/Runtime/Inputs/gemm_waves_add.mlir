// A product whose result another op reads: the GEMM in waves leaves its result where only the
// host reads it, so a pinned waves plan is refused here.
func.func @gemm(%a: tensor<37x150xf16>, %b: tensor<150x64xf16>, %c: tensor<37x64xf16>) -> tensor<37x64xf16> {
  %0 = "ipu.matmul"(%a, %b) : (tensor<37x150xf16>, tensor<150x64xf16>) -> tensor<37x64xf16>
  %1 = "ipu.add"(%0, %c) : (tensor<37x64xf16>, tensor<37x64xf16>) -> tensor<37x64xf16>
  return %1 : tensor<37x64xf16>
}
