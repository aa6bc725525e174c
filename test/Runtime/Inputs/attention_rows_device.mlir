// An attention whose query the device computes.
func.func @attention_rows_device(%q: tensor<4x37x20xf16>, %k: tensor<4x70x20xf16>, %v: tensor<4x70x24xf16>) -> tensor<4x37x24xf16> {
  %d = "ipu.add"(%q, %q) : (tensor<4x37x20xf16>, tensor<4x37x20xf16>) -> tensor<4x37x20xf16>
  %0 = "ipu.attention"(%d, %k, %v) : (tensor<4x37x20xf16>, tensor<4x70x20xf16>, tensor<4x70x24xf16>) -> tensor<4x37x24xf16>
  return %0 : tensor<4x37x24xf16>
}
