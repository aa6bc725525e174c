// A 40 GB splat weight: refused fast, with numbers, before its bytes are materialized.
func.func @f(%x: tensor<4x100000xf32>) -> tensor<4x100000xf32> {
  %w = arith.constant dense<1.0> : tensor<100000x100000xf32>
  %0 = "ipu.matmul"(%x, %w) : (tensor<4x100000xf32>, tensor<100000x100000xf32>) -> tensor<4x100000xf32>
  return %0 : tensor<4x100000xf32>
}
