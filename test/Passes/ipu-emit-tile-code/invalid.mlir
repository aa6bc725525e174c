// ipu-emit-tile-code needs a tile program, placed, with a current schedule for every phase,
// and refuses a phase the device would refuse at load.
// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-emit-tile-code)' --verify-diagnostics -o /dev/null
// RUN: not ipu-opt %s --split-input-file -p 'builtin.module(ipu-emit-tile-code{target=gc200})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=TARGET
// The swap program placed and scheduled but not optimized: x and y share an element.
// RUN: not ipu-opt %S/Inputs/swap.mlir -p 'builtin.module(ipu-place-storage, ipu-lower-exchanges, ipu-emit-tile-code)' -o /dev/null 2>&1 | FileCheck %s --check-prefix=HAZARD
// Lowered but never placed nor scheduled (one tile, so no phase to schedule).
// RUN: not ipu-opt %S/Inputs/gemm.mlir -p 'builtin.module(ipu-lower-to-tiles{tiles=1}, ipu-emit-tile-code)' -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNPLACED
// Placed on 4 tiles but never scheduled.
// RUN: not ipu-opt %S/Inputs/gemm.mlir -p 'builtin.module(ipu-lower-to-tiles{tiles=4}, ipu-place-storage, ipu-emit-tile-code)' -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNSCHEDULED

// TARGET: error: 'builtin.module' op ipu-emit-tile-code: unknown target 'gc200'; known targets: c600, bow
// HAZARD: error: 'builtin.module' op ipu-emit-tile-code: exchange phase 0: program 'run' step 0 (exchange phase 0): tile 0 memory element {{[0-9]+}} (0x58000..0x5c000) is used by exchange send-read of 0x58000..0x58400 and exchange receive-write of 0x58400..0x58800 during exchange cycles 0..{{[0-9]+}}
// UNPLACED: error: 'builtin.module' op ipu-emit-tile-code: the program is not placed; run ipu-place-storage first
// UNSCHEDULED: error: 'builtin.module' op ipu-emit-tile-code: exchange phase 0: has no schedule; run ipu-lower-exchanges first

// expected-error@below {{ipu-emit-tile-code: the module has no ipu_tile program; run ipu-lower-to-tiles first}}
module {
  func.func @gemm(%x: tensor<32x64xf16>, %w: tensor<64x64xf16>) -> tensor<32x64xf16> {
    %y = "ipu.matmul"(%x, %w) : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
    return %y : tensor<32x64xf16>
  }
}

// -----

// A schedule whose key no longer matches its moves (the moves changed after scheduling) is
// not current.
module {
  // expected-error@below {{ipu-emit-tile-code: exchange phase 0: has no current schedule; run ipu-lower-exchanges first}}
  module @swap.tiles attributes {ipu_tile.function = "swap", ipu_tile.target = "c600", ipu_tile.tiles = 1472 : i64} {
    "ipu_tile.buffer"() {address = 376832 : i64, bytes = 1024 : i64, class = "standard", id = 0 : i64, live = array<i64: 0, 0>, name = "x", tiles = array<i32: 0, 2>} : () -> ()
    "ipu_tile.buffer"() {address = 393216 : i64, bytes = 1024 : i64, class = "standard", id = 1 : i64, live = array<i64: 0, 0>, name = "y", tiles = array<i32: 0, 2>} : () -> ()
    "ipu_tile.support"() {code_address = 318128 : i64, exchange_table_bytes = 32 : i64, generated_code_bytes = 8 : i64, host_code_bytes = 436 : i64, interleaved_ranges = array<i64: 524288, 949168>, linked_end = 317624 : i64, profile_bytes = 32 : i64, standard_ranges = array<i64: 360448, 524288>} : () -> ()
    "ipu_tile.exchange"() {cycles = 856 : i64, moves = array<i64: 0, 0, 0, 0, 0, 1024, 1, 2, 2, 1, 0, 1, 0, 1024, 1, 0>, phase = 0 : i64, program = "run", schedule = array<i64: 0, 0, 1024, 0, 1, 0, 1024, 0>, schedule_key = 1 : i64} : () -> ()
  }
}
