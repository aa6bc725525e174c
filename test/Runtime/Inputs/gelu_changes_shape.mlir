// A GeLU whose result has another shape: the ipu verifier rejects it (ipu-opt, ipu compile,
// ipu run alike).
func.func @f(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %0 = "ipu.gelu"(%x) : (tensor<4x8xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
