// Row softmax over `cols`, row-major, f16 or f32, computed in f32.
// For row r the live columns are j < limit, limit = cols, or when causal
// limit = min(cols, row_offset + r + 1) (row_offset is the global index of row 0).
//   m = max_j x[j];  s = sum_j exp(x[j] - m) (in order j = 0, 1, ...);  y[j] = exp(x[j] - m) / s
// Masked columns are written as 0. Each y is rounded once (nearest even). exp is libm expf.
// In place (src == dst) is allowed.
//
// Run-time args: [src_offset, dst_offset, row_offset].

// ipu.include "common.mlir"

func.func private @body(%mem: memref<?xi8>, %args: memref<?xi32>, %variant: index) {
  %precision = arith.constant {ipu.param = "precision"} 1 : index
  %rows = arith.constant {ipu.param = "rows"} 4 : index
  %cols = arith.constant {ipu.param = "cols"} 64 : index
  %causal = arith.constant {ipu.param = "causal"} false
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %s0 = arith.constant 0 : i32
  %zero = arith.constant 0.0 : f32
  %neg_inf = arith.constant 0xFF800000 : f32
  %src = func.call @ipu_arg_index(%args, %c0) : (memref<?xi32>, index) -> index
  %dst = func.call @ipu_arg_index(%args, %c1) : (memref<?xi32>, index) -> index
  %row_offset = func.call @ipu_arg_index(%args, %c2) : (memref<?xi32>, index) -> index
  scf.for %r = %c0 to %rows step %c1 {
    %base = arith.muli %r, %cols : index
    %global = arith.addi %row_offset, %r : index
    %visible = arith.addi %global, %c1 : index
    %causal_limit = arith.minui %visible, %cols : index
    %limit = arith.select %causal, %causal_limit, %cols : index
    %m = scf.for %j = %c0 to %limit step %c1 iter_args(%acc = %neg_inf) -> (f32) {
      %i = arith.addi %base, %j : index
      %x = func.call @ipu_load(%mem, %src, %i, %precision, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
      %mx = arith.maximumf %acc, %x : f32
      scf.yield %mx : f32
    }
    %s = scf.for %j = %c0 to %limit step %c1 iter_args(%acc = %zero) -> (f32) {
      %i = arith.addi %base, %j : index
      %x = func.call @ipu_load(%mem, %src, %i, %precision, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
      %d = arith.subf %x, %m : f32
      %e = math.exp %d : f32
      %sum = arith.addf %acc, %e : f32
      scf.yield %sum : f32
    }
    scf.for %j = %c0 to %cols step %c1 {
      %i = arith.addi %base, %j : index
      %live = arith.cmpi ult, %j, %limit : index
      %y = scf.if %live -> f32 {
        %x = func.call @ipu_load(%mem, %src, %i, %precision, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
        %d = arith.subf %x, %m : f32
        %e = math.exp %d : f32
        %q = arith.divf %e, %s : f32
        scf.yield %q : f32
      } else {
        scf.yield %zero : f32
      }
      func.call @ipu_store(%mem, %dst, %i, %precision, %s0, %y) : (memref<?xi8>, index, index, index, i32, f32) -> ()
    }
  }
  return
}
