// ipu-lower-exchanges schedules every exchange phase on the sender buses and receivers and
// records the schedule on the phase: rows of (move, byte offset, bytes, cycle slot), the key
// it depends on (the moves' tiles and sizes) and the phase's cycles.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4}, ipu-place-storage, ipu-lower-exchanges)' | FileCheck %s
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4}, ipu-place-storage, ipu-lower-exchanges{target=bow})' | FileCheck %s
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4}, ipu-place-storage, ipu-lower-exchanges)' --mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS
// Two moves of the swap program run at once, each in one piece.
// RUN: ipu-opt %S/Inputs/swap.mlir -p 'builtin.module(ipu-place-storage, ipu-lower-exchanges)' | FileCheck %s --check-prefix=SWAP
// 32x64x256 on 16 tiles (grid [1, 1, 16, 1]): every tile gets its 16-column block of B
// straight from the host, and A's AMP-left panel is cut into 16 ranges of 8 rows x 16 K
// (256 B), each homed on one tile and broadcast to the other 15: 16 moves in one phase, one
// schedule row each, 176 cycles apart (64 cycles each plus the 112-cycle select latency as
// every receiver switches sender: 1024 + 15 x 112 cycles plus the phase's fixed 521 and the
// farthest receiver's route, 2 cycles: tiles 0-15 sit in physical columns 0 and 2).
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=16 function=wide}, ipu-place-storage, ipu-lower-exchanges)' | FileCheck %s --check-prefix=WIDE
// A matmul feeding a gelu is a split GEMM too: the same one panel phase as @gemm, and the
// gelu runs in place on C's AMP-output block with no exchange of its own.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4 function=gemm_then_gelu}, ipu-place-storage, ipu-lower-exchanges)' | FileCheck %s --check-prefix=GELU
// A matmul feeding an add of another full tensor (not a bias add) is not split: the
// output-stationary lowering converts B on the device and broadcasts the converted chunks:
// 16 smaller moves, also serialized.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4 function=gemm_then_add}, ipu-place-storage, ipu-lower-exchanges)' | FileCheck %s --check-prefix=CONVERT

// 32x64x64 on 4 tiles is a split GEMM on grid [1, 1, 4, 1]: the host streams each tile's
// 16-column block of B straight into its AMP-right order and one quarter of A's AMP-left
// panel (one 16-group of K, 1024 B) into its A home. The one exchange phase broadcasts each
// home's range to the other three tiles at the range's place in the panel: 4 moves, and
// since every move needs three of the four receivers they run one after another, 256 cycles
// each and 112 cycles of select latency between them as the receivers switch sender
// (1024 + 3 x 112 cycles plus the phase's fixed 521 and a 2-cycle route).
// CHECK-LABEL: module @gemm.tiles
// CHECK-DAG: "ipu_tile.buffer"() {address = {{[0-9]+}} : i64, bytes = 1024 : i64, class = "standard", id = [[HOME:[0-9]+]] : i64, {{.*}}name = "op0.a.home"
// CHECK-DAG: "ipu_tile.buffer"() {address = {{[0-9]+}} : i64, bytes = 4096 : i64, class = "interleaved", id = [[PANEL:[0-9]+]] : i64, {{.*}}name = "op0.a.amp_left"
// CHECK-NOT: schedule
// CHECK: "ipu_tile.exchange"() {cycles = 1883 : i64, moves = array<i64: 0, [[HOME]], 0, [[PANEL]], 0, 1024, 3, 1, 2, 3, 1, [[HOME]], 0, [[PANEL]], 1024, 1024, 3, 0, 2, 3, 2, [[HOME]], 0, [[PANEL]], 2048, 1024, 3, 0, 1, 3, 3, [[HOME]], 0, [[PANEL]], 3072, 1024, 3, 0, 1, 2>, phase = 0 : i64, program = "run", schedule = array<i64: 0, 0, 1024, 0, 1, 0, 1024, 368, 2, 0, 1024, 736, 3, 0, 1024, 1104>, schedule_key = {{-?[0-9]+}} : i64}
// CHECK-NOT: "ipu_tile.exchange"
// CHECK-NOT: ipu_tile.code

// STATS: IpuLowerExchanges
// STATS-NEXT: (S) 0 phases-reused - stored schedules reused
// STATS-NEXT: (S) 1 phases-scheduled - phases scheduled

// SWAP: "ipu_tile.exchange"() {cycles = {{[0-9]+}} : i64, moves = array<i64: 0, 0, 0, 0, 0, 1024, 1, 2, 2, 1, 0, 1, 0, 1024, 1, 0>, phase = 0 : i64, program = "run", schedule = array<i64: 0, 0, 1024, 0, 1, 0, 1024, 0>, schedule_key = {{-?[0-9]+}} : i64}

