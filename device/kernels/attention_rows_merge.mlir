// The merge of one key block into flash attention's running state, rows formulation, as the
// hardware-measured runs merged: the block's p V_blk (pv, as the AMP leaves it: AMP-output
// order of @ipu_panel_index in common.mlir with `rows` panel rows, the width padded to 16, in
// the partials precision) and its maxima and sums (m_blk, l_blk: attention_rows.mlir) into the
// running maxima m, sums l (f32, one per row) and output o (f32, `rows x width`, row-major).
// Per row r and column e < width, all in f32:
//   first block:  m = m_blk; l = l_blk; o[r][e] = pv[r][e];
//   other blocks: m' = max(m, m_blk); a = exp(m - m') (0 when m is -inf); b = exp(m_blk - m')
//                 (0 when m_blk is -inf); o[r][e] = o[r][e] * a + pv[r][e] * b;
//                 l = l * a + l_blk * b; m = m' (multiplies, then the add);
//   last block, after the above: o[r][e] = o[r][e] / l (0 when l is 0).
// exp is libm expf. o must not overlap the other operands.
//
// Run-time args: [pv_offset, m_blk_offset, l_blk_offset, m_offset, l_offset, o_offset].

// ipu.include "common.mlir"

func.func private @body(%mem: memref<?xi8>, %args: memref<?xi32>, %variant: index) {
  %partials = arith.constant {ipu.param = "partials"} 1 : index
  %rows = arith.constant {ipu.param = "rows"} 4 : index
  %width = arith.constant {ipu.param = "width"} 64 : index
  %first = arith.constant {ipu.param = "first"} false
  %last = arith.constant {ipu.param = "last"} false
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  // The state is f32 (precision code 0).
  %f32 = arith.constant 0 : index
  %s0 = arith.constant 0 : i32
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %neg_inf = arith.constant 0xFF800000 : f32
  %pv_off = func.call @ipu_arg_index(%args, %c0) : (memref<?xi32>, index) -> index
  %mb_off = func.call @ipu_arg_index(%args, %c1) : (memref<?xi32>, index) -> index
  %lb_off = func.call @ipu_arg_index(%args, %c2) : (memref<?xi32>, index) -> index
  %m_off = func.call @ipu_arg_index(%args, %c3) : (memref<?xi32>, index) -> index
  %l_off = func.call @ipu_arg_index(%args, %c4) : (memref<?xi32>, index) -> index
  %o_off = func.call @ipu_arg_index(%args, %c5) : (memref<?xi32>, index) -> index
  scf.for %r = %c0 to %rows step %c1 {
    %m_blk = func.call @ipu_load(%mem, %mb_off, %r, %f32, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
    %l_blk = func.call @ipu_load(%mem, %lb_off, %r, %f32, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
    // The first block reads no state (it has none yet).
    %m_old = scf.if %first -> (f32) {
      scf.yield %neg_inf : f32
    } else {
      %m_read = func.call @ipu_load(%mem, %m_off, %r, %f32, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
      scf.yield %m_read : f32
    }
    %l_old = scf.if %first -> (f32) {
      scf.yield %zero : f32
    } else {
      %l_read = func.call @ipu_load(%mem, %l_off, %r, %f32, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
      scf.yield %l_read : f32
    }
    %m_max = arith.maximumf %m_old, %m_blk : f32
    %da = arith.subf %m_old, %m_max : f32
    %ea = math.exp %da : f32
    %old_empty = arith.cmpf oeq, %m_old, %neg_inf : f32
    %a_rest = arith.select %old_empty, %zero, %ea : f32
    %db = arith.subf %m_blk, %m_max : f32
    %eb = math.exp %db : f32
    %blk_empty = arith.cmpf oeq, %m_blk, %neg_inf : f32
    %b_rest = arith.select %blk_empty, %zero, %eb : f32
    // The first block takes the block's state as it is.
    %a = arith.select %first, %zero, %a_rest : f32
    %b = arith.select %first, %one, %b_rest : f32
    %m_new = arith.select %first, %m_blk, %m_max : f32
    %la = arith.mulf %l_old, %a : f32
    %lb = arith.mulf %l_blk, %b : f32
    %l_rest = arith.addf %la, %lb : f32
    %l_new = arith.select %first, %l_blk, %l_rest : f32
    func.call @ipu_store(%mem, %m_off, %r, %f32, %s0, %m_new) : (memref<?xi8>, index, index, index, i32, f32) -> ()
    func.call @ipu_store(%mem, %l_off, %r, %f32, %s0, %l_new) : (memref<?xi8>, index, index, index, i32, f32) -> ()
    %no_sum = arith.cmpf oeq, %l_new, %zero : f32
    %base = arith.muli %r, %width : index
    scf.for %e = %c0 to %width step %c1 {
      %pi = func.call @ipu_panel_index(%r, %e, %rows) : (index, index, index) -> index
      %pv = func.call @ipu_load(%mem, %pv_off, %pi, %partials, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
      %oi = arith.addi %base, %e : index
      %o_old = scf.if %first -> (f32) {
        scf.yield %zero : f32
      } else {
        %o_read = func.call @ipu_load(%mem, %o_off, %oi, %f32, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
        scf.yield %o_read : f32
      }
      %oa = arith.mulf %o_old, %a : f32
      %pb = arith.mulf %pv, %b : f32
      %o_rest = arith.addf %oa, %pb : f32
      %o_merged = arith.select %first, %pv, %o_rest : f32
      %q = arith.divf %o_merged, %l_new : f32
      %q_or_0 = arith.select %no_sum, %zero, %q : f32
      %o_new = arith.select %last, %q_or_0, %o_merged : f32
      func.call @ipu_store(%mem, %o_off, %oi, %f32, %s0, %o_new) : (memref<?xi8>, index, index, index, i32, f32) -> ()
    }
  }
  return
}
