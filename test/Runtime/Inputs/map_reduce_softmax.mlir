// A causal softmax written with ipu.map (mask from element indices, exp, divide),
// ipu.reduce (row max, row sum) and ipu.broadcast.
func.func private @sub_exp(%x: f32, %m: f32) -> f32 {
  %d = arith.subf %x, %m : f32
  %e = math.exp %d : f32
  func.return %e : f32
}
func.func private @div(%x: f32, %s: f32) -> f32 {
  %q = arith.divf %x, %s : f32
  func.return %q : f32
}
func.func private @causal(%x: f32, %b: index, %i: index, %j: index) -> f32 {
  %le = arith.cmpi ule, %j, %i : index
  %neg = arith.constant -3.40282347E+38 : f32
  %y = arith.select %le, %x, %neg : f32
  func.return %y : f32
}
func.func @main(%x: tensor<4x8x64xf32>) -> tensor<4x8x64xf32> {
  %c = "ipu.map"(%x) {body = @causal} : (tensor<4x8x64xf32>) -> tensor<4x8x64xf32>
  %m = "ipu.reduce"(%c) {combiner = "max"} : (tensor<4x8x64xf32>) -> tensor<4x8x1xf32>
  %mb = "ipu.broadcast"(%m) : (tensor<4x8x1xf32>) -> tensor<4x8x64xf32>
  %e = "ipu.map"(%c, %mb) {body = @sub_exp} : (tensor<4x8x64xf32>, tensor<4x8x64xf32>) -> tensor<4x8x64xf32>
  %s = "ipu.reduce"(%e) {combiner = "add"} : (tensor<4x8x64xf32>) -> tensor<4x8x1xf32>
  %sb = "ipu.broadcast"(%s) : (tensor<4x8x1xf32>) -> tensor<4x8x64xf32>
  %y = "ipu.map"(%e, %sb) {body = @div} : (tensor<4x8x64xf32>, tensor<4x8x64xf32>) -> tensor<4x8x64xf32>
  return %y : tensor<4x8x64xf32>
}
