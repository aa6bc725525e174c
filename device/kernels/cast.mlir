// Elementwise precision conversion: dst[i] = convert(src[i]) for i < elements.
//
// Precisions f32, f16, F143, F152 in any pair. An FP8 side carries the power-of-two scale
// (value = code * 2^scale): FP8 sources are decoded times 2^scale, FP8 destinations encode
// value * 2^-scale; when both sides are FP8 both use the same scale. The value is widened
// exactly to f32 and rounded once to the destination: round to nearest even, saturating
// (see common.mlir).
//
// Run-time args: [src_offset, dst_offset, scale_exp].

// ipu.include "common.mlir"

func.func private @body(%mem: memref<?xi8>, %args: memref<?xi32>, %variant: index) {
  %n = arith.constant {ipu.param = "elements"} 64 : index
  %from = arith.constant {ipu.param = "from_precision"} 1 : index
  %to = arith.constant {ipu.param = "to_precision"} 2 : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %src = func.call @ipu_arg_index(%args, %c0) : (memref<?xi32>, index) -> index
  %dst = func.call @ipu_arg_index(%args, %c1) : (memref<?xi32>, index) -> index
  %scale = func.call @ipu_arg_i32(%args, %c2) : (memref<?xi32>, index) -> i32
  scf.for %i = %c0 to %n step %c1 {
    %v = func.call @ipu_load(%mem, %src, %i, %from, %scale) : (memref<?xi8>, index, index, index, i32) -> f32
    func.call @ipu_store(%mem, %dst, %i, %to, %scale, %v) : (memref<?xi8>, index, index, index, i32, f32) -> ()
  }
  return
}