// WIDE-LABEL: module @wide.tiles
// WIDE-DAG: "ipu_tile.buffer"() {address = {{[0-9]+}} : i64, bytes = 256 : i64, class = "standard", id = [[WHOME:[0-9]+]] : i64, {{.*}}name = "op0.a.home"
// WIDE-DAG: "ipu_tile.buffer"() {address = {{[0-9]+}} : i64, bytes = 4096 : i64, class = "interleaved", id = [[WPANEL:[0-9]+]] : i64, {{.*}}name = "op0.a.amp_left"
// WIDE: "ipu_tile.exchange"() {cycles = 3227 : i64, moves = array<i64: 0, [[WHOME]], 0, [[WPANEL]], 0, 256, 15, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 1, [[WHOME]], 0, [[WPANEL]], 256, 256, 15, 0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, {{.*}}, 15, [[WHOME]], 0, [[WPANEL]], 3840, 256, 15, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14>, phase = 0 : i64, program = "run", schedule = array<i64: 0, 0, 256, 0, 1, 0, 256, 176, 2, 0, 256, 352, 3, 0, 256, 528, 4, 0, 256, 704, 5, 0, 256, 880, 6, 0, 256, 1056, 7, 0, 256, 1232, 8, 0, 256, 1408, 9, 0, 256, 1584, 10, 0, 256, 1760, 11, 0, 256, 1936, 12, 0, 256, 2112, 13, 0, 256, 2288, 14, 0, 256, 2464, 15, 0, 256, 2640>, schedule_key = {{-?[0-9]+}} : i64}
// WIDE-NOT: "ipu_tile.exchange"

// @gemm_then_gelu: the product is the split GEMM of @gemm (grid [1, 1, 4, 1]) and its one
// exchange phase is exactly @gemm's (4 moves of 1 KiB, 1883 cycles). The gelu then runs on
// each tile's own AMP-output block in place, straight after the GEMM: no second phase.
// GELU-LABEL: module @gemm_then_gelu.tiles
// GELU-DAG: "ipu_tile.kernel"() {index = [[GELU_K:[0-9]+]] : i64, name = "gelu_tanh_f16_n512"
// GELU-DAG: "ipu_tile.buffer"() {address = {{[0-9]+}} : i64, bytes = 1024 : i64, class = "standard", id = [[GHOME:[0-9]+]] : i64, {{.*}}name = "op0.a.home"
// GELU-DAG: "ipu_tile.buffer"() {address = {{[0-9]+}} : i64, bytes = 4096 : i64, class = "interleaved", id = [[GPANEL:[0-9]+]] : i64, {{.*}}name = "op0.a.amp_left"
// GELU-DAG: "ipu_tile.buffer"() {address = {{[0-9]+}} : i64, bytes = 1024 : i64, class = "standard", id = [[GC:[0-9]+]] : i64, {{.*}}name = "op0.c.amp_output"
// GELU-NOT: "ipu_tile.exchange"
// GELU: "ipu_tile.exchange"() {cycles = 1883 : i64, moves = array<i64: 0, [[GHOME]], 0, [[GPANEL]], 0, 1024, 3, 1, 2, 3, 1, [[GHOME]], 0, [[GPANEL]], 1024, 1024, 3, 0, 2, 3, 2, [[GHOME]], 0, [[GPANEL]], 2048, 1024, 3, 0, 1, 3, 3, [[GHOME]], 0, [[GPANEL]], 3072, 1024, 3, 0, 1, 2>, phase = 0 : i64, program = "run", schedule = array<i64: 0, 0, 1024, 0, 1, 0, 1024, 368, 2, 0, 1024, 736, 3, 0, 1024, 1104>, schedule_key = {{-?[0-9]+}} : i64}
// GELU-NEXT: "ipu_tile.compute"() {program = "run", provenance = "op0", runs = array<i64: {{.*}}>}
// GELU-NEXT: "ipu_tile.compute"() {program = "run", provenance = "op1", runs = array<i64: 0, [[GELU_K]], 2, [[GC]], 0, [[GC]], 0, 1, [[GELU_K]], 2, [[GC]], 0, [[GC]], 0, 2, [[GELU_K]], 2, [[GC]], 0, [[GC]], 0, 3, [[GELU_K]], 2, [[GC]], 0, [[GC]], 0>}
// GELU-NEXT: "ipu_tile.host_read"() {program = "run", stream = "result0"}
// GELU-NOT: "ipu_tile.exchange"

