// Six 8 x 16 matrices transposed (a swap of the last two axes): on 4, 2 and 1 tiles each tile
// transposes two, three and six of them (test/Runtime/transpose-many.test).
func.func @tr(%x: tensor<6x8x16xf32>) -> tensor<6x16x8xf32> {
  %0 = "ipu.rearrange"(%x) {permutation = array<i64: 0, 2, 1>} : (tensor<6x8x16xf32>) -> tensor<6x16x8xf32>
  return %0 : tensor<6x16x8xf32>
}
