// The corpus's jax/attention_1head written by hand in the ipu dialect (same shapes: 16 tokens of 32, one
// head, q/k/v/out projections without bias, scale 1/sqrt(32)), for the
// imported-vs-hand-written comparison. Weights as constants (their values do not change the
// cycles).
func.func @main(%x: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %wq = arith.constant dense<0.125> : tensor<32x32xf32>
  %wk = arith.constant dense<0.0625> : tensor<32x32xf32>
  %wv = arith.constant dense<0.25> : tensor<32x32xf32>
  %wo = arith.constant dense<0.5> : tensor<32x32xf32>
  %q = "ipu.matmul"(%x, %wq) : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
  %k = "ipu.matmul"(%x, %wk) : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
  %v = "ipu.matmul"(%x, %wv) : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
  %o = "ipu.attention"(%q, %k, %v) : (tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
  %y = "ipu.matmul"(%o, %wo) : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}
