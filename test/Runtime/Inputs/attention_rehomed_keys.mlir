// Heads split by rearranges the plan pins to other row blocks than the attention reads its
// keys and values from (constraints: attention_rehomed_keys.json).
func.func @main(%q: tensor<1024x2x64xf16>, %k: tensor<1024x2x64xf16>, %v: tensor<1024x2x64xf16>) -> tensor<2x1024x64xf16> {
  %qd = "ipu.add"(%q, %q) : (tensor<1024x2x64xf16>, tensor<1024x2x64xf16>) -> tensor<1024x2x64xf16>
  %kd = "ipu.add"(%k, %k) : (tensor<1024x2x64xf16>, tensor<1024x2x64xf16>) -> tensor<1024x2x64xf16>
  %vd = "ipu.add"(%v, %v) : (tensor<1024x2x64xf16>, tensor<1024x2x64xf16>) -> tensor<1024x2x64xf16>
  %qh = "ipu.rearrange"(%qd) {permutation = array<i64: 1, 0, 2>} : (tensor<1024x2x64xf16>) -> tensor<2x1024x64xf16>
  %kh = "ipu.rearrange"(%kd) {permutation = array<i64: 1, 0, 2>} : (tensor<1024x2x64xf16>) -> tensor<2x1024x64xf16>
  %vh = "ipu.rearrange"(%vd) {permutation = array<i64: 1, 0, 2>} : (tensor<1024x2x64xf16>) -> tensor<2x1024x64xf16>
  %a = "ipu.attention"(%qh, %kh, %vh) : (tensor<2x1024x64xf16>, tensor<2x1024x64xf16>, tensor<2x1024x64xf16>) -> tensor<2x1024x64xf16>
  return %a : tensor<2x1024x64xf16>
}
