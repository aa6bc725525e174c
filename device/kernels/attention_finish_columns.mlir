// Final normalization of flash attention in the column formulation: out[j][e] = o[e][j] / l[j]
// for `queries` rows of `width` (out row-major, in `precision`), o the unnormalized output
// transposed in the 16-column panel order of @ipu_panel_index (common.mlir) with `width` panel
// rows (the partials precision, as attention_columns.mlir leaves it), l f32 (one per query).
// One f32 division, then the quotient is rounded once to the output precision (f16 or f32;
// nearest even, saturating, see common.mlir). A query whose l is 0 is written as 0.
// dst must not overlap o or l.
//
// Run-time args: [o_offset, l_offset, dst_offset].

// ipu.include "common.mlir"

func.func private @body(%mem: memref<?xi8>, %args: memref<?xi32>, %variant: index) {
  %precision = arith.constant {ipu.param = "precision"} 1 : index
  %partials = arith.constant {ipu.param = "partials"} 1 : index
  %queries = arith.constant {ipu.param = "queries"} 16 : index
  %width = arith.constant {ipu.param = "width"} 64 : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  // l is f32 (precision code 0).
  %f32 = arith.constant 0 : index
  %s0 = arith.constant 0 : i32
  %zero = arith.constant 0.0 : f32
  %o_off = func.call @ipu_arg_index(%args, %c0) : (memref<?xi32>, index) -> index
  %l_off = func.call @ipu_arg_index(%args, %c1) : (memref<?xi32>, index) -> index
  %dst = func.call @ipu_arg_index(%args, %c2) : (memref<?xi32>, index) -> index
  scf.for %j = %c0 to %queries step %c1 {
    %l = func.call @ipu_load(%mem, %l_off, %j, %f32, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
    %empty = arith.cmpf oeq, %l, %zero : f32
    %base = arith.muli %j, %width : index
    scf.for %e = %c0 to %width step %c1 {
      %oi = func.call @ipu_panel_index(%e, %j, %width) : (index, index, index) -> index
      %o = func.call @ipu_load(%mem, %o_off, %oi, %partials, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
      %q = arith.divf %o, %l : f32
      %y = arith.select %empty, %zero, %q : f32
      %i = arith.addi %base, %e : index
      func.call @ipu_store(%mem, %dst, %i, %precision, %s0, %y) : (memref<?xi8>, index, index, index, i32, f32) -> ()
    }
  }
  return
}
