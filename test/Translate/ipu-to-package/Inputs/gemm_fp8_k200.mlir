// The seed's FP8 GEMM (examples/gemm_fp8.mlir: 250 rows, N = 512, F16 from the host) with
// K = 200 instead of 256. K = 200 is not a multiple of 16: the split GEMM takes it with K
// padded on the host (each operand run of A's last 16-group ends in 8 zero bytes, B's K rows
// 200..207 are zeros), so nothing is cast, packed or zeroed on the device. Tests use it to
// cover the host's padding end to end.
func.func @gemm(%x: tensor<250x200xf16>, %w: tensor<200x512xf16>) -> tensor<250x512xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<250x200xf16>, tensor<200x512xf16>) -> tensor<250x512xf16>
  return %y : tensor<250x512xf16>
}
