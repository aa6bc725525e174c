// Three heads of 512 queries and keys (head size 16, f16): on 64 tiles no grid of one head per
// row divides the tile count; [3, 16] runs on 48 tiles, 32 query rows each, and a tile's
// score rows with a whole head's keys and values exceed its attention budget.
func.func @heads(%q: tensor<3x512x16xf16>, %k: tensor<3x512x16xf16>, %v: tensor<3x512x16xf16>) -> tensor<3x512x16xf16> {
  %0 = "ipu.attention"(%q, %k, %v) : (tensor<3x512x16xf16>, tensor<3x512x16xf16>, tensor<3x512x16xf16>) -> tensor<3x512x16xf16>
  return %0 : tensor<3x512x16xf16>
}
