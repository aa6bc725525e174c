// Causal attention for the rows formulation, f32: 3 batch-heads of 70 queries and keys (head
// size 20, values 24 wide).
func.func @attention_rows_causal(%q: tensor<3x70x20xf32>, %k: tensor<3x70x20xf32>, %v: tensor<3x70x24xf32>) -> tensor<3x70x24xf32> {
  %0 = "ipu.attention"(%q, %k, %v) {causal} : (tensor<3x70x20xf32>, tensor<3x70x20xf32>, tensor<3x70x24xf32>) -> tensor<3x70x24xf32>
  return %0 : tensor<3x70x24xf32>
}
