// One key block of flash attention in the column formulation: keys are the AMP's rows and
// queries its columns. s holds the block's unscaled scores transposed (s = K_blk Q^T, as the
// AMP leaves them), p receives the probabilities as the AMP weights of o^T += V_blk^T p^T.
// Every block is in the 16-column panel order of @ipu_panel_index (common.mlir) with the
// queries as columns, padded to qp = ceil(queries / 16) * 16:
//   s (partials precision) and p (precision): kp = ceil(keys / 16) * 16 panel rows (keys);
//   o (partials precision, the unnormalized output transposed): `width` panel rows;
//   m, l (f32, one per query): the running maximum and sum.
// Key key_offset + r is hidden from query query_offset + j when causal and
// key_offset + r > query_offset + j, so the visible keys of column j are r < limit, limit =
// keys, or when causal min(keys, query_offset + j + 1 - key_offset) (0 when
// query_offset + j < key_offset). Per column j < queries with limit > 0, all in f32:
//   x[r] = scale * s[r][j];  m' = max(m[j], max_r x[r]);  c = exp(m[j] - m') (0 when m[j] = -inf)
//   p[r][j] = exp(x[r] - m') rounded once to `precision`;  l[j] = l[j] * c + sum_r p[r][j]
//   (the rounded values, in order r = 0, 1, ...);  o[e][j] = o[e][j] * c rounded to the
//   partials (0 when m[j] was -inf, whatever o held);  m[j] = m'.
// Every other element of p (hidden keys, padding rows, padding columns, columns without a
// visible key) is written 0; such a column keeps its m, l and o. Separate multiplies and
// adds; exp is libm expf (as in softmax.mlir).
//
// Run-time args: [s_offset, p_offset, m_offset, l_offset, o_offset, scale_bits, query_offset,
//                 key_offset].

// ipu.include "common.mlir"

