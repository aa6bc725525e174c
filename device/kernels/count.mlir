// Advances a repeat's iteration counter: the u32 at counter_offset plus one (wrapping).
//
// Run-time args: [counter_offset].

// ipu.include "common.mlir"

func.func private @body(%mem: memref<?xi8>, %args: memref<?xi32>, %variant: index) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1 : i32
  %at = func.call @ipu_arg_index(%args, %c0) : (memref<?xi32>, index) -> index
  %view = memref.view %mem[%at][] : memref<?xi8> to memref<i32>
  %n = memref.load %view[] : memref<i32>
  %next = arith.addi %n, %one : i32
  memref.store %next, %view[] : memref<i32>
  return
}
