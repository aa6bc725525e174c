// Final normalization of blocked (flash) attention: out[r][e] = o[r][e] / l[r] for `rows`
// rows of `width`, o f32 (`rows x width`, row-major, the unnormalized output of
// attention_block.mlir) and l f32 (`rows`, its row sums). One f32 division, then the quotient
// is rounded once to the output precision (f16 or f32; nearest even, saturating, see
// common.mlir). A row whose l is 0 (no visible key at all) is written as 0.
// dst must not overlap o or l.
//
// Run-time args: [o_offset, l_offset, dst_offset].

// ipu.include "common.mlir"

func.func private @body(%mem: memref<?xi8>, %args: memref<?xi32>, %variant: index) {
  %precision = arith.constant {ipu.param = "precision"} 1 : index
  %rows = arith.constant {ipu.param = "rows"} 4 : index
  %width = arith.constant {ipu.param = "width"} 64 : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  // o and l are f32 (precision code 0).
  %f32 = arith.constant 0 : index
  %s0 = arith.constant 0 : i32
  %zero = arith.constant 0.0 : f32
  %o_off = func.call @ipu_arg_index(%args, %c0) : (memref<?xi32>, index) -> index
  %l_off = func.call @ipu_arg_index(%args, %c1) : (memref<?xi32>, index) -> index
  %dst = func.call @ipu_arg_index(%args, %c2) : (memref<?xi32>, index) -> index
  scf.for %r = %c0 to %rows step %c1 {
    %l = func.call @ipu_load(%mem, %l_off, %r, %f32, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
    %empty = arith.cmpf oeq, %l, %zero : f32
    %base = arith.muli %r, %width : index
    scf.for %e = %c0 to %width step %c1 {
      %i = arith.addi %base, %e : index
      %o = func.call @ipu_load(%mem, %o_off, %i, %f32, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
      %q = arith.divf %o, %l : f32
      %y = arith.select %empty, %zero, %q : f32
      func.call @ipu_store(%mem, %dst, %i, %precision, %s0, %y) : (memref<?xi8>, index, index, index, i32, f32) -> ()
    }
  }
  return
}
