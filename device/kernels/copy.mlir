// Copies `bytes` bytes from src to dst (the ranges must not overlap).
//
// Run-time args: [src_offset, dst_offset].

func.func private @body(%mem: memref<?xi8>, %args: memref<?xi32>, %variant: index) {
  %bytes = arith.constant {ipu.param = "bytes"} 64 : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %raw_src = memref.load %args[%c0] : memref<?xi32>
  %raw_dst = memref.load %args[%c1] : memref<?xi32>
  %src = arith.index_castui %raw_src : i32 to index
  %dst = arith.index_castui %raw_dst : i32 to index
  scf.for %i = %c0 to %bytes step %c1 {
    %from = arith.addi %src, %i : index
    %to = arith.addi %dst, %i : index
    %x = memref.load %mem[%from] : memref<?xi8>
    memref.store %x, %mem[%to] : memref<?xi8>
  }
  return
}
