// Ops off the GEMM fast path (passes/src/lower/graph/general.rs), in f32: causal attention
// over 2 heads of 24 queries (key count and rows padded to the AMP's 16-column groups; the
// planned query blocks split each head's rows over several tiles, so each tile's causal
// offset differs), a batched matmul with a
// transposed right operand, an add of two host values, a softmax, a permutation of the
// leading axes and a swap of the last two, and casts f32 -> f16 -> f32.
func.func @general(%q: tensor<2x24x32xf32>, %k: tensor<2x24x32xf32>, %v: tensor<2x24x32xf32>,
                   %a: tensor<3x5x20xf32>, %b: tensor<3x24x20xf32>,
                   %x: tensor<2x4x40xf32>, %y: tensor<2x4x40xf32>)
    -> (tensor<2x24x32xf32>, tensor<4x2x40xf32>, tensor<3x24x5xf32>, tensor<2x4x40xf32>) {
  %0 = "ipu.attention"(%q, %k, %v) {causal, scale = 0.125 : f32} : (tensor<2x24x32xf32>, tensor<2x24x32xf32>, tensor<2x24x32xf32>) -> tensor<2x24x32xf32>
  %1 = "ipu.matmul"(%a, %b) {transpose_rhs = true} : (tensor<3x5x20xf32>, tensor<3x24x20xf32>) -> tensor<3x5x24xf32>
  %2 = "ipu.add"(%x, %y) : (tensor<2x4x40xf32>, tensor<2x4x40xf32>) -> tensor<2x4x40xf32>
  %3 = "ipu.softmax"(%2) : (tensor<2x4x40xf32>) -> tensor<2x4x40xf32>
  %4 = "ipu.rearrange"(%3) {permutation = array<i64: 1, 0, 2>} : (tensor<2x4x40xf32>) -> tensor<4x2x40xf32>
  %5 = "ipu.rearrange"(%1) {permutation = array<i64: 0, 2, 1>} : (tensor<3x5x24xf32>) -> tensor<3x24x5xf32>
  %6 = "ipu.cast"(%2) : (tensor<2x4x40xf32>) -> tensor<2x4x40xf16>
  %7 = "ipu.cast"(%6) : (tensor<2x4x40xf16>) -> tensor<2x4x40xf32>
  return %0, %4, %5, %7 : tensor<2x24x32xf32>, tensor<4x2x40xf32>, tensor<3x24x5xf32>, tensor<2x4x40xf32>
}
