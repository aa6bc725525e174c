// ipu-optimize-exchange-placement needs a tile program, placed, with exchange schedules.
// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-optimize-exchange-placement)' --verify-diagnostics -o /dev/null
// RUN: not ipu-opt %s --split-input-file -p 'builtin.module(ipu-optimize-exchange-placement{target=gc200})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=TARGET

// TARGET: error: 'builtin.module' op ipu-optimize-exchange-placement: unknown target 'gc200'; known targets: c600, bow

// expected-error@below {{ipu-optimize-exchange-placement: the module has no ipu_tile program; run ipu-lower-to-tiles first}}
module {
  func.func @gemm(%x: tensor<32x64xf16>, %w: tensor<64x64xf16>) -> tensor<32x64xf16> {
    %y = "ipu.matmul"(%x, %w) : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
    return %y : tensor<32x64xf16>
  }
}

// -----

// Not placed.
module {
  // expected-error@below {{ipu-optimize-exchange-placement: the program is not placed; run ipu-place-storage first}}
  module @swap.tiles attributes {ipu_tile.function = "swap", ipu_tile.target = "c600", ipu_tile.tiles = 1472 : i64} {
    "ipu_tile.buffer"() {bytes = 1024 : i64, class = "standard", id = 0 : i64, live = array<i64: 0, 0>, name = "x", tiles = array<i32: 0, 2>} : () -> ()
    "ipu_tile.buffer"() {bytes = 1024 : i64, class = "standard", id = 1 : i64, live = array<i64: 0, 0>, name = "y", tiles = array<i32: 0, 2>} : () -> ()
    "ipu_tile.exchange"() {moves = array<i64: 0, 0, 0, 0, 0, 1024, 1, 2, 2, 1, 0, 1, 0, 1024, 1, 0>, phase = 0 : i64, program = "run"} : () -> ()
  }
}

// -----

// Placed, but the exchange phase has no schedule.
module {
  // expected-error@below {{ipu-optimize-exchange-placement: exchange phase 0: has no schedule; run ipu-lower-exchanges first}}
  module @swap.tiles attributes {ipu_tile.function = "swap", ipu_tile.target = "c600", ipu_tile.tiles = 1472 : i64} {
    "ipu_tile.buffer"() {address = 360448 : i64, bytes = 1024 : i64, class = "standard", id = 0 : i64, live = array<i64: 0, 0>, name = "x", tiles = array<i32: 0, 2>} : () -> ()
    "ipu_tile.buffer"() {address = 361472 : i64, bytes = 1024 : i64, class = "standard", id = 1 : i64, live = array<i64: 0, 0>, name = "y", tiles = array<i32: 0, 2>} : () -> ()
    "ipu_tile.support"() {code_address = 318128 : i64, exchange_table_bytes = 32 : i64, generated_code_bytes = 8 : i64, host_code_bytes = 436 : i64, interleaved_ranges = array<i64: 524288, 949168>, linked_end = 317624 : i64, profile_bytes = 32 : i64, standard_ranges = array<i64: 360448, 524288>} : () -> ()
    "ipu_tile.exchange"() {moves = array<i64: 0, 0, 0, 0, 0, 1024, 1, 2, 2, 1, 0, 1, 0, 1024, 1, 0>, phase = 0 : i64, program = "run"} : () -> ()
  }
}
