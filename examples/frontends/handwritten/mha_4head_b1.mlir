// The corpus's jax/mha_4head written by hand in the ipu dialect, on its [1, 16, 64] input
// (16 tokens of 64, 4 heads of 16, q/k/v/out projections without bias, not causal). The
// unit batch axis is dropped for the projections ([16, 64] matmuls). Weights as constants
// (their values do not change the cycles).
func.func @main(%x: tensor<1x16x64xf32>) -> tensor<1x16x64xf32> {
  %wq = arith.constant dense<0.125> : tensor<64x64xf32>
  %wk = arith.constant dense<0.0625> : tensor<64x64xf32>
  %wv = arith.constant dense<0.25> : tensor<64x64xf32>
  %wo = arith.constant dense<0.5> : tensor<64x64xf32>
  %xf = "ipu.reshape"(%x) : (tensor<1x16x64xf32>) -> tensor<16x64xf32>
  %q = "ipu.matmul"(%xf, %wq) : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  %k = "ipu.matmul"(%xf, %wk) : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  %v = "ipu.matmul"(%xf, %wv) : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  %qs = "ipu.reshape"(%q) : (tensor<16x64xf32>) -> tensor<16x4x16xf32>
  %qh = "ipu.rearrange"(%qs) {permutation = array<i64: 1, 0, 2>} : (tensor<16x4x16xf32>) -> tensor<4x16x16xf32>
  %ks = "ipu.reshape"(%k) : (tensor<16x64xf32>) -> tensor<16x4x16xf32>
  %kh = "ipu.rearrange"(%ks) {permutation = array<i64: 1, 0, 2>} : (tensor<16x4x16xf32>) -> tensor<4x16x16xf32>
  %vs = "ipu.reshape"(%v) : (tensor<16x64xf32>) -> tensor<16x4x16xf32>
  %vh = "ipu.rearrange"(%vs) {permutation = array<i64: 1, 0, 2>} : (tensor<16x4x16xf32>) -> tensor<4x16x16xf32>
  %att = "ipu.attention"(%qh, %kh, %vh) : (tensor<4x16x16xf32>, tensor<4x16x16xf32>, tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %om = "ipu.rearrange"(%att) {permutation = array<i64: 1, 0, 2>} : (tensor<4x16x16xf32>) -> tensor<16x4x16xf32>
  %merged = "ipu.reshape"(%om) : (tensor<16x4x16xf32>) -> tensor<16x64xf32>
  %proj = "ipu.matmul"(%merged, %wo) : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  %y = "ipu.reshape"(%proj) : (tensor<16x64xf32>) -> tensor<1x16x64xf32>
  return %y : tensor<1x16x64xf32>
}
