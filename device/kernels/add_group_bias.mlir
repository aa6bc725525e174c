// out[i] = a[i] + bias[(q / rows) * 16 + i % 16] over a range of a 16-column AMP panel order
// (element (r, c) of a block with `rows` rows per 16-column group at
// ((c / 16) * rows + r) * 16 + c % 16): the range is `elements / 16` consecutive 16-element
// units ("group rows"); unit t = i / 16 is group row q = start + t, counted from the first row
// of the range's first group, and its group's 16 biases follow those of the previous group.
// bias_offset is the bias of the range's first group. f16 or f32. Each sum is formed in f32
// (exact for f16 inputs) and rounded once to the output precision: round to nearest even,
// saturating (see common.mlir), as in add.mlir. In place (a == out) is allowed: each element
// is read before it is written.
//
// Run-time args: [a_offset, bias_offset, out_offset, start] (0 <= start < rows, checked by the
// runner).

// ipu.include "common.mlir"

func.func private @body(%mem: memref<?xi8>, %args: memref<?xi32>, %variant: index) {
  %precision = arith.constant {ipu.param = "precision"} 1 : index
  %rows = arith.constant {ipu.param = "rows"} 4 : index
  %n = arith.constant {ipu.param = "elements"} 64 : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c16 = arith.constant 16 : index
  %s0 = arith.constant 0 : i32
  %a = func.call @ipu_arg_index(%args, %c0) : (memref<?xi32>, index) -> index
  %bias = func.call @ipu_arg_index(%args, %c1) : (memref<?xi32>, index) -> index
  %out = func.call @ipu_arg_index(%args, %c2) : (memref<?xi32>, index) -> index
  %start = func.call @ipu_arg_index(%args, %c3) : (memref<?xi32>, index) -> index
  %units = arith.divui %n, %c16 : index
  scf.for %t = %c0 to %units step %c1 {
    %q = arith.addi %start, %t : index
    %group = arith.divui %q, %rows : index
    %unit = arith.muli %t, %c16 : index
    %group_bias = arith.muli %group, %c16 : index
    scf.for %l = %c0 to %c16 step %c1 {
      %i = arith.addi %unit, %l : index
      %j = arith.addi %group_bias, %l : index
      %x = func.call @ipu_load(%mem, %a, %i, %precision, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
      %y = func.call @ipu_load(%mem, %bias, %j, %precision, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
      %sum = arith.addf %x, %y : f32
      func.call @ipu_store(%mem, %out, %i, %precision, %s0, %sum) : (memref<?xi8>, index, index, index, i32, f32) -> ()
    }
  }
  return
}
