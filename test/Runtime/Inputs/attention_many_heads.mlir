// Causal attention over 5 batch-heads of 24 queries and keys: on 4 tiles the lowering runs
// two whole heads per tile, one after the other (the last tile has one).
func.func @many(%q: tensor<5x24x32xf32>, %k: tensor<5x24x32xf32>, %v: tensor<5x24x32xf32>) -> tensor<5x24x32xf32> {
  %0 = "ipu.attention"(%q, %k, %v) {causal, scale = 0.125 : f32} : (tensor<5x24x32xf32>, tensor<5x24x32xf32>, tensor<5x24x32xf32>) -> tensor<5x24x32xf32>
  return %0 : tensor<5x24x32xf32>
}
