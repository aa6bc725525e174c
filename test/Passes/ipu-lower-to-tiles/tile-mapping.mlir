// ipu-lower-to-tiles applies the tile mapping ipu-select-finalist selected: a function with
// `ipu.tile_mapping_tiles` (plan tile -> logical tile) is lowered on the renamed tiles, so the
// program is the one the refined estimate scheduled. Here the reversed mapping on 4 tiles:
// the plan's tile 0 (A's first row quarter, C's first column block) lands on tile 3.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4})' | FileCheck %s
// Without the mapping the same blocks sit on tiles 0..3 in order.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4 function=identity})' | FileCheck %s --check-prefix=IDENTITY
// The renamed program places, schedules, emits and runs like any other.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4}, ipu-place-storage, ipu-lower-exchanges, ipu-optimize-exchange-placement, ipu-emit-tile-code)' | FileCheck %s --check-prefix=EMIT
// A mapping that is not a permutation of the plan's tiles is refused at the function.
// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-lower-to-tiles{tiles=4})' --verify-diagnostics -o /dev/null

// Stream pieces are (tile, buffer, buffer offset, tensor offset, bytes, runs, stride).
// CHECK-LABEL: module @gemm.tiles
// CHECK: "ipu_tile.stream"() {name = "arg0", pieces = [array<i64: 3, 0, 0, 0, 1024, 32, 128>, array<i64: 2, 0, 0, 32, 1024, 32, 128>, array<i64: 1, 0, 0, 64, 1024, 32, 128>, array<i64: 0, 0, 0, 96, 1024, 32, 128>]
// CHECK: "ipu_tile.stream"() {name = "result0", pieces = [array<i64: 3, 4, 0, 0, 1024, 32, 128>, array<i64: 2, 4, 0, 32, 1024, 32, 128>, array<i64: 1, 4, 0, 64, 1024, 32, 128>, array<i64: 0, 4, 0, 96, 1024, 32, 128>]
// Moves are (source tile, source buffer, offset, destination buffer, offset, bytes, count,
// destinations): tile 3 now sends the first quarter of A's panel to the other three.
// CHECK: "ipu_tile.exchange"() {moves = array<i64: 3, 0, 0, 2, 0, 1024, 3, 0, 1, 2,

// IDENTITY-LABEL: module @identity.tiles
// IDENTITY: "ipu_tile.stream"() {name = "arg0", pieces = [array<i64: 0, 0, 0, 0, 1024, 32, 128>, array<i64: 1, 0, 0, 32, 1024, 32, 128>, array<i64: 2, 0, 0, 64, 1024, 32, 128>, array<i64: 3, 0, 0, 96, 1024, 32, 128>]

// EMIT: "ipu_tile.code"() {final_cycles = {{[0-9]+}} : i64, final_exchange = {{[0-9]+}} : i64, tiles = array<i32: 0, 1, 2, 3>}

func.func @gemm(%x: tensor<32x64xf16>, %w: tensor<64x64xf16>) -> tensor<32x64xf16> attributes {ipu.tile_mapping = "reversed", ipu.tile_mapping_tiles = array<i32: 3, 2, 1, 0>} {
  %y = "ipu.matmul"(%x, %w) : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
  return %y : tensor<32x64xf16>
}

func.func @identity(%x: tensor<32x64xf16>, %w: tensor<64x64xf16>) -> tensor<32x64xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
  return %y : tensor<32x64xf16>
}

// -----

// expected-error@+1 {{'func.func' op ipu-lower-to-tiles: ipu.tile_mapping_tiles: the tile mapping is not a permutation: entry 1 repeats tile 0}}
func.func @repeats(%x: tensor<32x64xf16>, %w: tensor<64x64xf16>) -> tensor<32x64xf16> attributes {ipu.tile_mapping_tiles = array<i32: 0, 0, 1, 2>} {
  %y = "ipu.matmul"(%x, %w) : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
  return %y : tensor<32x64xf16>
}

// -----

// expected-error@+1 {{'func.func' op ipu-lower-to-tiles: ipu.tile_mapping_tiles: the tile mapping's entry 1 is tile 9, outside 0..4}}
func.func @outside(%x: tensor<32x64xf16>, %w: tensor<64x64xf16>) -> tensor<32x64xf16> attributes {ipu.tile_mapping_tiles = array<i32: 0, 9, 1, 2>} {
  %y = "ipu.matmul"(%x, %w) : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
  return %y : tensor<32x64xf16>
}

// -----

// Planned on 2 tiles, lowered on 4.
// expected-error@+1 {{'func.func' op ipu-lower-to-tiles: ipu.tile_mapping_tiles: the tile mapping has 2 entries for a plan on 4 tiles}}
func.func @other_tiles(%x: tensor<32x64xf16>, %w: tensor<64x64xf16>) -> tensor<32x64xf16> attributes {ipu.tile_mapping_tiles = array<i32: 1, 0>} {
  %y = "ipu.matmul"(%x, %w) : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
  return %y : tensor<32x64xf16>
}

// -----

// expected-error@+1 {{'func.func' op ipu-lower-to-tiles: ipu.tile_mapping_tiles is not an array<i32> of tile ids}}
func.func @not_an_array(%x: tensor<32x64xf16>, %w: tensor<64x64xf16>) -> tensor<32x64xf16> attributes {ipu.tile_mapping_tiles = "reversed"} {
  %y = "ipu.matmul"(%x, %w) : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
  return %y : tensor<32x64xf16>
}
