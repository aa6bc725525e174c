// F16 MLP of 8 layers of 512 x 2048 -> 2048, each followed by a GeLU, on 1472 tiles, as the
// anchor measured it on a C600 (ANCHOR-PLANS.md section 2); replayed by `ipu run
// mlp_8x2048_f16.mlir --plan mlp_8x2048_f16.plan.json`. The weights are parameters (written at
// initialize, as the anchor's host wrote its homes outside the measured interval), generated at
// the weights' deviation so that eight layers stay in F16's range.
func.func @mlp(%x: tensor<512x2048xf16>, %w0: tensor<2048x2048xf16> {ipu.parameter}, %w1: tensor<2048x2048xf16> {ipu.parameter}, %w2: tensor<2048x2048xf16> {ipu.parameter}, %w3: tensor<2048x2048xf16> {ipu.parameter}, %w4: tensor<2048x2048xf16> {ipu.parameter}, %w5: tensor<2048x2048xf16> {ipu.parameter}, %w6: tensor<2048x2048xf16> {ipu.parameter}, %w7: tensor<2048x2048xf16> {ipu.parameter}) -> tensor<512x2048xf16> {
  %h0 = "ipu.matmul"(%x, %w0) : (tensor<512x2048xf16>, tensor<2048x2048xf16>) -> tensor<512x2048xf16>
  %g0 = "ipu.gelu"(%h0) {approximate = "tanh"} : (tensor<512x2048xf16>) -> tensor<512x2048xf16>
  %h1 = "ipu.matmul"(%g0, %w1) : (tensor<512x2048xf16>, tensor<2048x2048xf16>) -> tensor<512x2048xf16>
  %g1 = "ipu.gelu"(%h1) {approximate = "tanh"} : (tensor<512x2048xf16>) -> tensor<512x2048xf16>
  %h2 = "ipu.matmul"(%g1, %w2) : (tensor<512x2048xf16>, tensor<2048x2048xf16>) -> tensor<512x2048xf16>
  %g2 = "ipu.gelu"(%h2) {approximate = "tanh"} : (tensor<512x2048xf16>) -> tensor<512x2048xf16>
  %h3 = "ipu.matmul"(%g2, %w3) : (tensor<512x2048xf16>, tensor<2048x2048xf16>) -> tensor<512x2048xf16>
  %g3 = "ipu.gelu"(%h3) {approximate = "tanh"} : (tensor<512x2048xf16>) -> tensor<512x2048xf16>
  %h4 = "ipu.matmul"(%g3, %w4) : (tensor<512x2048xf16>, tensor<2048x2048xf16>) -> tensor<512x2048xf16>
  %g4 = "ipu.gelu"(%h4) {approximate = "tanh"} : (tensor<512x2048xf16>) -> tensor<512x2048xf16>
  %h5 = "ipu.matmul"(%g4, %w5) : (tensor<512x2048xf16>, tensor<2048x2048xf16>) -> tensor<512x2048xf16>
  %g5 = "ipu.gelu"(%h5) {approximate = "tanh"} : (tensor<512x2048xf16>) -> tensor<512x2048xf16>
  %h6 = "ipu.matmul"(%g5, %w6) : (tensor<512x2048xf16>, tensor<2048x2048xf16>) -> tensor<512x2048xf16>
  %g6 = "ipu.gelu"(%h6) {approximate = "tanh"} : (tensor<512x2048xf16>) -> tensor<512x2048xf16>
  %h7 = "ipu.matmul"(%g6, %w7) : (tensor<512x2048xf16>, tensor<2048x2048xf16>) -> tensor<512x2048xf16>
  %g7 = "ipu.gelu"(%h7) {approximate = "tanh"} : (tensor<512x2048xf16>) -> tensor<512x2048xf16>
  return %g7 : tensor<512x2048xf16>
}
