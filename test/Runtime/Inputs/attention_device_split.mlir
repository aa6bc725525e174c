// Keys, values and queries the device computes (three [2, 40, 16] F16 adds) for a key-split
// attention on 64 tiles: the keys and values are gathered onto their head's tiles in one
// exchange phase with one step of local copies, as the planner prices the conversion.
func.func @attention_device_split(%q: tensor<2x40x16xf16>, %k: tensor<2x40x16xf16>, %v: tensor<2x40x16xf16>) -> tensor<2x40x16xf16> {
  %a = "ipu.add"(%q, %q) : (tensor<2x40x16xf16>, tensor<2x40x16xf16>) -> tensor<2x40x16xf16>
  %b = "ipu.add"(%k, %k) : (tensor<2x40x16xf16>, tensor<2x40x16xf16>) -> tensor<2x40x16xf16>
  %c = "ipu.add"(%v, %v) : (tensor<2x40x16xf16>, tensor<2x40x16xf16>) -> tensor<2x40x16xf16>
  %0 = "ipu.attention"(%a, %b, %c) : (tensor<2x40x16xf16>, tensor<2x40x16xf16>, tensor<2x40x16xf16>) -> tensor<2x40x16xf16>
  return %0 : tensor<2x40x16xf16>
}
