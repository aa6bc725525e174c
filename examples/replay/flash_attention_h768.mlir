// Flash attention, non-causal F16, sequence 1024, as the anchor measured it on a C600
// (ANCHOR-PLANS.md section 3); replayed by `ipu run flash_attention_h768.mlir --plan
// flash_attention_h768.plan.json`.
func.func @attention(%q: tensor<16x1024x48xf16>, %k: tensor<16x1024x48xf16>, %v: tensor<16x1024x48xf16>) -> tensor<16x1024x48xf16> {
  %0 = "ipu.attention"(%q, %k, %v) : (tensor<16x1024x48xf16>, tensor<16x1024x48xf16>, tensor<16x1024x48xf16>) -> tensor<16x1024x48xf16>
  return %0 : tensor<16x1024x48xf16>
}
