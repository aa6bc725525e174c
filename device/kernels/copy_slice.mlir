// Copies slice n of a store: `bytes` bytes from store + min(n, slices - 1) * stride to dst,
// where n is the u32 at counter_offset (a repeat's iteration counter). The clamp keeps the
// source inside the store whatever the counter holds. Store and dst must not overlap.
//
// Run-time args: [store_offset, dst_offset, counter_offset].

// ipu.include "common.mlir"

func.func private @body(%mem: memref<?xi8>, %args: memref<?xi32>, %variant: index) {
  %bytes = arith.constant {ipu.param = "bytes"} 64 : index
  %stride = arith.constant {ipu.param = "stride"} 64 : index
  %slices = arith.constant {ipu.param = "slices"} 2 : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %store = func.call @ipu_arg_index(%args, %c0) : (memref<?xi32>, index) -> index
  %dst = func.call @ipu_arg_index(%args, %c1) : (memref<?xi32>, index) -> index
  %at = func.call @ipu_arg_index(%args, %c2) : (memref<?xi32>, index) -> index
  %view = memref.view %mem[%at][] : memref<?xi8> to memref<i32>
  %raw = memref.load %view[] : memref<i32>
  %n = arith.index_castui %raw : i32 to index
  %last = arith.subi %slices, %c1 : index
  %slice = arith.minui %n, %last : index
  %skip = arith.muli %slice, %stride : index
  %src = arith.addi %store, %skip : index
  scf.for %i = %c0 to %bytes step %c1 {
    %from = arith.addi %src, %i : index
    %to = arith.addi %dst, %i : index
    %x = memref.load %mem[%from] : memref<?xi8>
    memref.store %x, %mem[%to] : memref<?xi8>
  }
  return
}
