// Batched products with more batches (6) than tiles: transposed right operands, a broadcast right
// operand and both operands transposed (test/Runtime/general-matmul-many-batches.test).
func.func @bmm(%a: tensor<6x8x32xf32>, %b: tensor<6x16x32xf32>, %c: tensor<32x16xf32>, %d: tensor<6x32x8xf32>) -> (tensor<6x8x16xf32>, tensor<6x8x16xf32>, tensor<6x8x8xf32>) {
  %0 = "ipu.matmul"(%a, %b) {transpose_rhs = true} : (tensor<6x8x32xf32>, tensor<6x16x32xf32>) -> tensor<6x8x16xf32>
  %1 = "ipu.matmul"(%a, %c) : (tensor<6x8x32xf32>, tensor<32x16xf32>) -> tensor<6x8x16xf32>
  %2 = "ipu.matmul"(%d, %a) {transpose_lhs = true, transpose_rhs = true} : (tensor<6x32x8xf32>, tensor<6x8x32xf32>) -> tensor<6x8x8xf32>
  return %0, %1, %2 : tensor<6x8x16xf32>, tensor<6x8x16xf32>, tensor<6x8x8xf32>
}
