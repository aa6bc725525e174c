// out[r, c] = a[r, c] + b[r', c], r' = 0 when b has one row (broadcast), else r'= r.
// Row-major, f16 or f32. Each sum is formed in f32 (exact for f16 inputs) and rounded once to
// the output precision: round to nearest even, saturating (see common.mlir).
//
// Run-time args: [a_offset, b_offset, out_offset].

// ipu.include "common.mlir"

func.func private @body(%mem: memref<?xi8>, %args: memref<?xi32>, %variant: index) {
  %precision = arith.constant {ipu.param = "precision"} 1 : index
  %rows = arith.constant {ipu.param = "rows"} 4 : index
  %cols = arith.constant {ipu.param = "cols"} 64 : index
  %b_rows = arith.constant {ipu.param = "b_rows"} 1 : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %s0 = arith.constant 0 : i32
  %a = func.call @ipu_arg_index(%args, %c0) : (memref<?xi32>, index) -> index
  %b = func.call @ipu_arg_index(%args, %c1) : (memref<?xi32>, index) -> index
  %out = func.call @ipu_arg_index(%args, %c2) : (memref<?xi32>, index) -> index
  %broadcast = arith.cmpi eq, %b_rows, %c1 : index
  scf.for %r = %c0 to %rows step %c1 {
    %br = arith.select %broadcast, %c0, %r : index
    %row = arith.muli %r, %cols : index
    %brow = arith.muli %br, %cols : index
    scf.for %c = %c0 to %cols step %c1 {
      %i = arith.addi %row, %c : index
      %j = arith.addi %brow, %c : index
      %x = func.call @ipu_load(%mem, %a, %i, %precision, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
      %y = func.call @ipu_load(%mem, %b, %j, %precision, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
      %sum = arith.addf %x, %y : f32
      func.call @ipu_store(%mem, %out, %i, %precision, %s0, %sum) : (memref<?xi8>, index, index, index, i32, f32) -> ()
    }
  }
  return
}
