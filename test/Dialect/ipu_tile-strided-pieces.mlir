// Strided host pieces in the ipu_tile IR. A piece is `bytes` contiguous bytes of a buffer on
// a tile; a strided one gathers them from `runs` equal runs of the tensor, run r from tensor
// byte offset + r * stride, so that the host streams an operand straight into the order a
// tile uses it in. A stream with a strided piece writes one row per piece, (tile, buffer,
// offset, tensor offset, bytes) for a contiguous piece and (..., runs, stride) for a strided
// one; a stream of contiguous pieces keeps the one dense array of rows of 5. Stock
// mlir-opt-22 verifies both forms with the IRDL file, and a pass that reads and rewrites the
// program keeps every row.
// RUN: ipu-opt %s | FileCheck %s
// RUN: ipu-opt %s --mlir-print-op-generic | %mlir_opt --irdl-file=%repo/dialects/irdl/ipu_tile.irdl.mlir --verify-each | FileCheck %s
// RUN: %mlir_opt %s --irdl-file=%repo/dialects/irdl/ipu_tile.irdl.mlir | ipu-opt | FileCheck %s
// RUN: ipu-opt %s -p 'builtin.module(ipu-place-storage)' | FileCheck %s
// RUN: ipu-opt %s -p 'builtin.module(ipu-place-storage)' | ipu-opt -p 'builtin.module(ipu-place-storage)' | FileCheck %s

// arg0 (4 x 8 f32) is gathered in column blocks: tile 0 holds columns 0..4 as 4 runs of 16 B
// (one per row, a row is 32 B apart), tile 1 columns 4..8. arg1 mixes a contiguous piece
// (5 entries) with a strided one in the list form. result0 is read back contiguously.
// CHECK-LABEL: module @blocks.tiles
// CHECK: "ipu_tile.stream"() {name = "arg0", pieces = [array<i64: 0, 0, 0, 0, 64, 4, 32>, array<i64: 1, 0, 0, 16, 64, 4, 32>], precision = "f32", role = "input", shape = array<i64: 4, 8>} : () -> ()
// CHECK-NEXT: "ipu_tile.stream"() {name = "arg1", pieces = [array<i64: 0, 1, 0, 0, 32>, array<i64: 1, 1, 0, 32, 32, 2, 16>], precision = "f32", role = "input", shape = array<i64: 16>} : () -> ()
// CHECK-NEXT: "ipu_tile.stream"() {name = "result0", pieces = array<i64: 0, 0, 0, 0, 64, 1, 0, 0, 64, 64>, precision = "f32", role = "output", shape = array<i64: 2, 4, 4>} : () -> ()

module {
  module @blocks.tiles attributes {ipu_tile.function = "blocks", ipu_tile.target = "c600", ipu_tile.tiles = 1472 : i64} {
    "ipu_tile.buffer"() {bytes = 64 : i64, class = "standard", id = 0 : i64, live = array<i64: 0, 1>, name = "x", tiles = array<i32: 0, 1>} : () -> ()
    "ipu_tile.buffer"() {bytes = 32 : i64, class = "standard", id = 1 : i64, live = array<i64: 0, 1>, name = "w", tiles = array<i32: 0, 1>} : () -> ()
    "ipu_tile.stream"() {name = "arg0", pieces = [array<i64: 0, 0, 0, 0, 64, 4, 32>, array<i64: 1, 0, 0, 16, 64, 4, 32>], precision = "f32", role = "input", shape = array<i64: 4, 8>} : () -> ()
    "ipu_tile.stream"() {name = "arg1", pieces = [array<i64: 0, 1, 0, 0, 32>, array<i64: 1, 1, 0, 32, 32, 2, 16>], precision = "f32", role = "input", shape = array<i64: 16>} : () -> ()
    "ipu_tile.stream"() {name = "result0", pieces = array<i64: 0, 0, 0, 0, 64, 1, 0, 0, 64, 64>, precision = "f32", role = "output", shape = array<i64: 2, 4, 4>} : () -> ()
    "ipu_tile.host_write"() {program = "run", stream = "arg0"} : () -> ()
    "ipu_tile.host_write"() {program = "run", stream = "arg1"} : () -> ()
    "ipu_tile.host_read"() {program = "run", stream = "result0"} : () -> ()
  }
}
