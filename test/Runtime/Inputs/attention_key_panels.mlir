// Two heads of 150 queries and keys, head size 40 (F16): on 15 tiles per head each tile
// holds 10 keys, not whole 16-key panels, and the last panel has 6.
func.func @attention(%q: tensor<2x150x40xf16>, %k: tensor<2x150x40xf16>, %v: tensor<2x150x40xf16>) -> tensor<2x150x40xf16> {
  %0 = "ipu.attention"(%q, %k, %v) : (tensor<2x150x40xf16>, tensor<2x150x40xf16>, tensor<2x150x40xf16>) -> tensor<2x150x40xf16>
  return %0 : tensor<2x150x40xf16>
}
