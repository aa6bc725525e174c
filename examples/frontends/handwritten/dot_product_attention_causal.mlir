// The corpus's jax/dot_product_attention_causal (jax.nn.dot_product_attention(q, k, v, is_causal=True)) written by hand
// in the ipu dialect: q, k, v [batch, tokens, heads, head dim] = [1, 16, 4, 16], heads moved
// in front of the tokens for ipu.attention (scale 1/sqrt(16)) and back.
func.func @main(%q: tensor<1x16x4x16xf32>, %k: tensor<1x16x4x16xf32>, %v: tensor<1x16x4x16xf32>) -> tensor<1x16x4x16xf32> {
  %qh = "ipu.rearrange"(%q) {permutation = array<i64: 0, 2, 1, 3>} : (tensor<1x16x4x16xf32>) -> tensor<1x4x16x16xf32>
  %kh = "ipu.rearrange"(%k) {permutation = array<i64: 0, 2, 1, 3>} : (tensor<1x16x4x16xf32>) -> tensor<1x4x16x16xf32>
  %vh = "ipu.rearrange"(%v) {permutation = array<i64: 0, 2, 1, 3>} : (tensor<1x16x4x16xf32>) -> tensor<1x4x16x16xf32>
  %o = "ipu.attention"(%qh, %kh, %vh) {causal} : (tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
  %y = "ipu.rearrange"(%o) {permutation = array<i64: 0, 2, 1, 3>} : (tensor<1x4x16x16xf32>) -> tensor<1x16x4x16xf32>
  return %y : tensor<1x16x4x16xf32>
}
