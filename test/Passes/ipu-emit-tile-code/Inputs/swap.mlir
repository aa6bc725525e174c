// A hand-written tile program: tiles 0 and 2 swap 1 KiB buffers (x from tile 0 to tile 2,
// y from tile 2 to tile 0) in one exchange phase. The two moves use different sender buses
// and receivers, so the scheduler runs them at once; placement puts x and y in one 16 KiB
// memory element, where each tile's send-read and receive-write then collide.
module {
  module @swap.tiles attributes {ipu_tile.function = "swap", ipu_tile.target = "c600", ipu_tile.tiles = 1472 : i64} {
    "ipu_tile.buffer"() {bytes = 1024 : i64, class = "standard", id = 0 : i64, live = array<i64: 0, 0>, name = "x", tiles = array<i32: 0, 2>} : () -> ()
    "ipu_tile.buffer"() {bytes = 1024 : i64, class = "standard", id = 1 : i64, live = array<i64: 0, 0>, name = "y", tiles = array<i32: 0, 2>} : () -> ()
    "ipu_tile.exchange"() {moves = array<i64: 0, 0, 0, 0, 0, 1024, 1, 2, 2, 1, 0, 1, 0, 1024, 1, 0>, phase = 0 : i64, program = "run"} : () -> ()
  }
}
