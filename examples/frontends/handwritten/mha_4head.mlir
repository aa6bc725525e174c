// The corpus's jax/mha_4head written by hand in the ipu dialect (same shapes: 16 tokens of
// 64, 4 heads of 16, q/k/v/out projections without bias), for the imported-vs-hand-written
// comparison in BENCHMARKS.md. Weights as constants (their values do not change the cycles).
func.func @main(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %wq = arith.constant dense<0.125> : tensor<64x64xf32>
  %wk = arith.constant dense<0.0625> : tensor<64x64xf32>
  %wv = arith.constant dense<0.25> : tensor<64x64xf32>
  %wo = arith.constant dense<0.5> : tensor<64x64xf32>
  %q = "ipu.matmul"(%x, %wq) : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  %k = "ipu.matmul"(%x, %wk) : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  %v = "ipu.matmul"(%x, %wv) : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  %qs = "ipu.reshape"(%q) : (tensor<16x64xf32>) -> tensor<16x4x16xf32>
  %ks = "ipu.reshape"(%k) : (tensor<16x64xf32>) -> tensor<16x4x16xf32>
  %vs = "ipu.reshape"(%v) : (tensor<16x64xf32>) -> tensor<16x4x16xf32>
  %qh = "ipu.rearrange"(%qs) {permutation = array<i64: 1, 0, 2>} : (tensor<16x4x16xf32>) -> tensor<4x16x16xf32>
  %kh = "ipu.rearrange"(%ks) {permutation = array<i64: 1, 0, 2>} : (tensor<16x4x16xf32>) -> tensor<4x16x16xf32>
  %vh = "ipu.rearrange"(%vs) {permutation = array<i64: 1, 0, 2>} : (tensor<16x4x16xf32>) -> tensor<4x16x16xf32>
  %o = "ipu.attention"(%qh, %kh, %vh) : (tensor<4x16x16xf32>, tensor<4x16x16xf32>, tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %om = "ipu.rearrange"(%o) {permutation = array<i64: 1, 0, 2>} : (tensor<4x16x16xf32>) -> tensor<16x4x16xf32>
  %merged = "ipu.reshape"(%om) : (tensor<16x4x16xf32>) -> tensor<16x64xf32>
  %y = "ipu.matmul"(%merged, %wo) : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  return %y : tensor<16x64xf32>
}
