// Checked by irdl-file.mlir: the extra dialect's declaration is enforced (factor is required).
func.func @missing_factor(%x: tensor<4xf16>) -> tensor<4xf16> {
  // expected-error@+1 {{'probe.scale' op attribute "factor" is expected but not provided}}
  %0 = "probe.scale"(%x) : (tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}
