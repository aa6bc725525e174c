// The corpus's tf/mha_4head (Keras MultiHeadAttention) and torch/mha_4head
// (nn.MultiheadAttention) written by hand in the ipu dialect: self-attention on [1, 16, 64],
// 4 heads of 16, q/k/v/out projections with bias, scale 1/sqrt(16), not causal. The unit
// batch axis is dropped for the projections ([16, 64] matmuls). Weights as constants (their
// values do not change the cycles).
func.func @main(%x: tensor<1x16x64xf32>) -> tensor<1x16x64xf32> {
  %wq = arith.constant dense<0.125> : tensor<64x64xf32>
  %wk = arith.constant dense<0.0625> : tensor<64x64xf32>
  %wv = arith.constant dense<0.25> : tensor<64x64xf32>
  %bq = arith.constant dense<0.5> : tensor<64xf32>
  %bk = arith.constant dense<1.0> : tensor<64xf32>
  %bv = arith.constant dense<0.75> : tensor<64xf32>
  %wo = arith.constant dense<0.375> : tensor<64x64xf32>
  %bo = arith.constant dense<0.03125> : tensor<64xf32>
  %xf = "ipu.reshape"(%x) : (tensor<1x16x64xf32>) -> tensor<16x64xf32>
  %q = "ipu.matmul"(%xf, %wq) : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  %qb = "ipu.add"(%q, %bq) : (tensor<16x64xf32>, tensor<64xf32>) -> tensor<16x64xf32>
  %k = "ipu.matmul"(%xf, %wk) : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  %kb = "ipu.add"(%k, %bk) : (tensor<16x64xf32>, tensor<64xf32>) -> tensor<16x64xf32>
  %v = "ipu.matmul"(%xf, %wv) : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  %vb = "ipu.add"(%v, %bv) : (tensor<16x64xf32>, tensor<64xf32>) -> tensor<16x64xf32>
  %qs = "ipu.reshape"(%qb) : (tensor<16x64xf32>) -> tensor<16x4x16xf32>
  %qh = "ipu.rearrange"(%qs) {permutation = array<i64: 1, 0, 2>} : (tensor<16x4x16xf32>) -> tensor<4x16x16xf32>
  %ks = "ipu.reshape"(%kb) : (tensor<16x64xf32>) -> tensor<16x4x16xf32>
  %kh = "ipu.rearrange"(%ks) {permutation = array<i64: 1, 0, 2>} : (tensor<16x4x16xf32>) -> tensor<4x16x16xf32>
  %vs = "ipu.reshape"(%vb) : (tensor<16x64xf32>) -> tensor<16x4x16xf32>
  %vh = "ipu.rearrange"(%vs) {permutation = array<i64: 1, 0, 2>} : (tensor<16x4x16xf32>) -> tensor<4x16x16xf32>
  %att = "ipu.attention"(%qh, %kh, %vh) : (tensor<4x16x16xf32>, tensor<4x16x16xf32>, tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %om = "ipu.rearrange"(%att) {permutation = array<i64: 1, 0, 2>} : (tensor<4x16x16xf32>) -> tensor<16x4x16xf32>
  %merged = "ipu.reshape"(%om) : (tensor<16x4x16xf32>) -> tensor<16x64xf32>
  %proj = "ipu.matmul"(%merged, %wo) : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  %projb = "ipu.add"(%proj, %bo) : (tensor<16x64xf32>, tensor<64xf32>) -> tensor<16x64xf32>
  %y = "ipu.reshape"(%projb) : (tensor<16x64xf32>) -> tensor<1x16x64xf32>
  return %y : tensor<1x16x64xf32>
}