// @gemm_then_add: B (64 x 64) is converted in four 16-row chunks, one per tile; each chunk's
// four column groups (512 B each) go from the tile's staging buffer to the AMP-right operand
// of the other three tiles, column group g of tile t's chunk at 2048 g + 512 t: 16 moves, one
// after another, 128 cycles each, the receivers paying the 112-cycle select latency each time
// the sending tile changes (2048 + 3 x 112 cycles plus the fixed 521 and the route). The add needs no
// exchange.
// CONVERT-LABEL: module @gemm_then_add.tiles
// CONVERT-DAG: "ipu_tile.kernel"() {index = {{[0-9]+}} : i64, name = "rearrange_amp_right_f16_o0_r16_p16_c64_p64"
// CONVERT-DAG: "ipu_tile.buffer"() {address = {{[0-9]+}} : i64, bytes = 8192 : i64, class = "interleaved", id = [[B:[0-9]+]] : i64, {{.*}}name = "op0.b.amp_right"
// CONVERT-DAG: "ipu_tile.buffer"() {address = {{[0-9]+}} : i64, bytes = 2048 : i64, class = "standard", id = [[STAGE:[0-9]+]] : i64, {{.*}}name = "op0.b.amp_chunk"
// CONVERT-NOT: "ipu_tile.exchange"
// CONVERT: "ipu_tile.compute"() {program = "run", provenance = "op0.convert"
// CONVERT-NEXT: "ipu_tile.exchange"() {cycles = 2907 : i64, moves = array<i64: 0, [[STAGE]], 0, [[B]], 0, 512, 3, 1, 2, 3, 0, [[STAGE]], 512, [[B]], 2048, 512, 3, 1, 2, 3, 0, [[STAGE]], 1024, [[B]], 4096, 512, 3, 1, 2, 3, 0, [[STAGE]], 1536, [[B]], 6144, 512, 3, 1, 2, 3, 1, [[STAGE]], 0, [[B]], 512, 512, 3, 0, 2, 3, 1, [[STAGE]], 512, [[B]], 2560, 512, 3, 0, 2, 3, 1, [[STAGE]], 1024, [[B]], 4608, 512, 3, 0, 2, 3, 1, [[STAGE]], 1536, [[B]], 6656, 512, 3, 0, 2, 3, 2, [[STAGE]], 0, [[B]], 1024, 512, 3, 0, 1, 3, 2, [[STAGE]], 512, [[B]], 3072, 512, 3, 0, 1, 3, 2, [[STAGE]], 1024, [[B]], 5120, 512, 3, 0, 1, 3, 2, [[STAGE]], 1536, [[B]], 7168, 512, 3, 0, 1, 3, 3, [[STAGE]], 0, [[B]], 1536, 512, 3, 0, 1, 2, 3, [[STAGE]], 512, [[B]], 3584, 512, 3, 0, 1, 2, 3, [[STAGE]], 1024, [[B]], 5632, 512, 3, 0, 1, 2, 3, [[STAGE]], 1536, [[B]], 7680, 512, 3, 0, 1, 2>, phase = 0 : i64, program = "run", schedule = array<i64: 0, 0, 512, 0, 1, 0, 512, 128, 2, 0, 512, 256, 3, 0, 512, 384, 4, 0, 512, 624, 5, 0, 512, 752, 6, 0, 512, 880, 7, 0, 512, 1008, 8, 0, 512, 1248, 9, 0, 512, 1376, 10, 0, 512, 1504, 11, 0, 512, 1632, 12, 0, 512, 1872, 13, 0, 512, 2000, 14, 0, 512, 2128, 15, 0, 512, 2256>, schedule_key = {{-?[0-9]+}} : i64}
// CONVERT-NEXT: "ipu_tile.compute"() {program = "run", provenance = "op0"
// CONVERT-NOT: "ipu_tile.exchange"

func.func @gemm(%x: tensor<32x64xf16>, %w: tensor<64x64xf16>) -> tensor<32x64xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
  return %y : tensor<32x64xf16>
}

func.func @wide(%x: tensor<32x64xf16>, %w: tensor<64x256xf16>) -> tensor<32x256xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<32x64xf16>, tensor<64x256xf16>) -> tensor<32x256xf16>
  return %y : tensor<32x256xf16>
}

func.func @gemm_then_gelu(%x: tensor<32x64xf16>, %w: tensor<64x64xf16>) -> tensor<32x64xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
  %z = "ipu.gelu"(%y) {approximate = "tanh"} : (tensor<32x64xf16>) -> tensor<32x64xf16>
  return %z : tensor<32x64xf16>
}

func.func @gemm_then_add(%x: tensor<32x64xf16>, %w: tensor<64x64xf16>, %r: tensor<32x64xf16>) -> tensor<32x64xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
  %z = "ipu.add"(%y, %r) : (tensor<32x64xf16>, tensor<32x64xf16>) -> tensor<32x64xf16>
  return %z : tensor<32x64xf16>
}
