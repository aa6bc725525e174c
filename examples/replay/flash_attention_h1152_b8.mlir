// Flash attention, non-causal F16, sequence 1024, as the anchor measured it on a C600
// (ANCHOR-PLANS.md section 3); replayed by `ipu run flash_attention_h1152_b8.mlir --plan
// flash_attention_h1152_b8.plan.json`.
func.func @attention(%q: tensor<8x16x1024x72xf16>, %k: tensor<8x16x1024x72xf16>, %v: tensor<8x16x1024x72xf16>) -> tensor<8x16x1024x72xf16> {
  %0 = "ipu.attention"(%q, %k, %v) : (tensor<8x16x1024x72xf16>, tensor<8x16x1024x72xf16>, tensor<8x16x1024x72xf16>) -> tensor<8x16x1024x72xf16>
  return %0 : tensor<8x16x1024x72xf16>
}
