// test/Runtime/Inputs/repeat_two.mlir's layer repeated 1e9 times (test/Runtime/max-cycles.test).
func.func private @step(%x: tensor<16x64xf32>, %h: tensor<16x64xf32>) -> (tensor<16x64xf32>, tensor<16x64xf32>) {
  %s = "ipu.softmax"(%x) : (tensor<16x64xf32>) -> tensor<16x64xf32>
  %h2 = "ipu.add"(%h, %s) : (tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
  %x2 = "ipu.gelu"(%h2) : (tensor<16x64xf32>) -> tensor<16x64xf32>
  return %x2, %h2 : tensor<16x64xf32>, tensor<16x64xf32>
}
func.func @two(%x: tensor<16x64xf32>, %h: tensor<16x64xf32>) -> (tensor<16x64xf32>, tensor<16x64xf32>) {
  %0:2 = "ipu.repeat"(%x, %h) {body = @step, count = 1000000000 : i64} : (tensor<16x64xf32>, tensor<16x64xf32>) -> (tensor<16x64xf32>, tensor<16x64xf32>)
  return %0#0, %0#1 : tensor<16x64xf32>, tensor<16x64xf32>
}
