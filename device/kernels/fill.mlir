// Writes `elements` copies of one element bit pattern: the low 8, 16 or 32 bits of value_bits
// (for the element size of `precision`) are stored unchanged, so any code (FP8, f16 NaN) can
// be filled.
//
// Run-time args: [dst_offset, value_bits].

// ipu.include "common.mlir"

func.func private @body(%mem: memref<?xi8>, %args: memref<?xi32>, %variant: index) {
  %precision = arith.constant {ipu.param = "precision"} 1 : index
  %n = arith.constant {ipu.param = "elements"} 64 : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %dst = func.call @ipu_arg_index(%args, %c0) : (memref<?xi32>, index) -> index
  %bits = func.call @ipu_arg_i32(%args, %c1) : (memref<?xi32>, index) -> i32
  %bytes = func.call @ipu_bytes(%precision) : (index) -> index
  scf.for %i = %c0 to %n step %c1 {
    %rel = arith.muli %i, %bytes : index
    %at = arith.addi %dst, %rel : index
    scf.index_switch %bytes
    case 4 {
      %view = memref.view %mem[%at][] : memref<?xi8> to memref<i32>
      memref.store %bits, %view[] : memref<i32>
      scf.yield
    }
    case 2 {
      %h = arith.trunci %bits : i32 to i16
      %view = memref.view %mem[%at][] : memref<?xi8> to memref<i16>
      memref.store %h, %view[] : memref<i16>
      scf.yield
    }
    default {
      %b = arith.trunci %bits : i32 to i8
      memref.store %b, %mem[%at] : memref<?xi8>
      scf.yield
    }
  }
  return
}
