// out[r] = combiner over row r of a row-major `rows x cols` block: 0 add, 1 mul, 2 max, 3 min
// (max and min propagate NaN, like arith.maximumf). Accumulated in f32 in column order from
// the first element and rounded once to the precision (nearest even, saturating; common.mlir).
// f16 or f32.
//
// Run-time args: [src_offset, dst_offset].

// ipu.include "common.mlir"

func.func private @body(%mem: memref<?xi8>, %args: memref<?xi32>, %variant: index) {
  %precision = arith.constant {ipu.param = "precision"} 1 : index
  %combiner = arith.constant {ipu.param = "combiner"} 0 : index
  %rows = arith.constant {ipu.param = "rows"} 4 : index
  %cols = arith.constant {ipu.param = "cols"} 64 : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s0 = arith.constant 0 : i32
  %src = func.call @ipu_arg_index(%args, %c0) : (memref<?xi32>, index) -> index
  %dst = func.call @ipu_arg_index(%args, %c1) : (memref<?xi32>, index) -> index
  scf.for %r = %c0 to %rows step %c1 {
    %row = arith.muli %r, %cols : index
    %first = func.call @ipu_load(%mem, %src, %row, %precision, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
    %total = scf.for %c = %c1 to %cols step %c1 iter_args(%acc = %first) -> (f32) {
      %i = arith.addi %row, %c : index
      %x = func.call @ipu_load(%mem, %src, %i, %precision, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
      %next = scf.index_switch %combiner -> f32
      case 0 {
        %s = arith.addf %acc, %x : f32
        scf.yield %s : f32
      }
      case 1 {
        %p = arith.mulf %acc, %x : f32
        scf.yield %p : f32
      }
      case 2 {
        %m = arith.maximumf %acc, %x : f32
        scf.yield %m : f32
      }
      default {
        %m = arith.minimumf %acc, %x : f32
        scf.yield %m : f32
      }
      scf.yield %next : f32
    }
    func.call @ipu_store(%mem, %dst, %r, %precision, %s0, %total) : (memref<?xi8>, index, index, index, i32, f32) -> ()
  }
  return
}
