// Three products chained through GeLUs, the hardware-measured MLP's shape in small: 37 rows,
// 128 -> 64 -> 64 -> 64, each layer's result a GeLU reads (tanh form, as the MLP's).
func.func @chain(%x: tensor<37x128xf16>, %w0: tensor<128x64xf16> {ipu.parameter}, %w1: tensor<64x64xf16> {ipu.parameter}, %w2: tensor<64x64xf16> {ipu.parameter}) -> tensor<37x64xf16> {
  %h0 = "ipu.matmul"(%x, %w0) : (tensor<37x128xf16>, tensor<128x64xf16>) -> tensor<37x64xf16>
  %g0 = "ipu.gelu"(%h0) {approximate = "tanh"} : (tensor<37x64xf16>) -> tensor<37x64xf16>
  %h1 = "ipu.matmul"(%g0, %w1) : (tensor<37x64xf16>, tensor<64x64xf16>) -> tensor<37x64xf16>
  %g1 = "ipu.gelu"(%h1) {approximate = "tanh"} : (tensor<37x64xf16>) -> tensor<37x64xf16>
  %h2 = "ipu.matmul"(%g1, %w2) : (tensor<37x64xf16>, tensor<64x64xf16>) -> tensor<37x64xf16>
  %g2 = "ipu.gelu"(%h2) {approximate = "tanh"} : (tensor<37x64xf16>) -> tensor<37x64xf16>
  return %g2 : tensor<37x64xf16>
}
