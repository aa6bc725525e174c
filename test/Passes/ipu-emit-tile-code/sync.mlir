// A bare global sync step (ipu_tile.sync) is emitted as the device's sync step and packaged.
// RUN: rm -rf %t && mkdir -p %t
// RUN: ipu-opt %s -p 'builtin.module(ipu-emit-tile-code)' -o %t/emitted.mlir
// RUN: FileCheck %s < %t/emitted.mlir
// RUN: ipu-translate --ipu-to-package %t/emitted.mlir --no-embed-kernels -o %t/sync.ipuexe
// RUN: ipu inspect %t/sync.ipuexe | FileCheck %s --check-prefix=PACKAGE

// CHECK: "ipu_tile.sync"() {program = "run"} : () -> ()
// CHECK: "ipu_tile.code"() {final_cycles = 0 : i64, final_exchange = 0 : i64, tiles = array<i32: 0, 2>}
// PACKAGE: run: 1 steps: 0 compute (0 kernel runs), 0 exchange (0 transfers), 1 sync, 0 repeat, 0 host

module {
  module @t.tiles attributes {ipu_tile.function = "t", ipu_tile.target = "c600", ipu_tile.tiles = 4 : i64} {
    "ipu_tile.buffer"() {address = 360448 : i64, bytes = 1024 : i64, class = "standard", id = 0 : i64, live = array<i64: 0, 0>, name = "x", tiles = array<i32: 0, 2>} : () -> ()
    "ipu_tile.support"() {code_address = 318128 : i64, exchange_table_bytes = 16 : i64, generated_code_bytes = 8 : i64, host_code_bytes = 436 : i64, interleaved_ranges = array<i64: 524288, 949168>, linked_end = 317624 : i64, profile_bytes = 32 : i64, standard_ranges = array<i64: 360448, 524288>} : () -> ()
    "ipu_tile.sync"() {program = "run"} : () -> ()
  }
}
