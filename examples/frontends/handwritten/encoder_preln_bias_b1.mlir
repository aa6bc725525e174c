// The corpus's torch/encoder_preln (nn.TransformerEncoderLayer(32, 2, 128, dropout=0,
// activation='gelu', batch_first=True, norm_first=True)) written by hand in the ipu dialect
// on its [1, 16, 32] input: x + SA(LN1(x)), then + FF(LN2(.)); layer norms epsilon 1e-5;
// 2 heads of 16, q/k/v/out projections with bias; FF 32->128 with bias, exact (erf) GeLU,
// 128->32 with bias. The unit batch axis is dropped ([16, 32] tokens). Weights as constants
// (their values do not change the cycles).
func.func @main(%x: tensor<1x16x32xf32>) -> tensor<1x16x32xf32> {
  %ln1_g = arith.constant dense<0.125> : tensor<32xf32>
  %ln1_b = arith.constant dense<0.0625> : tensor<32xf32>
  %wq = arith.constant dense<0.25> : tensor<32x32xf32>
  %wk = arith.constant dense<0.5> : tensor<32x32xf32>
  %wv = arith.constant dense<1.0> : tensor<32x32xf32>
  %bq = arith.constant dense<0.75> : tensor<32xf32>
  %bk = arith.constant dense<0.375> : tensor<32xf32>
  %bv = arith.constant dense<0.03125> : tensor<32xf32>
  %wo = arith.constant dense<0.125> : tensor<32x32xf32>
  %bo = arith.constant dense<0.0625> : tensor<32xf32>
  %ln2_g = arith.constant dense<0.25> : tensor<32xf32>
  %ln2_b = arith.constant dense<0.5> : tensor<32xf32>
  %w1 = arith.constant dense<1.0> : tensor<32x128xf32>
  %b1 = arith.constant dense<0.75> : tensor<128xf32>
  %w2 = arith.constant dense<0.375> : tensor<128x32xf32>
  %b2 = arith.constant dense<0.03125> : tensor<32xf32>
  %xf = "ipu.reshape"(%x) : (tensor<1x16x32xf32>) -> tensor<16x32xf32>
  %ln1 = "ipu.layer_norm"(%xf, %ln1_g, %ln1_b) {epsilon = 1.0e-05 : f32} : (tensor<16x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<16x32xf32>
  %q = "ipu.matmul"(%ln1, %wq) : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
  %qb = "ipu.add"(%q, %bq) : (tensor<16x32xf32>, tensor<32xf32>) -> tensor<16x32xf32>
  %k = "ipu.matmul"(%ln1, %wk) : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
  %kb = "ipu.add"(%k, %bk) : (tensor<16x32xf32>, tensor<32xf32>) -> tensor<16x32xf32>
  %v = "ipu.matmul"(%ln1, %wv) : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
  %vb = "ipu.add"(%v, %bv) : (tensor<16x32xf32>, tensor<32xf32>) -> tensor<16x32xf32>
  %qs = "ipu.reshape"(%qb) : (tensor<16x32xf32>) -> tensor<16x2x16xf32>
  %qh = "ipu.rearrange"(%qs) {permutation = array<i64: 1, 0, 2>} : (tensor<16x2x16xf32>) -> tensor<2x16x16xf32>
  %ks = "ipu.reshape"(%kb) : (tensor<16x32xf32>) -> tensor<16x2x16xf32>
  %kh = "ipu.rearrange"(%ks) {permutation = array<i64: 1, 0, 2>} : (tensor<16x2x16xf32>) -> tensor<2x16x16xf32>
  %vs = "ipu.reshape"(%vb) : (tensor<16x32xf32>) -> tensor<16x2x16xf32>
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
