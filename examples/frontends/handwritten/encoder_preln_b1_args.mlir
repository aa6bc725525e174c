// The corpus's jax/encoder_preln_b1_args written by hand in the ipu dialect: the pre-LN
// encoder layer of encoder_preln_b1.mlir (on [1, 16, 32], 2 heads, exact GeLU MLP of 128,
// layer-norm epsilon 1e-5) with every weight a function argument, in the export's order:
// x, ln1 gain, ln1 shift, wq, wk, wv, wo, bo, ln2 gain, ln2 shift, w1, b1, w2, b2.
func.func @main(%x: tensor<1x16x32xf32>, %ln1_g: tensor<32xf32>, %ln1_b: tensor<32xf32>, %wq: tensor<32x32xf32>, %wk: tensor<32x32xf32>, %wv: tensor<32x32xf32>, %wo: tensor<32x32xf32>, %bo: tensor<32xf32>, %ln2_g: tensor<32xf32>, %ln2_b: tensor<32xf32>, %w1: tensor<32x128xf32>, %b1: tensor<128xf32>, %w2: tensor<128x32xf32>, %b2: tensor<32xf32>) -> tensor<1x16x32xf32> {
  %xf = "ipu.reshape"(%x) : (tensor<1x16x32xf32>) -> tensor<16x32xf32>
  %ln1 = "ipu.layer_norm"(%xf, %ln1_g, %ln1_b) {epsilon = 1.0e-05 : f32} : (tensor<16x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<16x32xf32>
  %q = "ipu.matmul"(%ln1, %wq) : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
  %k = "ipu.matmul"(%ln1, %wk) : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
  %v = "ipu.matmul"(%ln1, %wv) : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
  %qs = "ipu.reshape"(%q) : (tensor<16x32xf32>) -> tensor<16x2x16xf32>
  %qh = "ipu.rearrange"(%qs) {permutation = array<i64: 1, 0, 2>} : (tensor<16x2x16xf32>) -> tensor<2x16x16xf32>
  %ks = "ipu.reshape"(%k) : (tensor<16x32xf32>) -> tensor<16x2x16xf32>
  %kh = "ipu.rearrange"(%ks) {permutation = array<i64: 1, 0, 2>} : (tensor<16x2x16xf32>) -> tensor<2x16x16xf32>
  %vs = "ipu.reshape"(%v) : (tensor<16x32xf32>) -> tensor<16x2x16xf32>
  %vh = "ipu.rearrange"(%vs) {permutation = array<i64: 1, 0, 2>} : (tensor<16x2x16xf32>) -> tensor<2x16x16xf32>
  %att = "ipu.attention"(%qh, %kh, %vh) : (tensor<2x16x16xf32>, tensor<2x16x16xf32>, tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
  %om = "ipu.rearrange"(%att) {permutation = array<i64: 1, 0, 2>} : (tensor<2x16x16xf32>) -> tensor<16x2x16xf32>
  %merged = "ipu.reshape"(%om) : (tensor<16x2x16xf32>) -> tensor<16x32xf32>
  %proj = "ipu.matmul"(%merged, %wo) : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
  %projb = "ipu.add"(%proj, %bo) : (tensor<16x32xf32>, tensor<32xf32>) -> tensor<16x32xf32>
  %res1 = "ipu.add"(%xf, %projb) : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
  %ln2 = "ipu.layer_norm"(%res1, %ln2_g, %ln2_b) {epsilon = 1.0e-05 : f32} : (tensor<16x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<16x32xf32>
  %h = "ipu.matmul"(%ln2, %w1) : (tensor<16x32xf32>, tensor<32x128xf32>) -> tensor<16x128xf32>
  %hb = "ipu.add"(%h, %b1) : (tensor<16x128xf32>, tensor<128xf32>) -> tensor<16x128xf32>
  %g = "ipu.gelu"(%hb) : (tensor<16x128xf32>) -> tensor<16x128xf32>
  %m = "ipu.matmul"(%g, %w2) : (tensor<16x128xf32>, tensor<128x32xf32>) -> tensor<16x32xf32>
  %mb = "ipu.add"(%m, %b2) : (tensor<16x32xf32>, tensor<32xf32>) -> tensor<16x32xf32>
  %res2 = "ipu.add"(%res1, %mb) : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
  %y = "ipu.reshape"(%res2) : (tensor<16x32xf32>) -> tensor<1x16x32xf32>
  return %y : tensor<1x16x32xf32>
}
