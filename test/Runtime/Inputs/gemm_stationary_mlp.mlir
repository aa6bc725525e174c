// The hardware-measured SigLIP MLP's form in small: an up-projection in waves (left operand
// replicated by the host) kept on its tiles, a GeLU in place, and a down-projection with the
// activations stationary and K split over three tiles per row block.
func.func @mlp(%x: tensor<70x64xf16>, %w1: tensor<64x192xf16> {ipu.parameter}, %w2: tensor<192x48xf16> {ipu.parameter}) -> tensor<70x48xf16> {
  %h = "ipu.matmul"(%x, %w1) : (tensor<70x64xf16>, tensor<64x192xf16>) -> tensor<70x192xf16>
  %g = "ipu.gelu"(%h) {approximate = "tanh"} : (tensor<70x192xf16>) -> tensor<70x192xf16>
  %y = "ipu.matmul"(%g, %w2) : (tensor<70x192xf16>, tensor<192x48xf16>) -> tensor<70x48xf16>
  return %y : tensor<70x48xf16>
}
