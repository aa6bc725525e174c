// Causal self-attention over 2 heads of 256 queries and keys (head size 64, f32) on 64 tiles:
// a tile's 8 query rows with all 256 keys and values do not fit its attention budget, so the
// keys stream through in blocks (112, 112, 32) with the online softmax.
func.func @long(%q: tensor<2x256x64xf32>, %k: tensor<2x256x64xf32>, %v: tensor<2x256x64xf32>) -> tensor<2x256x64xf32> {
  %0 = "ipu.attention"(%q, %k, %v) {causal} : (tensor<2x256x64xf32>, tensor<2x256x64xf32>, tensor<2x256x64xf32>) -> tensor<2x256x64xf32>
  return %0 : tensor<2x256x64xf32>
}
