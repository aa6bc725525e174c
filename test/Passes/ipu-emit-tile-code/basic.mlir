// ipu-emit-tile-code checks that every phase has a current schedule (valid at the current
// addresses), builds and validates the device image and records the costed program: an
// ipu_tile.code op with the tiles that run code, final_cycles (busiest tile per compute step
// plus the scheduled exchange) and final_exchange.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4}, ipu-place-storage, ipu-lower-exchanges, ipu-optimize-exchange-placement, ipu-emit-tile-code)' | FileCheck %s
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4}, ipu-place-storage, ipu-lower-exchanges, ipu-emit-tile-code{target=bow})' | FileCheck %s
// RUN: env RUST_LOG=info ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4}, ipu-place-storage, ipu-lower-exchanges, ipu-emit-tile-code)' -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOG
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4}, ipu-place-storage, ipu-lower-exchanges, ipu-emit-tile-code)' --mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS
// One tile (grid [1, 1, 1, 1]: each home holds the whole panel and is copied into it on the
// tile): no exchange phase, so no schedule is needed and the exchange costs nothing.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=1}, ipu-place-storage, ipu-emit-tile-code)' | FileCheck %s --check-prefix=ONE
// Emitting again gives the same record.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4}, ipu-place-storage, ipu-lower-exchanges, ipu-emit-tile-code)' -o %t.emitted.mlir
// RUN: ipu-opt %t.emitted.mlir -p 'builtin.module(ipu-emit-tile-code)' | diff %t.emitted.mlir -

// 32x64x64 on 4 tiles is a split GEMM on grid [1, 1, 4, 1]: the host streams A and B
// straight into AMP order, and the one exchange phase broadcasts each tile's quarter of the
// AMP-left panel (1024 B) to the other three tiles, one move after another (4 x 256 cycles,
// each later move waiting the 112-cycle select latency as the receivers switch sender, plus
// the phase's fixed 521 and the farthest receiver's 2-cycle route: 1024 + 3 x 112 + 521 + 2
// = 1883). final_exchange is that phase's
// scheduled cycles.
// CHECK-LABEL: module @gemm.tiles
// CHECK-NOT: "ipu_tile.exchange"
// CHECK: "ipu_tile.exchange"() {cycles = [[EXCHANGE:[0-9]+]] : i64
// CHECK-NOT: "ipu_tile.exchange"
// CHECK: "ipu_tile.host_read"() {program = "run", stream = "result0"}
// CHECK-NEXT: "ipu_tile.code"() {final_cycles = {{[0-9]+}} : i64, final_exchange = [[EXCHANGE]] : i64, tiles = array<i32: 0, 1, 2, 3>}
// CHECK-NEXT: }

// LOG: split GEMM grid op=0 grid=[1, 1, 4, 1] panels=1 k_panel=64
// LOG: package build phase finished phase="prepare_tile_code" elapsed_ms={{[0-9]+}} success=true
// LOG-NEXT: costed final placed program final_cycles={{[0-9]+}} final_exchange=1883
// LOG-NEXT: package build phase finished phase="emit_tile_code" elapsed_ms={{[0-9]+}} success=true
// LOG-NEXT: package build phase finished phase="build_tile_images" elapsed_ms={{[0-9]+}} success=true
// LOG-NEXT: pass finished pass=ipu-emit-tile-code op=builtin.module elapsed_ms={{[0-9]+}} success=true

// STATS: IpuEmitTileCode
// STATS-NEXT: (S) 4 code-tiles - tiles with code

// ONE-NOT: ipu_tile.exchange
// ONE: "ipu_tile.code"() {final_cycles = {{[0-9]+}} : i64, final_exchange = 0 : i64, tiles = array<i32: 0>}

func.func @gemm(%x: tensor<32x64xf16>, %w: tensor<64x64xf16>) -> tensor<32x64xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
  return %y : tensor<32x64xf16>
}
