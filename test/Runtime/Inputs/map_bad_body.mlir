func.func private @angle(%x: f32) -> f32 {
  %a = math.atan %x : f32
  func.return %a : f32
}
func.func @main(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %y = "ipu.map"(%x) {body = @angle} : (tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
