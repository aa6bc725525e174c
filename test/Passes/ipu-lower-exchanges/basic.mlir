// ipu-lower-exchanges schedules every exchange phase on the sender buses and receivers and
// records the schedule on the phase: rows of (move, byte offset, bytes, cycle slot), the key
// it depends on (the moves' tiles and sizes) and the phase's cycles.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4}, ipu-place-storage, ipu-lower-exchanges)' | FileCheck %s
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4}, ipu-place-storage, ipu-lower-exchanges{target=bow})' | FileCheck %s
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4}, ipu-place-storage, ipu-lower-exchanges)' --mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS
// Two moves of the swap program run at once, each in one piece.
// RUN: ipu-opt %S/Inputs/swap.mlir -p 'builtin.module(ipu-place-storage, ipu-lower-exchanges)' | FileCheck %s --check-prefix=SWAP
// 32x64x256 on 16 tiles (4 x 4 blocks): A's row blocks are broadcast along grid rows and B's
// column blocks along grid columns, many moves in one phase, one schedule row or more each.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=16 function=wide}, ipu-place-storage, ipu-lower-exchanges)' | FileCheck %s --check-prefix=WIDE

// Tile 0 broadcasts B (8 KiB) to tiles 1, 2 and 3 in one piece from cycle 0.
// CHECK-LABEL: module @gemm.tiles
// CHECK-NOT: schedule
// CHECK: "ipu_tile.exchange"() {cycles = [[CYCLES:[0-9]+]] : i64, moves = array<i64: 0, [[B:[0-9]+]], 0, [[B]], 0, 8192, 3, 1, 2, 3>, phase = 0 : i64, program = "run", schedule = array<i64: 0, 0, 8192, 0>, schedule_key = {{-?[0-9]+}} : i64}
// CHECK-NOT: ipu_tile.code

// STATS: IpuLowerExchanges
// STATS-NEXT: (S) 0 phases-reused - stored schedules reused
// STATS-NEXT: (S) 1 phases-scheduled - phases scheduled

// SWAP: "ipu_tile.exchange"() {cycles = {{[0-9]+}} : i64, moves = array<i64: 0, 0, 0, 0, 0, 1024, 1, 2, 2, 1, 0, 1, 0, 1024, 1, 0>, phase = 0 : i64, program = "run", schedule = array<i64: 0, 0, 1024, 0, 1, 0, 1024, 0>, schedule_key = {{-?[0-9]+}} : i64}

// WIDE-LABEL: module @wide.tiles
// WIDE: "ipu_tile.exchange"() {cycles = {{[0-9]+}} : i64, moves = array<i64: {{.*}}>, phase = 0 : i64, program = "run", schedule = array<i64: {{([0-9]+, [0-9]+, [0-9]+, [0-9]+, ){7,}[0-9]+, [0-9]+, [0-9]+, [0-9]+}}>, schedule_key = {{-?[0-9]+}} : i64}

func.func @gemm(%x: tensor<32x64xf16>, %w: tensor<64x64xf16>) -> tensor<32x64xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
  return %y : tensor<32x64xf16>
}

func.func @wide(%x: tensor<32x64xf16>, %w: tensor<64x256xf16>) -> tensor<32x256xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<32x64xf16>, tensor<64x256xf16>) -> tensor<32x256xf16>
  return %y : tensor<32x256xf16>
}
