// The corpus's jax/flax_vit_tiny (flax.linen) written by hand in the ipu dialect: a
// [1, 16, 16, 3] NHWC image cut into 16 patches of 4x4x3 (reshape, rearrange, reshape to
// [16, 48]) and embedded by one matmul to 32 plus bias (the 4x4 stride-4 Conv), the class
// token concatenated in front, position embedding added ([1, 17, 32]), one ViT block as in
// flax_vit_block.mlir (LayerNorm epsilon 1e-6, 2 heads, tanh GeLU MLP of 128), LayerNorm, and
// the Dense 32->10 head with bias on the class token (ipu.slice) -> [1, 10]. Weights as
// constants; the patch bias and the class token vary along the features (splats there
// would make the first layer norm's rows constant, 0/sqrt(epsilon)); values do not change
// the cycles.
func.func @main(%image: tensor<1x16x16x3xf32>) -> tensor<1x10xf32> {
  %wpatch = arith.constant dense<0.125> : tensor<48x32xf32>
  %bpatch = arith.constant dense<[-0.5, -0.375, -0.25, -0.125, 0.0, 0.125, 0.25, 0.375, -0.5, -0.375, -0.25, -0.125, 0.0, 0.125, 0.25, 0.375, -0.5, -0.375, -0.25, -0.125, 0.0, 0.125, 0.25, 0.375, -0.5, -0.375, -0.25, -0.125, 0.0, 0.125, 0.25, 0.375]> : tensor<32xf32>
  %cls = arith.constant dense<[[[0.0, 0.25, 0.5, 0.75, 0.0, 0.25, 0.5, 0.75, 0.0, 0.25, 0.5, 0.75, 0.0, 0.25, 0.5, 0.75, 0.0, 0.25, 0.5, 0.75, 0.0, 0.25, 0.5, 0.75, 0.0, 0.25, 0.5, 0.75, 0.0, 0.25, 0.5, 0.75]]]> : tensor<1x1x32xf32>
  %pos = arith.constant dense<0.0625> : tensor<1x17x32xf32>
  %ln1_g = arith.constant dense<0.25> : tensor<32xf32>
  %ln1_b = arith.constant dense<0.5> : tensor<32xf32>
  %wq = arith.constant dense<1.0> : tensor<32x32xf32>
  %wk = arith.constant dense<0.75> : tensor<32x32xf32>
  %wv = arith.constant dense<0.375> : tensor<32x32xf32>
  %bq = arith.constant dense<0.03125> : tensor<32xf32>
  %bk = arith.constant dense<0.125> : tensor<32xf32>
  %bv = arith.constant dense<0.0625> : tensor<32xf32>
  %wo = arith.constant dense<0.25> : tensor<32x32xf32>
  %bo = arith.constant dense<0.5> : tensor<32xf32>
  %ln2_g = arith.constant dense<1.0> : tensor<32xf32>
  %ln2_b = arith.constant dense<0.75> : tensor<32xf32>
  %w1 = arith.constant dense<0.375> : tensor<32x128xf32>
  %b1 = arith.constant dense<0.03125> : tensor<128xf32>
  %w2 = arith.constant dense<0.125> : tensor<128x32xf32>
  %b2 = arith.constant dense<0.0625> : tensor<32xf32>
  %lnf_g = arith.constant dense<0.25> : tensor<32xf32>
  %lnf_b = arith.constant dense<0.5> : tensor<32xf32>
  %whead = arith.constant dense<1.0> : tensor<32x10xf32>
  %bhead = arith.constant dense<0.75> : tensor<10xf32>
  %img = "ipu.reshape"(%image) : (tensor<1x16x16x3xf32>) -> tensor<4x4x4x4x3xf32>
  %patches = "ipu.rearrange"(%img) {permutation = array<i64: 0, 2, 1, 3, 4>} : (tensor<4x4x4x4x3xf32>) -> tensor<4x4x4x4x3xf32>
  %pflat = "ipu.reshape"(%patches) : (tensor<4x4x4x4x3xf32>) -> tensor<16x48xf32>
  %embed = "ipu.matmul"(%pflat, %wpatch) : (tensor<16x48xf32>, tensor<48x32xf32>) -> tensor<16x32xf32>
  %embedb = "ipu.add"(%embed, %bpatch) : (tensor<16x32xf32>, tensor<32xf32>) -> tensor<16x32xf32>
  %embed3 = "ipu.reshape"(%embedb) : (tensor<16x32xf32>) -> tensor<1x16x32xf32>
  %tokens = "ipu.concat"(%cls, %embed3) {axis = 1 : i64} : (tensor<1x1x32xf32>, tensor<1x16x32xf32>) -> tensor<1x17x32xf32>
  %tokpos = "ipu.add"(%tokens, %pos) : (tensor<1x17x32xf32>, tensor<1x17x32xf32>) -> tensor<1x17x32xf32>
  %ln1 = "ipu.layer_norm"(%tokpos, %ln1_g, %ln1_b) {epsilon = 1.0e-06 : f32} : (tensor<1x17x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x17x32xf32>
  %q = "ipu.matmul"(%ln1, %wq) : (tensor<1x17x32xf32>, tensor<32x32xf32>) -> tensor<1x17x32xf32>
  %qb = "ipu.add"(%q, %bq) : (tensor<1x17x32xf32>, tensor<32xf32>) -> tensor<1x17x32xf32>
  %k = "ipu.matmul"(%ln1, %wk) : (tensor<1x17x32xf32>, tensor<32x32xf32>) -> tensor<1x17x32xf32>
  %kb = "ipu.add"(%k, %bk) : (tensor<1x17x32xf32>, tensor<32xf32>) -> tensor<1x17x32xf32>
  %v = "ipu.matmul"(%ln1, %wv) : (tensor<1x17x32xf32>, tensor<32x32xf32>) -> tensor<1x17x32xf32>
  %vb = "ipu.add"(%v, %bv) : (tensor<1x17x32xf32>, tensor<32xf32>) -> tensor<1x17x32xf32>
  %qs = "ipu.reshape"(%qb) : (tensor<1x17x32xf32>) -> tensor<1x17x2x16xf32>
  %qh = "ipu.rearrange"(%qs) {permutation = array<i64: 0, 2, 1, 3>} : (tensor<1x17x2x16xf32>) -> tensor<1x2x17x16xf32>
  %ks = "ipu.reshape"(%kb) : (tensor<1x17x32xf32>) -> tensor<1x17x2x16xf32>
  %kh = "ipu.rearrange"(%ks) {permutation = array<i64: 0, 2, 1, 3>} : (tensor<1x17x2x16xf32>) -> tensor<1x2x17x16xf32>
  %vs = "ipu.reshape"(%vb) : (tensor<1x17x32xf32>) -> tensor<1x17x2x16xf32>
  %vh = "ipu.rearrange"(%vs) {permutation = array<i64: 0, 2, 1, 3>} : (tensor<1x17x2x16xf32>) -> tensor<1x2x17x16xf32>
  %att = "ipu.attention"(%qh, %kh, %vh) : (tensor<1x2x17x16xf32>, tensor<1x2x17x16xf32>, tensor<1x2x17x16xf32>) -> tensor<1x2x17x16xf32>
  %om = "ipu.rearrange"(%att) {permutation = array<i64: 0, 2, 1, 3>} : (tensor<1x2x17x16xf32>) -> tensor<1x17x2x16xf32>
  %merged = "ipu.reshape"(%om) : (tensor<1x17x2x16xf32>) -> tensor<1x17x32xf32>
  %proj = "ipu.matmul"(%merged, %wo) : (tensor<1x17x32xf32>, tensor<32x32xf32>) -> tensor<1x17x32xf32>
  %projb = "ipu.add"(%proj, %bo) : (tensor<1x17x32xf32>, tensor<32xf32>) -> tensor<1x17x32xf32>
  %res1 = "ipu.add"(%tokpos, %projb) : (tensor<1x17x32xf32>, tensor<1x17x32xf32>) -> tensor<1x17x32xf32>
  %ln2 = "ipu.layer_norm"(%res1, %ln2_g, %ln2_b) {epsilon = 1.0e-06 : f32} : (tensor<1x17x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x17x32xf32>
  %h = "ipu.matmul"(%ln2, %w1) : (tensor<1x17x32xf32>, tensor<32x128xf32>) -> tensor<1x17x128xf32>
  %hb = "ipu.add"(%h, %b1) : (tensor<1x17x128xf32>, tensor<128xf32>) -> tensor<1x17x128xf32>
  %g = "ipu.gelu"(%hb) {approximate = "tanh"} : (tensor<1x17x128xf32>) -> tensor<1x17x128xf32>
  %m = "ipu.matmul"(%g, %w2) : (tensor<1x17x128xf32>, tensor<128x32xf32>) -> tensor<1x17x32xf32>
  %mb = "ipu.add"(%m, %b2) : (tensor<1x17x32xf32>, tensor<32xf32>) -> tensor<1x17x32xf32>
  %res2 = "ipu.add"(%res1, %mb) : (tensor<1x17x32xf32>, tensor<1x17x32xf32>) -> tensor<1x17x32xf32>
  %lnf = "ipu.layer_norm"(%res2, %lnf_g, %lnf_b) {epsilon = 1.0e-06 : f32} : (tensor<1x17x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x17x32xf32>
  %clstok = "ipu.slice"(%lnf) {offsets = array<i64: 0, 0, 0>, strides = array<i64: 1, 1, 1>} : (tensor<1x17x32xf32>) -> tensor<1x1x32xf32>
  %clsflat = "ipu.reshape"(%clstok) : (tensor<1x1x32xf32>) -> tensor<1x32xf32>
  %logits = "ipu.matmul"(%clsflat, %whead) : (tensor<1x32xf32>, tensor<32x10xf32>) -> tensor<1x10xf32>
  %logitsb = "ipu.add"(%logits, %bhead) : (tensor<1x10xf32>, tensor<10xf32>) -> tensor<1x10xf32>
  return %logitsb : tensor<1x10xf32>
}
