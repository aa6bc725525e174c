// One key block of blocked (flash) attention for `rows` queries: the online-softmax update of
// the running row maximum m and row sum l (f32, `rows` each) and of the unnormalized output o
// (f32, `rows x width`, row-major) with this block's scores s (`rows x keys`, f16 or f32,
// row-major, the unscaled q.k) and values v (`keys x width`, f16 or f32, row-major).
// scale is the f32 whose bits are the run-time argument scale_bits.
// Key j of the block is visible to row r unless causal and key_offset + j > row_offset + r,
// so the visible keys are j < limit, limit = keys, or when causal
// limit = min(keys, row_offset + r + 1 - key_offset) (0 when row_offset + r < key_offset).
// Per row r with limit > 0, all in f32, sums in order j = 0, 1, ...:
//   x[j] = scale * s[r][j];  m' = max(m[r], max_j x[j]);  c = exp(m[r] - m') (c = 0 when m[r] = -inf)
//   p[j] = exp(x[j] - m');  l[r] = l[r] * c + sum_j p[j];
//   o[r][e] = o[r][e] * c + sum_j p[j] * v[j][e];  m[r] = m'
// Separate multiplies and adds (no fused multiply-add); exp is libm expf (as in softmax.mlir).
// A row with no visible key (limit = 0) is left unchanged. The caller initializes m = -inf,
// l = 0, o = 0. m, l and o are read and written in place; none may overlap s, v or each other.
// p is kept in an f32 stack buffer of `keys` elements.
//
// Run-time args: [s_offset, v_offset, m_offset, l_offset, o_offset, scale_bits, row_offset,
//                 key_offset].

// ipu.include "common.mlir"

func.func private @body(%mem: memref<?xi8>, %args: memref<?xi32>, %variant: index) {
  %precision = arith.constant {ipu.param = "precision"} 1 : index
  %rows = arith.constant {ipu.param = "rows"} 4 : index
  %keys = arith.constant {ipu.param = "keys"} 64 : index
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
  // The running state is f32 (precision code 0).
  %f32 = arith.constant 0 : index
  %s0 = arith.constant 0 : i32
  %zero = arith.constant 0.0 : f32
  %neg_inf = arith.constant 0xFF800000 : f32
  %s_off = func.call @ipu_arg_index(%args, %c0) : (memref<?xi32>, index) -> index
  %v_off = func.call @ipu_arg_index(%args, %c1) : (memref<?xi32>, index) -> index
  %m_off = func.call @ipu_arg_index(%args, %c2) : (memref<?xi32>, index) -> index
  %l_off = func.call @ipu_arg_index(%args, %c3) : (memref<?xi32>, index) -> index
  %o_off = func.call @ipu_arg_index(%args, %c4) : (memref<?xi32>, index) -> index
  %bits = func.call @ipu_arg_i32(%args, %c5) : (memref<?xi32>, index) -> i32
  %scale = arith.bitcast %bits : i32 to f32
  %row_offset = func.call @ipu_arg_index(%args, %c6) : (memref<?xi32>, index) -> index
  %key_offset = func.call @ipu_arg_index(%args, %c7) : (memref<?xi32>, index) -> index
  %p = memref.alloca(%keys) : memref<?xf32>
  scf.for %r = %c0 to %rows step %c1 {
    %srow = arith.muli %r, %keys : index
    %orow = arith.muli %r, %width : index
    %global = arith.addi %row_offset, %r : index
    %visible = arith.addi %global, %c1 : index
    %any = arith.cmpi ugt, %visible, %key_offset : index
    %span = arith.subi %visible, %key_offset : index
    %span_or_0 = arith.select %any, %span, %c0 : index
    %causal_limit = arith.minui %span_or_0, %keys : index
    %limit = arith.select %causal, %causal_limit, %keys : index
    %live = arith.cmpi ugt, %limit, %c0 : index
    scf.if %live {
      %m_old = func.call @ipu_load(%mem, %m_off, %r, %f32, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
      %m_new = scf.for %j = %c0 to %limit step %c1 iter_args(%acc = %m_old) -> (f32) {
        %i = arith.addi %srow, %j : index
        %s = func.call @ipu_load(%mem, %s_off, %i, %precision, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
        %x = arith.mulf %scale, %s : f32
        %mx = arith.maximumf %acc, %x : f32
        scf.yield %mx : f32
      }
      %was_empty = arith.cmpf oeq, %m_old, %neg_inf : f32
      %dm = arith.subf %m_old, %m_new : f32
      %em = math.exp %dm : f32
      %c = arith.select %was_empty, %zero, %em : f32
      %sum = scf.for %j = %c0 to %limit step %c1 iter_args(%acc = %zero) -> (f32) {
        %i = arith.addi %srow, %j : index
        %s = func.call @ipu_load(%mem, %s_off, %i, %precision, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
        %x = arith.mulf %scale, %s : f32
        %d = arith.subf %x, %m_new : f32
        %e = math.exp %d : f32
        memref.store %e, %p[%j] : memref<?xf32>
        %next = arith.addf %acc, %e : f32
        scf.yield %next : f32
      }
      %l_old = func.call @ipu_load(%mem, %l_off, %r, %f32, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
      %l_scaled = arith.mulf %l_old, %c : f32
      %l_new = arith.addf %l_scaled, %sum : f32
      func.call @ipu_store(%mem, %l_off, %r, %f32, %s0, %l_new) : (memref<?xi8>, index, index, index, i32, f32) -> ()
      scf.for %e = %c0 to %width step %c1 {
        %pv = scf.for %j = %c0 to %limit step %c1 iter_args(%acc = %zero) -> (f32) {
          %pj = memref.load %p[%j] : memref<?xf32>
          %vrow = arith.muli %j, %width : index
          %vi = arith.addi %vrow, %e : index
          %v = func.call @ipu_load(%mem, %v_off, %vi, %precision, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
          %prod = arith.mulf %pj, %v : f32
          %next = arith.addf %acc, %prod : f32
          scf.yield %next : f32
        }
        %oi = arith.addi %orow, %e : index
        %o_old = func.call @ipu_load(%mem, %o_off, %oi, %f32, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
        %o_scaled = arith.mulf %o_old, %c : f32
        %o_new = arith.addf %o_scaled, %pv : f32
        func.call @ipu_store(%mem, %o_off, %oi, %f32, %s0, %o_new) : (memref<?xi8>, index, index, index, i32, f32) -> ()
      }
      func.call @ipu_store(%mem, %m_off, %r, %f32, %s0, %m_new) : (memref<?xi8>, index, index, index, i32, f32) -> ()
    }
  }
  return
}
