// The softmax of one key block of flash attention in the rows formulation (queries as the
// AMP's rows, keys as its columns), block by block as the hardware-measured runs computed it:
// each block's probabilities relative to the block's own maximum, merged into the running
// state afterwards (attention_rows_merge.mlir). s holds the block's unscaled scores as the AMP
// leaves s = Q K_blk^T (the 16-column panel order of @ipu_panel_index in common.mlir with
// `queries` panel rows and the keys as columns, padded to kp = ceil(keys / 16) * 16, in the
// partials precision); p receives the probabilities in the same order (the AMP-left order of
// p V_blk, in `precision`). Key key_offset + j is hidden from query query_offset + r when
// causal and key_offset + j > query_offset + r, so the visible keys of row r are j < limit,
// limit = keys, or when causal min(keys, query_offset + r + 1 - key_offset) (0 when
// query_offset + r < key_offset). Per row r < queries, all in f32:
//   x[j] = scale * s[r][j];  m = max_j x[j];  p[r][j] = exp(x[j] - m) rounded once to
//   `precision`;  l = the sum of the rounded p[r][j] in order j = 0, 1, ...;
//   m_blk[r] = m, l_blk[r] = l (f32); a row with no visible key gets m_blk = -inf, l_blk = 0.
// Every other element of p (hidden keys, padding columns) is written 0. Separate multiplies and
// adds; exp is libm expf (as in softmax.mlir). s and p may not overlap each other or m_blk,
// l_blk.
//
// Run-time args: [s_offset, p_offset, m_blk_offset, l_blk_offset, scale_bits, query_offset,
//                 key_offset].

// ipu.include "common.mlir"

func.func private @body(%mem: memref<?xi8>, %args: memref<?xi32>, %variant: index) {
  %precision = arith.constant {ipu.param = "precision"} 1 : index
  %partials = arith.constant {ipu.param = "partials"} 1 : index
  %keys = arith.constant {ipu.param = "keys"} 64 : index
  %queries = arith.constant {ipu.param = "queries"} 16 : index
  %causal = arith.constant {ipu.param = "causal"} false
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c15 = arith.constant 15 : index
  %c16 = arith.constant 16 : index
  // m_blk and l_blk are f32 (precision code 0).
  %f32 = arith.constant 0 : index
  %s0 = arith.constant 0 : i32
  %zero = arith.constant 0.0 : f32
  %neg_inf = arith.constant 0xFF800000 : f32
  %s_off = func.call @ipu_arg_index(%args, %c0) : (memref<?xi32>, index) -> index
  %p_off = func.call @ipu_arg_index(%args, %c1) : (memref<?xi32>, index) -> index
  %m_off = func.call @ipu_arg_index(%args, %c2) : (memref<?xi32>, index) -> index
  %l_off = func.call @ipu_arg_index(%args, %c3) : (memref<?xi32>, index) -> index
  %bits = func.call @ipu_arg_i32(%args, %c4) : (memref<?xi32>, index) -> i32
  %scale = arith.bitcast %bits : i32 to f32
  %query_offset = func.call @ipu_arg_index(%args, %c5) : (memref<?xi32>, index) -> index
  %key_offset = func.call @ipu_arg_index(%args, %c6) : (memref<?xi32>, index) -> index
  %k15 = arith.addi %keys, %c15 : index
  %kg = arith.divui %k15, %c16 : index
  %kp = arith.muli %kg, %c16 : index
  scf.for %r = %c0 to %queries step %c1 {
    %global = arith.addi %query_offset, %r : index
    %visible = arith.addi %global, %c1 : index
    %any = arith.cmpi ugt, %visible, %key_offset : index
    %span = arith.subi %visible, %key_offset : index
    %span_or_0 = arith.select %any, %span, %c0 : index
    %causal_limit = arith.minui %span_or_0, %keys : index
    %limit = arith.select %causal, %causal_limit, %keys : index
    %m = scf.for %j = %c0 to %limit step %c1 iter_args(%acc = %neg_inf) -> (f32) {
      %i = func.call @ipu_panel_index(%r, %j, %queries) : (index, index, index) -> index
      %s = func.call @ipu_load(%mem, %s_off, %i, %partials, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
      %x = arith.mulf %scale, %s : f32
      %mx = arith.maximumf %acc, %x : f32
      scf.yield %mx : f32
    }
    %l = scf.for %j = %c0 to %limit step %c1 iter_args(%acc = %zero) -> (f32) {
      %i = func.call @ipu_panel_index(%r, %j, %queries) : (index, index, index) -> index
      %s = func.call @ipu_load(%mem, %s_off, %i, %partials, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
      %x = arith.mulf %scale, %s : f32
      %d = arith.subf %x, %m : f32
      %e = math.exp %d : f32
      func.call @ipu_store(%mem, %p_off, %i, %precision, %s0, %e) : (memref<?xi8>, index, index, index, i32, f32) -> ()
      %rounded = func.call @ipu_load(%mem, %p_off, %i, %precision, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
      %next = arith.addf %acc, %rounded : f32
      scf.yield %next : f32
    }
    scf.for %j = %limit to %kp step %c1 {
      %i = func.call @ipu_panel_index(%r, %j, %queries) : (index, index, index) -> index
      func.call @ipu_store(%mem, %p_off, %i, %precision, %s0, %zero) : (memref<?xi8>, index, index, index, i32, f32) -> ()
    }
    func.call @ipu_store(%mem, %m_off, %r, %f32, %s0, %m) : (memref<?xi8>, index, index, index, i32, f32) -> ()
    func.call @ipu_store(%mem, %l_off, %r, %f32, %s0, %l) : (memref<?xi8>, index, index, index, i32, f32) -> ()
  }
  return
}
