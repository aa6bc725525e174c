// GEMM on the AMP: C[rows x c] (+)= A[rows x k] * B[k x c] for one K block.
//
// Layouts (all three are 16-column panel orders, see @ipu_panel_index in common.mlir):
//   A, amp_left:   (r, kk) at ((kk / 16) * rows + r) * 16 + kk % 16  -- K in groups of 16
//      or, with a_row_major (the gemm_..._arow kernels): (r, kk) at r * k + kk
//   B, amp_right:  (kk, j) at ((j / 16) * k + kk) * 16 + j % 16      -- 16-column groups,
//                                                                        K-major inside a group
//   C, amp_output: (r, j)  at ((j / 16) * rows + r) * 16 + j % 16    -- 16-column groups
//      or, with c_row_major (the gemm_..._crow kernels): (r, j) at r * c + j
// `rows` is the row count of the entry point (one entry per row count); A and C hold exactly
// `rows` rows (pad with rearrange first). k and c are multiples of 16.
//
// Precision: inputs (f16, F143, F152 or f32) are widened exactly to f32, FP8 inputs times
// 2^scale. Inside the K block the products are summed in f32 with fused multiply-adds in
// order kk = 0, 1, ..., k-1 (for f16 and FP8 inputs every product is exact in f32, so only the
// additions round). At the block end the f32 sum is added to the widened old partial (when
// accumulating) and rounded once to the partials precision (f16 for f16/FP8 inputs, f32 for
// f32), round to nearest even, saturating. So partials are f16 between K blocks and f32 inside.
// The memory class of B changes only the cost (ld128 feed), not the numbers.
//
// Run-time args: [a_offset, b_offset, c_offset, row_count_index, a_scale_exp, b_scale_exp].

// ipu.include "common.mlir"

// Stores one 16-wide output vector at row r, column group g (C in amp_output order, or
// row-major with %cols columns when %row_major is set).
func.func private @gemm_store(%mem: memref<?xi8>, %c_off: index, %rows: index, %g: index, %r: index, %sum: vector<16xf32>, %out: index, %accumulate: i1, %row_major: i1, %cols: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %s0 = arith.constant 0 : i32
  %g_rows = arith.muli %g, %rows : index
  %row = arith.addi %g_rows, %r : index
  %panel_base = arith.muli %row, %c16 : index
  %r_cols = arith.muli %r, %cols : index
  %g16 = arith.muli %g, %c16 : index
  %plain_base = arith.addi %r_cols, %g16 : index
  %base = arith.select %row_major, %plain_base, %panel_base : index
  scf.for %j = %c0 to %c16 step %c1 {
    %x = vector.extract %sum[%j] : f32 from vector<16xf32>
    %idx = arith.addi %base, %j : index
    %v = scf.if %accumulate -> f32 {
      %old = func.call @ipu_load(%mem, %c_off, %idx, %out, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
      %new = arith.addf %old, %x : f32
      scf.yield %new : f32
    } else {
      scf.yield %x : f32
    }
    func.call @ipu_store(%mem, %c_off, %idx, %out, %s0, %v) : (memref<?xi8>, index, index, index, i32, f32) -> ()
  }
  return
}

// Widens rows [r0, r0 + n) of A into scratch rows 0..n (row-major, k per row); A is in
// amp_left order, or row-major (k per row) when %row_major is set.
func.func private @gemm_widen_a(%mem: memref<?xi8>, %a_off: index, %rows: index, %r0: index, %n: index, %k: index, %in: index, %scale: i32, %scratch: memref<?xf32>, %row_major: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %r = arith.addi %r0, %i : index
    %row_base = arith.muli %i, %k : index
    %a_row = arith.muli %r, %k : index
    scf.for %kk = %c0 to %k step %c1 {
      %panel = func.call @ipu_panel_index(%r, %kk, %rows) : (index, index, index) -> index
      %plain = arith.addi %a_row, %kk : index
      %src = arith.select %row_major, %plain, %panel : index
      %v = func.call @ipu_load(%mem, %a_off, %src, %in, %scale) : (memref<?xi8>, index, index, index, i32) -> f32
      %dst = arith.addi %row_base, %kk : index
      memref.store %v, %scratch[%dst] : memref<?xf32>
    }
  }
  return
}

