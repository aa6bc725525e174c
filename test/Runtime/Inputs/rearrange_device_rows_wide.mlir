// A permutation of the leading axes of a device value with wide rows
// (test/Runtime/pointwise-plans.test, pinned to whole matrices per tile): its row copy is
// priced as one copy of the block while the lowering copies only the rows already on the tile
// and receives the others by exchange; the wider the rows, the further off the estimate.
func.func @p(%x: tensor<4x6x512xf32>) -> tensor<6x4x512xf32> {
  %g = "ipu.gelu"(%x) {approximate = "tanh"} : (tensor<4x6x512xf32>) -> tensor<4x6x512xf32>
  %0 = "ipu.rearrange"(%g) {permutation = array<i64: 1, 0, 2>} : (tensor<4x6x512xf32>) -> tensor<6x4x512xf32>
  return %0 : tensor<6x4x512xf32>
}
