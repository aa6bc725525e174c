// An F16 GEMM whose operands both come from the host in the AMP input precision and whose
// result is only returned: the split GEMM lowering (strided host pieces straight into AMP
// order, K panels, reduce-scatter of the partials when K is split).
func.func @gemm(%x: tensor<200x512xf16>, %w: tensor<512x192xf16>) -> tensor<200x192xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<200x512xf16>, tensor<512x192xf16>) -> tensor<200x192xf16>
  return %y : tensor<200x192xf16>
}
