// Two independent conflicts (tile pairs 0/2 and 4/6 each swapping buffers that share an
// element): the optimizer resolves them one at a time (a move is kept when it lowers the
// number of conflicting buffers) and the emitted program is hazard-free.
// RUN: ipu-opt %s -p 'builtin.module(ipu-place-storage, ipu-lower-exchanges, ipu-optimize-exchange-placement, ipu-emit-tile-code)' | FileCheck %s
// CHECK: "ipu_tile.code"() {final_cycles = {{[0-9]+}} : i64, final_exchange = {{[0-9]+}} : i64, tiles = array<i32: 0, 2, 4, 6>}
module {
  module @swap.tiles attributes {ipu_tile.function = "swap", ipu_tile.target = "c600", ipu_tile.tiles = 1472 : i64} {
    "ipu_tile.buffer"() {bytes = 1024 : i64, class = "standard", id = 0 : i64, live = array<i64: 0, 0>, name = "x0", tiles = array<i32: 0, 2>} : () -> ()
    "ipu_tile.buffer"() {bytes = 1024 : i64, class = "standard", id = 1 : i64, live = array<i64: 0, 0>, name = "y0", tiles = array<i32: 0, 2>} : () -> ()
    "ipu_tile.buffer"() {bytes = 1024 : i64, class = "standard", id = 2 : i64, live = array<i64: 0, 0>, name = "x1", tiles = array<i32: 4, 6>} : () -> ()
    "ipu_tile.buffer"() {bytes = 1024 : i64, class = "standard", id = 3 : i64, live = array<i64: 0, 0>, name = "y1", tiles = array<i32: 4, 6>} : () -> ()
    "ipu_tile.exchange"() {moves = array<i64: 0, 0, 0, 0, 0, 1024, 1, 2, 2, 1, 0, 1, 0, 1024, 1, 0, 4, 2, 0, 2, 0, 1024, 1, 6, 6, 3, 0, 3, 0, 1024, 1, 4>, phase = 0 : i64, program = "run"} : () -> ()
  }
}
