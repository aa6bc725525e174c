// Multi-head attention written with ipu.reshape: [64, 128] inputs split into 4 heads of 32
// (reshape, then the heads moved to the front), attention per head, and the heads merged
// back (the inverse permutation, then reshape).
func.func @heads(%x: tensor<64x128xf16>, %k: tensor<64x128xf16>, %v: tensor<64x128xf16>) -> tensor<64x128xf16> {
  %q = "ipu.reshape"(%x) : (tensor<64x128xf16>) -> tensor<64x4x32xf16>
  %qt = "ipu.rearrange"(%q) {permutation = array<i64: 1, 0, 2>} : (tensor<64x4x32xf16>) -> tensor<4x64x32xf16>
  %kh = "ipu.reshape"(%k) : (tensor<64x128xf16>) -> tensor<64x4x32xf16>
  %kt = "ipu.rearrange"(%kh) {permutation = array<i64: 1, 0, 2>} : (tensor<64x4x32xf16>) -> tensor<4x64x32xf16>
  %vh = "ipu.reshape"(%v) : (tensor<64x128xf16>) -> tensor<64x4x32xf16>
  %vt = "ipu.rearrange"(%vh) {permutation = array<i64: 1, 0, 2>} : (tensor<64x4x32xf16>) -> tensor<4x64x32xf16>
  %a = "ipu.attention"(%qt, %kt, %vt) : (tensor<4x64x32xf16>, tensor<4x64x32xf16>, tensor<4x64x32xf16>) -> tensor<4x64x32xf16>
  %at = "ipu.rearrange"(%a) {permutation = array<i64: 1, 0, 2>} : (tensor<4x64x32xf16>) -> tensor<64x4x32xf16>
  %o = "ipu.reshape"(%at) : (tensor<64x4x32xf16>) -> tensor<64x128xf16>
  return %o : tensor<64x128xf16>
}
