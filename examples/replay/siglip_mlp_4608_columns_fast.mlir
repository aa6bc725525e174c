// The SigLIP MLP as the anchor measured it on a C600 (ANCHOR-PLANS.md section 4, "ColumnsFast":
// 4 images x 729 tokens = 2,916 rows, 1152 -> 4608 (GeLU) -> 1152, F16); replayed by `ipu run
// siglip_mlp_4608_columns_fast.mlir --plan siglip_mlp_4608_columns_fast.plan.json`. The
// weights are parameters (written at initialize, as the anchor's host wrote them outside the
// measured interval), generated at the weights' deviation.
func.func @siglip_mlp(%x: tensor<2916x1152xf16>, %w1: tensor<1152x4608xf16> {ipu.parameter}, %w2: tensor<4608x1152xf16> {ipu.parameter}) -> tensor<2916x1152xf16> {
  %h = "ipu.matmul"(%x, %w1) : (tensor<2916x1152xf16>, tensor<1152x4608xf16>) -> tensor<2916x4608xf16>
  %g = "ipu.gelu"(%h) {approximate = "tanh"} : (tensor<2916x4608xf16>) -> tensor<2916x4608xf16>
  %y = "ipu.matmul"(%g, %w2) : (tensor<2916x4608xf16>, tensor<4608x1152xf16>) -> tensor<2916x1152xf16>
  return %y : tensor<2916x1152xf16>
}
