// Attention in the rows formulation's test shapes: 2 x 2 batch-heads of 37 queries (head size
// 20), 70 keys and values 24 wide, f16; neither a whole number of 16-element groups.
func.func @attention_rows(%q: tensor<2x2x37x20xf16>, %k: tensor<2x2x70x20xf16>, %v: tensor<2x2x70x24xf16>) -> tensor<2x2x37x24xf16> {
  %0 = "ipu.attention"(%q, %k, %v) : (tensor<2x2x37x20xf16>, tensor<2x2x70x20xf16>, tensor<2x2x70x24xf16>) -> tensor<2x2x37x24xf16>
  return %0 : tensor<2x2x37x24xf16>
}
