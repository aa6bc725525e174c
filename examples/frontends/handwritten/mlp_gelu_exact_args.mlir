// The corpus's jax/mlp_gelu_exact_args written by hand in the ipu dialect (same shapes: 16
// tokens of 32, dense 32->128 with bias, exact (erf) GeLU, dense 128->32 with bias), the weights
// function arguments in the export's order (x, w1, b1, w2, b2).
func.func @main(%x: tensor<16x32xf32>, %w1: tensor<32x128xf32>, %b1: tensor<128xf32>, %w2: tensor<128x32xf32>, %b2: tensor<32xf32>) -> tensor<16x32xf32> {
  %h = "ipu.matmul"(%x, %w1) : (tensor<16x32xf32>, tensor<32x128xf32>) -> tensor<16x128xf32>
  %hb = "ipu.add"(%h, %b1) : (tensor<16x128xf32>, tensor<128xf32>) -> tensor<16x128xf32>
  %g = "ipu.gelu"(%hb) : (tensor<16x128xf32>) -> tensor<16x128xf32>
  %y = "ipu.matmul"(%g, %w2) : (tensor<16x128xf32>, tensor<128x32xf32>) -> tensor<16x32xf32>
  %yb = "ipu.add"(%y, %b2) : (tensor<16x32xf32>, tensor<32xf32>) -> tensor<16x32xf32>
  return %yb : tensor<16x32xf32>
}
