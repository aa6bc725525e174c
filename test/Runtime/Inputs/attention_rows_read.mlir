// An attention whose result another op reads.
func.func @attention_rows_read(%q: tensor<4x37x20xf16>, %k: tensor<4x70x20xf16>, %v: tensor<4x70x24xf16>) -> tensor<4x37x24xf16> {
  %0 = "ipu.attention"(%q, %k, %v) : (tensor<4x37x20xf16>, tensor<4x70x20xf16>, tensor<4x70x24xf16>) -> tensor<4x37x24xf16>
  %1 = "ipu.add"(%0, %0) : (tensor<4x37x24xf16>, tensor<4x37x24xf16>) -> tensor<4x37x24xf16>
  return %1 : tensor<4x37x24xf16>
}