func.func private @body(%mem: memref<?xi8>, %args: memref<?xi32>, %variant: index) {
  %precision = arith.constant {ipu.param = "precision"} 1 : index
  %partials = arith.constant {ipu.param = "partials"} 1 : index
  %keys = arith.constant {ipu.param = "keys"} 64 : index
  %queries = arith.constant {ipu.param = "queries"} 16 : index
  %width = arith.constant {ipu.param = "width"} 64 : index
  %causal = arith.constant {ipu.param = "causal"} false
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c7 = arith.constant 7 : index
  %c15 = arith.constant 15 : index
  %c16 = arith.constant 16 : index
  // The running maximum and sum are f32 (precision code 0).
  %f32 = arith.constant 0 : index
  %s0 = arith.constant 0 : i32
  %zero = arith.constant 0.0 : f32
  %neg_inf = arith.constant 0xFF800000 : f32
  %s_off = func.call @ipu_arg_index(%args, %c0) : (memref<?xi32>, index) -> index
  %p_off = func.call @ipu_arg_index(%args, %c1) : (memref<?xi32>, index) -> index
  %m_off = func.call @ipu_arg_index(%args, %c2) : (memref<?xi32>, index) -> index
  %l_off = func.call @ipu_arg_index(%args, %c3) : (memref<?xi32>, index) -> index
  %o_off = func.call @ipu_arg_index(%args, %c4) : (memref<?xi32>, index) -> index
  %bits = func.call @ipu_arg_i32(%args, %c5) : (memref<?xi32>, index) -> i32
  %scale = arith.bitcast %bits : i32 to f32
  %query_offset = func.call @ipu_arg_index(%args, %c6) : (memref<?xi32>, index) -> index
  %key_offset = func.call @ipu_arg_index(%args, %c7) : (memref<?xi32>, index) -> index
  %k15 = arith.addi %keys, %c15 : index
  %kg = arith.divui %k15, %c16 : index
  %kp = arith.muli %kg, %c16 : index
  %q15 = arith.addi %queries, %c15 : index
  %qg = arith.divui %q15, %c16 : index
  %qp = arith.muli %qg, %c16 : index
  scf.for %j = %c0 to %qp step %c1 {
    %global = arith.addi %query_offset, %j : index
    %visible = arith.addi %global, %c1 : index
    %any = arith.cmpi ugt, %visible, %key_offset : index
    %span = arith.subi %visible, %key_offset : index
    %span_or_0 = arith.select %any, %span, %c0 : index
    %causal_limit = arith.minui %span_or_0, %keys : index
    %key_limit = arith.select %causal, %causal_limit, %keys : index
    %is_query = arith.cmpi ult, %j, %queries : index
    %limit = arith.select %is_query, %key_limit, %c0 : index
    %live = arith.cmpi ugt, %limit, %c0 : index
    scf.if %live {
      %m_old = func.call @ipu_load(%mem, %m_off, %j, %f32, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
      %m_new = scf.for %r = %c0 to %limit step %c1 iter_args(%acc = %m_old) -> (f32) {
        %i = func.call @ipu_panel_index(%r, %j, %kp) : (index, index, index) -> index
        %s = func.call @ipu_load(%mem, %s_off, %i, %partials, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
        %x = arith.mulf %scale, %s : f32
        %mx = arith.maximumf %acc, %x : f32
        scf.yield %mx : f32
      }
      %was_empty = arith.cmpf oeq, %m_old, %neg_inf : f32
      %dm = arith.subf %m_old, %m_new : f32
      %em = math.exp %dm : f32
      %c = arith.select %was_empty, %zero, %em : f32
      %sum = scf.for %r = %c0 to %limit step %c1 iter_args(%acc = %zero) -> (f32) {
        %i = func.call @ipu_panel_index(%r, %j, %kp) : (index, index, index) -> index
        %s = func.call @ipu_load(%mem, %s_off, %i, %partials, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
        %x = arith.mulf %scale, %s : f32
        %d = arith.subf %x, %m_new : f32
        %e = math.exp %d : f32
        func.call @ipu_store(%mem, %p_off, %i, %precision, %s0, %e) : (memref<?xi8>, index, index, index, i32, f32) -> ()
        %rounded = func.call @ipu_load(%mem, %p_off, %i, %precision, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
        %next = arith.addf %acc, %rounded : f32
        scf.yield %next : f32
      }
      scf.for %r = %limit to %kp step %c1 {
        %i = func.call @ipu_panel_index(%r, %j, %kp) : (index, index, index) -> index
        func.call @ipu_store(%mem, %p_off, %i, %precision, %s0, %zero) : (memref<?xi8>, index, index, index, i32, f32) -> ()
      }
      %l_old = func.call @ipu_load(%mem, %l_off, %j, %f32, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
      %l_scaled = arith.mulf %l_old, %c : f32
      %l_new = arith.addf %l_scaled, %sum : f32
      func.call @ipu_store(%mem, %l_off, %j, %f32, %s0, %l_new) : (memref<?xi8>, index, index, index, i32, f32) -> ()
      scf.for %e = %c0 to %width step %c1 {
        %oi = func.call @ipu_panel_index(%e, %j, %width) : (index, index, index) -> index
        %o_old = func.call @ipu_load(%mem, %o_off, %oi, %partials, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
        %o_scaled = arith.mulf %o_old, %c : f32
        %o_new = arith.select %was_empty, %zero, %o_scaled : f32
        func.call @ipu_store(%mem, %o_off, %oi, %partials, %s0, %o_new) : (memref<?xi8>, index, index, index, i32, f32) -> ()
      }
      func.call @ipu_store(%mem, %m_off, %j, %f32, %s0, %m_new) : (memref<?xi8>, index, index, index, i32, f32) -> ()
    } else {
      scf.for %r = %c0 to %kp step %c1 {
        %i = func.call @ipu_panel_index(%r, %j, %kp) : (index, index, index) -> index
        func.call @ipu_store(%mem, %p_off, %i, %precision, %s0, %zero) : (memref<?xi8>, index, index, index, i32, f32) -> ()
      }
    }
  }
  return
}
