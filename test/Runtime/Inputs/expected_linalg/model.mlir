// A dense layer as a linalg frontend writes it (matmul into a zero fill, then a bias add), with
// its inputs (inputs/arg<N>.npy) and the output NumPy computes for them in float64, rounded to
// float32 (expected/result0.npy): the layout of a corpus model, for `ipu run --expected`.
func.func @main(%x: tensor<16x64xf32>, %w: tensor<64x32xf32>, %b: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<16x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<16x32xf32>) -> tensor<16x32xf32>
  %p = linalg.matmul ins(%x, %w : tensor<16x64xf32>, tensor<64x32xf32>) outs(%init : tensor<16x32xf32>) -> tensor<16x32xf32>
  %out = tensor.empty() : tensor<16x32xf32>
  %y = linalg.add ins(%p, %b : tensor<16x32xf32>, tensor<16x32xf32>) outs(%out : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}
