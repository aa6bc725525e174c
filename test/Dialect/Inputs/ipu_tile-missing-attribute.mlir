// An ipu_tile.buffer without its 'bytes' attribute: refused by the IRDL declaration.
module {
  module @bad.tiles attributes {ipu_tile.function = "bad", ipu_tile.tiles = 1472 : i64} {
    "ipu_tile.buffer"() {id = 0 : i64, name = "x", class = "standard", tiles = array<i32: 0>, live = array<i64: 0, 0>} : () -> ()
  }
}
