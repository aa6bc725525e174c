// The corpus's tf/layer_norm (Keras LayerNormalization(epsilon=1e-5)) and torch/layer_norm
// (nn.LayerNorm(32)) written by hand in the ipu dialect: layer norm over the last axis of
// [1, 16, 32] with gain and shift, epsilon 1e-5. Weights as constants (their values do not
// change the cycles).
func.func @main(%x: tensor<1x16x32xf32>) -> tensor<1x16x32xf32> {
  %gamma = arith.constant dense<0.125> : tensor<32xf32>
  %beta = arith.constant dense<0.0625> : tensor<32xf32>
  %y = "ipu.layer_norm"(%x, %gamma, %beta) {epsilon = 1.0e-05 : f32} : (tensor<1x16x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x16x32xf32>
  return %y : tensor<1x16x32xf32>
}
