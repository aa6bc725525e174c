// The seed's FP8 GEMM (examples/gemm_fp8.mlir: 250 rows, N = 512, F16 from the host) with
// K = 200 instead of 256. K = 200 is not a multiple of 16, so the planner never plans it as a
// split GEMM (whole 16-groups of K and N only), even under precision=fp8 with both operands
// from the host: its plans are output-stationary ones, and it keeps the output-stationary
// lowering, with the FP8 casts and AMP packs on the device, K padded with zeros to 208 and
// 250 rows in row blocks of 63, the last padded from 61. Tests use it to keep that path
// covered end to end.
func.func @gemm(%x: tensor<250x200xf16>, %w: tensor<200x512xf16>) -> tensor<250x512xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<250x200xf16>, tensor<200x512xf16>) -> tensor<250x512xf16>
  return %y : tensor<250x512xf16>
}
