// Three causal heads of 50 queries (head size 16, f16): on 64 tiles the exact query splits
// give at most 10 blocks per head; ragged blocks of 3 rows (the last of 2) give 17.
func.func @ragged(%q: tensor<3x50x16xf16>, %k: tensor<3x50x16xf16>, %v: tensor<3x50x16xf16>) -> tensor<3x50x16xf16> {
  %0 = "ipu.attention"(%q, %k, %v) {causal} : (tensor<3x50x16xf16>, tensor<3x50x16xf16>, tensor<3x50x16xf16>) -> tensor<3x50x16xf16>
  return %0 : tensor<3x50x16xf16>
}
