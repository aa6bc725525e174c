// The merge of one key block into flash attention's running output, rows formulation: for
// `rows` queries r and `width` output columns e, all in f32,
//   o[r][e] = o[r][e] * c[r] + pv[r][e]
// (a multiply, then an add), o the unnormalized output (f32, `rows x width`, row-major, as
// attention_finish.mlir reads it), c the rescale factors attention_columns.mlir leaves in
// its rows form (f32, one per query), pv the block's p V_blk as the AMP leaves it
// (AMP-output order of @ipu_panel_index in common.mlir: `rows` panel rows, the width padded
// to 16, in the partials precision). o must not overlap c or pv.
//
// Run-time args: [pv_offset, c_offset, o_offset].

// ipu.include "common.mlir"

func.func private @body(%mem: memref<?xi8>, %args: memref<?xi32>, %variant: index) {
  %partials = arith.constant {ipu.param = "partials"} 1 : index
  %rows = arith.constant {ipu.param = "rows"} 4 : index
  %width = arith.constant {ipu.param = "width"} 64 : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  // c and o are f32 (precision code 0).
  %f32 = arith.constant 0 : index
  %s0 = arith.constant 0 : i32
  %pv_off = func.call @ipu_arg_index(%args, %c0) : (memref<?xi32>, index) -> index
  %c_off = func.call @ipu_arg_index(%args, %c1) : (memref<?xi32>, index) -> index
  %o_off = func.call @ipu_arg_index(%args, %c2) : (memref<?xi32>, index) -> index
  scf.for %r = %c0 to %rows step %c1 {
    %c = func.call @ipu_load(%mem, %c_off, %r, %f32, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
    %base = arith.muli %r, %width : index
    scf.for %e = %c0 to %width step %c1 {
      %pi = func.call @ipu_panel_index(%r, %e, %rows) : (index, index, index) -> index
      %pv = func.call @ipu_load(%mem, %pv_off, %pi, %partials, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
      %oi = arith.addi %base, %e : index
      %o = func.call @ipu_load(%mem, %o_off, %oi, %f32, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
      %scaled = arith.mulf %o, %c : f32
      %sum = arith.addf %scaled, %pv : f32
      func.call @ipu_store(%mem, %o_off, %oi, %f32, %s0, %sum) : (memref<?xi8>, index, index, index, i32, f32) -> ()
    }
  }
  return
}
