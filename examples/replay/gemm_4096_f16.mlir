// F16 GEMM 4096 x 4096 x 4096 on 1472 tiles, as the anchor measured it on a C600
// (ANCHOR-PLANS.md section 1); replayed by `ipu run gemm_4096_f16.mlir --plan
// gemm_4096_f16.plan.json`.
func.func @gemm(%a: tensor<4096x4096xf16>, %b: tensor<4096x4096xf16>) -> tensor<4096x4096xf16> {
  %0 = "ipu.matmul"(%a, %b) : (tensor<4096x4096xf16>, tensor<4096x4096xf16>) -> tensor<4096x4096xf16>
  return %0 : tensor<4096x4096xf16>
}
