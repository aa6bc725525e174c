// out[i] = in[i] * s for i < elements, elementwise, f16 or f32. s is the f32 whose bit pattern
// is the run-time argument value_bits (any f32: negative, zero, infinite or NaN).
// Each element is widened exactly to f32, multiplied by s in f32 (one f32 rounding, to nearest
// even) and the f32 product is rounded once to the output precision: round to nearest even,
// saturating (a finite f16 product beyond 65504 becomes +-65504; see common.mlir). For f16 that
// is the f32 product rounded to f16, which is what a host computing in f32 gets.
// In place (src == dst) is allowed: each element is read before it is written.
//
// Run-time args: [src_offset, dst_offset, value_bits].

// ipu.include "common.mlir"

func.func private @body(%mem: memref<?xi8>, %args: memref<?xi32>, %variant: index) {
  %precision = arith.constant {ipu.param = "precision"} 1 : index
  %n = arith.constant {ipu.param = "elements"} 64 : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %s0 = arith.constant 0 : i32
  %src = func.call @ipu_arg_index(%args, %c0) : (memref<?xi32>, index) -> index
  %dst = func.call @ipu_arg_index(%args, %c1) : (memref<?xi32>, index) -> index
  %bits = func.call @ipu_arg_i32(%args, %c2) : (memref<?xi32>, index) -> i32
  %s = arith.bitcast %bits : i32 to f32
  scf.for %i = %c0 to %n step %c1 {
    %x = func.call @ipu_load(%mem, %src, %i, %precision, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
    %y = arith.mulf %x, %s : f32
    func.call @ipu_store(%mem, %dst, %i, %precision, %s0, %y) : (memref<?xi8>, index, index, index, i32, f32) -> ()
  }
  return
}
