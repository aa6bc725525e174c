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

// B (64 x 64) is converted in four 16-row chunks, one per tile; each chunk's four column groups
// (512 B each) go to the other three tiles: 16 moves, and since every move needs three of the
// four receivers they run one after another, 128 cycles each (2048 cycles plus the phase's
// fixed 600).
// CHECK-LABEL: module @gemm.tiles
// CHECK-NOT: schedule
// CHECK: "ipu_tile.exchange"() {cycles = 2648 : i64, moves = array<i64: 0, [[STAGE:[0-9]+]], 0, [[B:[0-9]+]], 0, 512, 3, 1, 2, 3, 0, [[STAGE]], 512, [[B]], 2048, 512, 3, 1, 2, 3, {{.*}}>, phase = 0 : i64, program = "run", schedule = array<i64: 0, 0, 512, 0, 1, 0, 512, 128, 2, 0, 512, 256, 3, 0, 512, 384, 4, 0, 512, 512, 5, 0, 512, 640, 6, 0, 512, 768, 7, 0, 512, 896, 8, 0, 512, 1024, 9, 0, 512, 1152, 10, 0, 512, 1280, 11, 0, 512, 1408, 12, 0, 512, 1536, 13, 0, 512, 1664, 14, 0, 512, 1792, 15, 0, 512, 1920>, schedule_key = {{-?[0-9]+}} : i64}
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