func.func private @body(%mem: memref<?xi8>, %args: memref<?xi32>, %rows: index) {
  %k = arith.constant {ipu.param = "k"} 64 : index
  %c = arith.constant {ipu.param = "c"} 64 : index
  %in = arith.constant {ipu.param = "input_precision"} 1 : index
  %out = arith.constant {ipu.param = "partials_precision"} 1 : index
  %accumulate = arith.constant {ipu.param = "accumulate"} false
  %row_major = arith.constant {ipu.param = "a_row_major"} false
  %c_row_major = arith.constant {ipu.param = "c_row_major"} false
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant dense<0.0> : vector<16xf32>
  %a_off = func.call @ipu_arg_index(%args, %c0) : (memref<?xi32>, index) -> index
  %b_off = func.call @ipu_arg_index(%args, %c1) : (memref<?xi32>, index) -> index
  %c_off = func.call @ipu_arg_index(%args, %c2) : (memref<?xi32>, index) -> index
  %a_scale = func.call @ipu_arg_i32(%args, %c4) : (memref<?xi32>, index) -> i32
  %b_scale = func.call @ipu_arg_i32(%args, %c5) : (memref<?xi32>, index) -> i32

  // B is widened once per call into f32 scratch in its own amp_right order, so the inner loop
  // is a plain f32 broadcast-FMA over 16-wide vectors.
  %kc = arith.muli %k, %c : index
  %b32 = memref.alloca(%kc) : memref<?xf32>
  scf.for %i = %c0 to %kc step %c1 {
    %v = func.call @ipu_load(%mem, %b_off, %i, %in, %b_scale) : (memref<?xi8>, index, index, index, i32) -> f32
    memref.store %v, %b32[%i] : memref<?xf32>
  }
  %groups = arith.divui %c, %c16 : index
  %k4 = arith.muli %k, %c4 : index
  %a32 = memref.alloca(%k4) : memref<?xf32>

  // Four rows at a time: four independent FMA chains per column group hide FMA latency.
  %quads = arith.divui %rows, %c4 : index
  %rows4 = arith.muli %quads, %c4 : index
  scf.for %r0 = %c0 to %rows4 step %c4 {
    func.call @gemm_widen_a(%mem, %a_off, %rows, %r0, %c4, %k, %in, %a_scale, %a32, %row_major) : (memref<?xi8>, index, index, index, index, index, index, i32, memref<?xf32>, i1) -> ()
    scf.for %g = %c0 to %groups step %c1 {
      %gk = arith.muli %g, %k : index
      %s:4 = scf.for %kk = %c0 to %k step %c1 iter_args(%x0 = %zero, %x1 = %zero, %x2 = %zero, %x3 = %zero) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
        %brow = arith.addi %gk, %kk : index
        %bidx = arith.muli %brow, %c16 : index
        %bv = vector.load %b32[%bidx] : memref<?xf32>, vector<16xf32>
        %i1 = arith.addi %kk, %k : index
        %i2 = arith.addi %i1, %k : index
        %i3 = arith.addi %i2, %k : index
        %a0 = memref.load %a32[%kk] : memref<?xf32>
        %a1 = memref.load %a32[%i1] : memref<?xf32>
        %a2 = memref.load %a32[%i2] : memref<?xf32>
        %a3 = memref.load %a32[%i3] : memref<?xf32>
        %v0 = vector.broadcast %a0 : f32 to vector<16xf32>
        %v1 = vector.broadcast %a1 : f32 to vector<16xf32>
        %v2 = vector.broadcast %a2 : f32 to vector<16xf32>
        %v3 = vector.broadcast %a3 : f32 to vector<16xf32>
        %y0 = vector.fma %v0, %bv, %x0 : vector<16xf32>
        %y1 = vector.fma %v1, %bv, %x1 : vector<16xf32>
        %y2 = vector.fma %v2, %bv, %x2 : vector<16xf32>
        %y3 = vector.fma %v3, %bv, %x3 : vector<16xf32>
        scf.yield %y0, %y1, %y2, %y3 : vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>
      }
      %r1 = arith.addi %r0, %c1 : index
      %r2 = arith.addi %r1, %c1 : index
      %r3 = arith.addi %r2, %c1 : index
      func.call @gemm_store(%mem, %c_off, %rows, %g, %r0, %s#0, %out, %accumulate, %c_row_major, %c) : (memref<?xi8>, index, index, index, index, vector<16xf32>, index, i1, i1, index) -> ()
      func.call @gemm_store(%mem, %c_off, %rows, %g, %r1, %s#1, %out, %accumulate, %c_row_major, %c) : (memref<?xi8>, index, index, index, index, vector<16xf32>, index, i1, i1, index) -> ()
      func.call @gemm_store(%mem, %c_off, %rows, %g, %r2, %s#2, %out, %accumulate, %c_row_major, %c) : (memref<?xi8>, index, index, index, index, vector<16xf32>, index, i1, i1, index) -> ()
      func.call @gemm_store(%mem, %c_off, %rows, %g, %r3, %s#3, %out, %accumulate, %c_row_major, %c) : (memref<?xi8>, index, index, index, index, vector<16xf32>, index, i1, i1, index) -> ()
    }
  }
  // Remaining rows one at a time.
  scf.for %r = %rows4 to %rows step %c1 {
    func.call @gemm_widen_a(%mem, %a_off, %rows, %r, %c1, %k, %in, %a_scale, %a32, %row_major) : (memref<?xi8>, index, index, index, index, index, index, i32, memref<?xf32>, i1) -> ()
    scf.for %g = %c0 to %groups step %c1 {
      %gk = arith.muli %g, %k : index
      %s = scf.for %kk = %c0 to %k step %c1 iter_args(%x0 = %zero) -> (vector<16xf32>) {
        %brow = arith.addi %gk, %kk : index
        %bidx = arith.muli %brow, %c16 : index
        %bv = vector.load %b32[%bidx] : memref<?xf32>, vector<16xf32>
        %a0 = memref.load %a32[%kk] : memref<?xf32>
        %v0 = vector.broadcast %a0 : f32 to vector<16xf32>
        %y0 = vector.fma %v0, %bv, %x0 : vector<16xf32>
        scf.yield %y0 : vector<16xf32>
      }
      func.call @gemm_store(%mem, %c_off, %rows, %g, %r, %s, %out, %accumulate, %c_row_major, %c) : (memref<?xi8>, index, index, index, index, vector<16xf32>, index, i1, i1, index) -> ()
    }
  }
  return
}
