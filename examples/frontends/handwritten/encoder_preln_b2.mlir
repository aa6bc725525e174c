// The corpus's jax/encoder_preln_b2 written by hand in the ipu dialect: the pre-LN encoder
// layer of encoder_preln_b1.mlir on a batch of 2, [2, 16, 32] (layer norms epsilon 1e-5, 2
// heads of 16 per sequence, q/k/v/out projections without bias, out bias bo, MLP of 128
// with exact GeLU). Projections and MLP on the [32, 32] tokens; attention on
// [batch, heads, 16, 16]. Weights as constants (their values do not change the cycles).
func.func @main(%x: tensor<2x16x32xf32>) -> tensor<2x16x32xf32> {
  %ln1_g = arith.constant dense<0.125> : tensor<32xf32>
  %ln1_b = arith.constant dense<0.0625> : tensor<32xf32>
  %wq = arith.constant dense<0.25> : tensor<32x32xf32>
  %wk = arith.constant dense<0.5> : tensor<32x32xf32>
  %wv = arith.constant dense<1.0> : tensor<32x32xf32>
  %wo = arith.constant dense<0.75> : tensor<32x32xf32>
  %bo = arith.constant dense<0.375> : tensor<32xf32>
  %ln2_g = arith.constant dense<0.03125> : tensor<32xf32>
  %ln2_b = arith.constant dense<0.125> : tensor<32xf32>
  %w1 = arith.constant dense<0.0625> : tensor<32x128xf32>
  %b1 = arith.constant dense<0.25> : tensor<128xf32>
  %w2 = arith.constant dense<0.5> : tensor<128x32xf32>
  %b2 = arith.constant dense<1.0> : tensor<32xf32>
  %xf = "ipu.reshape"(%x) : (tensor<2x16x32xf32>) -> tensor<32x32xf32>
  %ln1 = "ipu.layer_norm"(%xf, %ln1_g, %ln1_b) {epsilon = 1.0e-05 : f32} : (tensor<32x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<32x32xf32>
  %q = "ipu.matmul"(%ln1, %wq) : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %k = "ipu.matmul"(%ln1, %wk) : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %v = "ipu.matmul"(%ln1, %wv) : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %qs = "ipu.reshape"(%q) : (tensor<32x32xf32>) -> tensor<2x16x2x16xf32>
  %qh = "ipu.rearrange"(%qs) {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x16x2x16xf32>) -> tensor<2x2x16x16xf32>
  %ks = "ipu.reshape"(%k) : (tensor<32x32xf32>) -> tensor<2x16x2x16xf32>
  %kh = "ipu.rearrange"(%ks) {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x16x2x16xf32>) -> tensor<2x2x16x16xf32>
  %vs = "ipu.reshape"(%v) : (tensor<32x32xf32>) -> tensor<2x16x2x16xf32>
  %vh = "ipu.rearrange"(%vs) {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x16x2x16xf32>) -> tensor<2x2x16x16xf32>
  %att = "ipu.attention"(%qh, %kh, %vh) : (tensor<2x2x16x16xf32>, tensor<2x2x16x16xf32>, tensor<2x2x16x16xf32>) -> tensor<2x2x16x16xf32>
  %om = "ipu.rearrange"(%att) {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x2x16x16xf32>) -> tensor<2x16x2x16xf32>
  %merged = "ipu.reshape"(%om) : (tensor<2x16x2x16xf32>) -> tensor<32x32xf32>
  %proj = "ipu.matmul"(%merged, %wo) : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %projb = "ipu.add"(%proj, %bo) : (tensor<32x32xf32>, tensor<32xf32>) -> tensor<32x32xf32>
  %res1 = "ipu.add"(%xf, %projb) : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %ln2 = "ipu.layer_norm"(%res1, %ln2_g, %ln2_b) {epsilon = 1.0e-05 : f32} : (tensor<32x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<32x32xf32>
  %h = "ipu.matmul"(%ln2, %w1) : (tensor<32x32xf32>, tensor<32x128xf32>) -> tensor<32x128xf32>
  %hb = "ipu.add"(%h, %b1) : (tensor<32x128xf32>, tensor<128xf32>) -> tensor<32x128xf32>
  %g = "ipu.gelu"(%hb) : (tensor<32x128xf32>) -> tensor<32x128xf32>
  %m = "ipu.matmul"(%g, %w2) : (tensor<32x128xf32>, tensor<128x32xf32>) -> tensor<32x32xf32>
  %mb = "ipu.add"(%m, %b2) : (tensor<32x32xf32>, tensor<32xf32>) -> tensor<32x32xf32>
  %res2 = "ipu.add"(%res1, %mb) : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %y = "ipu.reshape"(%res2) : (tensor<32x32xf32>) -> tensor<2x16x32xf32>
  return %y : tensor<2x16x32xf32>
}
