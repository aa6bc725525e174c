// out[e] = sum over p of partials[p * elements + e], for `partials` contiguous blocks.
// Partials f16 or f32; the sum is formed in f32 in order p = 0, 1, ... and rounded once to the
// output precision (f16 or f32; nearest even, saturating).
//
// Run-time args: [partials_offset, dst_offset].

// ipu.include "common.mlir"

func.func private @body(%mem: memref<?xi8>, %args: memref<?xi32>, %variant: index) {
  %partials_precision = arith.constant {ipu.param = "partials_precision"} 1 : index
  %output = arith.constant {ipu.param = "output_precision"} 1 : index
  %n = arith.constant {ipu.param = "elements"} 64 : index
  %partials = arith.constant {ipu.param = "partials"} 2 : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s0 = arith.constant 0 : i32
  %zero = arith.constant 0.0 : f32
  %src = func.call @ipu_arg_index(%args, %c0) : (memref<?xi32>, index) -> index
  %dst = func.call @ipu_arg_index(%args, %c1) : (memref<?xi32>, index) -> index
  scf.for %e = %c0 to %n step %c1 {
    %sum = scf.for %p = %c0 to %partials step %c1 iter_args(%acc = %zero) -> (f32) {
      %block = arith.muli %p, %n : index
      %i = arith.addi %block, %e : index
      %x = func.call @ipu_load(%mem, %src, %i, %partials_precision, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
      %a = arith.addf %acc, %x : f32
      scf.yield %a : f32
    }
    func.call @ipu_store(%mem, %dst, %e, %output, %s0, %sum) : (memref<?xi8>, index, index, index, i32, f32) -> ()
  }
  return
}
