// ipu-lower-to-tiles turns the graph function into an ipu_tile program: a nested module of
// kernels, buffers (no addresses yet), host streams, broadcast exchange phases (no schedule
// yet) and compute steps, beside the function, which stays as it is.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4})' | FileCheck %s
// RUN: env RUST_LOG=info ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOG
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4})' --mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS
// A K split: the partials are reduce-scattered and C is read back where it is reduced.
// RUN: env RUST_LOG=info ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4 function=k_split})' 2>&1 | FileCheck %s --check-prefix=KSPLIT
// A matmul feeding a gelu is a split GEMM as well: the gelu runs in place on C's AMP-output
// block on the tile that computed it, and the host reads the gelu's result from there.
// RUN: env RUST_LOG=info ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4 function=gemm_then_gelu})' 2>&1 | FileCheck %s --check-prefix=GELU
// A matmul feeding an add of another full tensor (not a bias add) keeps the output-stationary
// lowering: A and B are packed into AMP order on the device and C is rearranged to row-major
// for the add.
// RUN: env RUST_LOG=info ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4 function=gemm_then_add})' 2>&1 | FileCheck %s --check-prefix=STATIONARY

// @gemm, 32x64x64 on 4 tiles: both operands come from the host in F16 and C is only returned,
// so the split GEMM lowering takes it, on grid [1, 1, 4, 1] (one row block of 32, four
// column blocks of 16, no K split; one K panel of 64). Tile j computes C's columns 16j..16j+16.
// CHECK-LABEL: func.func @gemm
// CHECK: "ipu.matmul"
// CHECK: module @gemm.tiles attributes {ipu_tile.function = "gemm", ipu_tile.target = "c600", ipu_tile.tiles = 1472 : i64} {
// CHECK-NEXT: "ipu_tile.op"() {estimate = 0 : i64, op = "ipu.matmul", provenance = "op0"}
// Kernels, named as in the seed: a Copy per home (each tile copies its own range into the
// panel) and one GEMM call per tile (K = 64, its 16-column block, all 32 rows).
// CHECK-NEXT: "ipu_tile.kernel"() {index = [[COPY_A:[0-9]+]] : i64, name = "copy_b1024", spec = "{{.*}}"}
// CHECK-NEXT: "ipu_tile.kernel"() {index = [[COPY_B:[0-9]+]] : i64, name = "copy_b2048", spec = "{{.*}}"}
// CHECK-NEXT: "ipu_tile.kernel"() {index = [[GEMM:[0-9]+]] : i64, name = "gemm_f16_interleaved_k64_c16_r32", spec = "{{.*}}"}
// Buffers, each to sit at one address on all four tiles (no address yet): the homes the
// host writes (a quarter of A's AMP-left panel, B's column block in AMP-right order), the
// panels in interleaved memory (the AMP's weight loads only run from there) and C's block
// in AMP-output order.
// CHECK-NEXT: "ipu_tile.buffer"() {bytes = 1024 : i64, class = "standard", id = [[A_HOME:[0-9]+]] : i64, live = array<i64: {{[0-9]+}}, {{[0-9]+}}>, name = "op0.a.home", tiles = array<i32: 0, 1, 2, 3>}
// CHECK-NEXT: "ipu_tile.buffer"() {bytes = 2048 : i64, class = "standard", id = [[B_HOME:[0-9]+]] : i64, live = array<i64: {{[0-9]+}}, {{[0-9]+}}>, name = "op0.b.home", tiles = array<i32: 0, 1, 2, 3>}
// CHECK-NEXT: "ipu_tile.buffer"() {bytes = 4096 : i64, class = "interleaved", id = [[A_PANEL:[0-9]+]] : i64, live = array<i64: {{[0-9]+}}, {{[0-9]+}}>, name = "op0.a.amp_left", tiles = array<i32: 0, 1, 2, 3>}
// CHECK-NEXT: "ipu_tile.buffer"() {bytes = 2048 : i64, class = "interleaved", id = [[B_PANEL:[0-9]+]] : i64, live = array<i64: {{[0-9]+}}, {{[0-9]+}}>, name = "op0.b.amp_right", tiles = array<i32: 0, 1, 2, 3>}
// CHECK-NEXT: "ipu_tile.buffer"() {bytes = 1024 : i64, class = "interleaved", id = [[C_AMP:[0-9]+]] : i64, live = array<i64: {{[0-9]+}}, {{[0-9]+}}>, name = "op0.c.amp_output", tiles = array<i32: 0, 1, 2, 3>}
// CHECK-NOT: address =
// Streams: strided host pieces, rows of (tile, buffer, buffer offset, tensor offset, bytes,
// runs, stride); every run is 16 elements (32 B), one tensor row (128 B) after the last.
// Tile j's A home gets K-group j of all 32 rows, its B home the 64 rows of column block j
// (already AMP-right order), and C's block j is read back from its AMP-output buffer.
// CHECK-NEXT: "ipu_tile.stream"() {name = "arg0", pieces = [array<i64: 0, [[A_HOME]], 0, 0, 1024, 32, 128>, array<i64: 1, [[A_HOME]], 0, 32, 1024, 32, 128>, array<i64: 2, [[A_HOME]], 0, 64, 1024, 32, 128>, array<i64: 3, [[A_HOME]], 0, 96, 1024, 32, 128>], precision = "f16", role = "input", shape = array<i64: 32, 64>}
// CHECK-NEXT: "ipu_tile.stream"() {name = "arg1", pieces = [array<i64: 0, [[B_HOME]], 0, 0, 2048, 64, 128>, array<i64: 1, [[B_HOME]], 0, 32, 2048, 64, 128>, array<i64: 2, [[B_HOME]], 0, 64, 2048, 64, 128>, array<i64: 3, [[B_HOME]], 0, 96, 2048, 64, 128>], precision = "f16", role = "input", shape = array<i64: 64, 64>}
// CHECK-NEXT: "ipu_tile.stream"() {name = "result0", pieces = [array<i64: 0, [[C_AMP]], 0, 0, 1024, 32, 128>, array<i64: 1, [[C_AMP]], 0, 32, 1024, 32, 128>, array<i64: 2, [[C_AMP]], 0, 64, 1024, 32, 128>, array<i64: 3, [[C_AMP]], 0, 96, 1024, 32, 128>], precision = "f16", role = "output", shape = array<i64: 32, 64>}
// The inputs are written first and C is read last. In between, one exchange phase for the
// one K panel: every tile broadcasts its A home to the other three, at the range's place
// in their AMP-left panel (move records of source tile, source buffer and offset,
// destination buffer and offset, bytes, destination count, destinations). Then one compute
// step (records of tile, kernel, argument count, then (buffer, offset) or (-1, value) per
// argument): each tile copies its own A range and its B home into the panels and runs the
// GEMM. Nothing is packed or rearranged on the device.
// CHECK-NEXT: "ipu_tile.host_write"() {program = "run", stream = "arg0"}
// CHECK-NEXT: "ipu_tile.host_write"() {program = "run", stream = "arg1"}
// CHECK-NEXT: "ipu_tile.exchange"() {moves = array<i64: 0, [[A_HOME]], 0, [[A_PANEL]], 0, 1024, 3, 1, 2, 3, 1, [[A_HOME]], 0, [[A_PANEL]], 1024, 1024, 3, 0, 2, 3, 2, [[A_HOME]], 0, [[A_PANEL]], 2048, 1024, 3, 0, 1, 3, 3, [[A_HOME]], 0, [[A_PANEL]], 3072, 1024, 3, 0, 1, 2>, phase = 0 : i64, program = "run"}
// CHECK-NEXT: "ipu_tile.compute"() {program = "run", provenance = "op0", runs = array<i64: 0, [[COPY_A]], 2, [[A_HOME]], 0, [[A_PANEL]], 0, 0, [[COPY_B]], 2, [[B_HOME]], 0, [[B_PANEL]], 0, 0, [[GEMM]], 6, [[A_PANEL]], 0, [[B_PANEL]], 0, [[C_AMP]], 0, -1, 0, -1, 0, -1, 0, 1, [[COPY_A]], 2, [[A_HOME]], 0, [[A_PANEL]], 1024, 1, [[COPY_B]], 2, [[B_HOME]], 0, [[B_PANEL]], 0, 1, [[GEMM]], 6, [[A_PANEL]], 0, [[B_PANEL]], 0, [[C_AMP]], 0, -1, 0, -1, 0, -1, 0, 2, [[COPY_A]], 2, [[A_HOME]], 0, [[A_PANEL]], 2048, 2, [[COPY_B]], 2, [[B_HOME]], 0, [[B_PANEL]], 0, 2, [[GEMM]], 6, [[A_PANEL]], 0, [[B_PANEL]], 0, [[C_AMP]], 0, -1, 0, -1, 0, -1, 0, 3, [[COPY_A]], 2, [[A_HOME]], 0, [[A_PANEL]], 3072, 3, [[COPY_B]], 2, [[B_HOME]], 0, [[B_PANEL]], 0, 3, [[GEMM]], 6, [[A_PANEL]], 0, [[B_PANEL]], 0, [[C_AMP]], 0, -1, 0, -1, 0, -1, 0>}
// CHECK-NEXT: "ipu_tile.host_read"() {program = "run", stream = "result0"}
// CHECK-NEXT: }
// CHECK-NOT: ipu_tile.support
// CHECK-NOT: ipu_tile.code

// LOG: split GEMM grid op=0 grid=[1, 1, 4, 1] panels=1 k_panel=64
// LOG: lowered graph for package construction logical_shards=20 exchange_phases=1
// LOG: pass finished pass=ipu-lower-to-tiles op=builtin.module elapsed_ms={{[0-9]+}} success=true

// Five buffers on four tiles.
// STATS: IpuLowerToTiles
// STATS-DAG: (S) 1 exchange-phases - exchange phases
// STATS-DAG: (S) 20 logical-shards - (buffer, tile) pairs

// @k_split, 16x512x32 on 4 tiles: grid [1, 1, 1, 4], each tile one K slice of 128 (one panel).
// With one row block and one column block every home is its tile's whole panel, so the
// panel needs no exchange phase. Tile l's 16x32 partial block (1024 B, AMP-output order) is
// cut into four ranges of 256 B; the one exchange phase sends every other tile's range l into
// a stack of three on tile l (op0.c.partials), and op0.reduce reduce-adds the stack into op0.c
// and adds the tile's own range. The host reads each reduced range (8 rows x 16 columns).
// KSPLIT: split GEMM grid op=0 grid=[1, 1, 1, 4] panels=1 k_panel=128
// KSPLIT: lowered graph for package construction logical_shards=28 exchange_phases=1
// KSPLIT: module @k_split.tiles
// KSPLIT-DAG: "ipu_tile.kernel"() {index = [[REDUCE:[0-9]+]] : i64, name = "reduce_add_f16_f16_n128_p3", spec = "{{.*}}"}
// KSPLIT-DAG: "ipu_tile.kernel"() {index = [[ADD:[0-9]+]] : i64, name = "add_f16_r1_c128_b1", spec = "{{.*}}"}
// KSPLIT-DAG: "ipu_tile.kernel"() {index = {{[0-9]+}} : i64, name = "gemm_f16_interleaved_k128_c32_r16", spec = "{{.*}}"}
// KSPLIT-DAG: "ipu_tile.buffer"() {bytes = 4096 : i64, class = "standard", id = [[K_A_HOME:[0-9]+]] : i64, {{.*}}name = "op0.a.home"
// KSPLIT-DAG: "ipu_tile.buffer"() {bytes = 8192 : i64, class = "standard", id = [[K_B_HOME:[0-9]+]] : i64, {{.*}}name = "op0.b.home"
// KSPLIT-DAG: "ipu_tile.buffer"() {bytes = 1024 : i64, class = "interleaved", id = [[K_C_AMP:[0-9]+]] : i64, {{.*}}name = "op0.c.amp_output"
// KSPLIT-DAG: "ipu_tile.buffer"() {bytes = 768 : i64, class = "standard", id = [[K_STACK:[0-9]+]] : i64, {{.*}}name = "op0.c.partials"
// KSPLIT-DAG: "ipu_tile.buffer"() {bytes = 256 : i64, class = "interleaved", id = [[K_C:[0-9]+]] : i64, {{.*}}name = "op0.c", tiles = array<i32: 0, 1, 2, 3>}
// Tile 0's A home: the eight 16-groups of K 0..127, 16 rows each, one tensor row (1024 B) apart.
// KSPLIT: "ipu_tile.stream"() {name = "arg0", pieces = [array<i64: 0, [[K_A_HOME]], 0, 0, 512, 16, 1024>, array<i64: 0, [[K_A_HOME]], 512, 32, 512, 16, 1024>, array<i64: 0, [[K_A_HOME]], 1024, 64, 512, 16, 1024>, array<i64: 0, [[K_A_HOME]], 1536, 96, 512, 16, 1024>, array<i64: 0, [[K_A_HOME]], 2048, 128, 512, 16, 1024>, array<i64: 0, [[K_A_HOME]], 2560, 160, 512, 16, 1024>, array<i64: 0, [[K_A_HOME]], 3072, 192, 512, 16, 1024>, array<i64: 0, [[K_A_HOME]], 3584, 224, 512, 16, 1024>, array<i64: 1, [[K_A_HOME]], 0, 256, 512, 16, 1024>
// KSPLIT-NEXT: "ipu_tile.stream"() {name = "arg1", pieces = [array<i64: 0, [[K_B_HOME]], 0, 0, 4096, 128, 64>, array<i64: 0, [[K_B_HOME]], 4096, 32, 4096, 128, 64>, array<i64: 1, [[K_B_HOME]], 0, 8192, 4096, 128, 64>, array<i64: 1, [[K_B_HOME]], 4096, 8224, 4096, 128, 64>, array<i64: 2, [[K_B_HOME]], 0, 16384, 4096, 128, 64>, array<i64: 2, [[K_B_HOME]], 4096, 16416, 4096, 128, 64>, array<i64: 3, [[K_B_HOME]], 0, 24576, 4096, 128, 64>, array<i64: 3, [[K_B_HOME]], 4096, 24608, 4096, 128, 64>], precision = "f16", role = "input", shape = array<i64: 512, 32>}
// KSPLIT-NEXT: "ipu_tile.stream"() {name = "result0", pieces = [array<i64: 0, [[K_C]], 0, 0, 256, 8, 64>, array<i64: 1, [[K_C]], 0, 512, 256, 8, 64>, array<i64: 2, [[K_C]], 0, 32, 256, 8, 64>, array<i64: 3, [[K_C]], 0, 544, 256, 8, 64>], precision = "f16", role = "output", shape = array<i64: 16, 32>}
// KSPLIT-NEXT: "ipu_tile.host_write"() {program = "run", stream = "arg0"}
// KSPLIT-NEXT: "ipu_tile.host_write"() {program = "run", stream = "arg1"}
// KSPLIT-NEXT: "ipu_tile.compute"() {program = "run", provenance = "op0", runs = array<i64: {{.*}}>}
// KSPLIT-NEXT: "ipu_tile.exchange"() {moves = array<i64: 1, [[K_C_AMP]], 0, [[K_STACK]], 0, 256, 1, 0, 2, [[K_C_AMP]], 0, [[K_STACK]], 256, 256, 1, 0, 3, [[K_C_AMP]], 0, [[K_STACK]], 512, 256, 1, 0, 0, [[K_C_AMP]], 256, [[K_STACK]], 0, 256, 1, 1, 2, [[K_C_AMP]], 256, [[K_STACK]], 256, 256, 1, 1, 3, [[K_C_AMP]], 256, [[K_STACK]], 512, 256, 1, 1, 0, [[K_C_AMP]], 512, [[K_STACK]], 0, 256, 1, 2, 1, [[K_C_AMP]], 512, [[K_STACK]], 256, 256, 1, 2, 3, [[K_C_AMP]], 512, [[K_STACK]], 512, 256, 1, 2, 0, [[K_C_AMP]], 768, [[K_STACK]], 0, 256, 1, 3, 1, [[K_C_AMP]], 768, [[K_STACK]], 256, 256, 1, 3, 2, [[K_C_AMP]], 768, [[K_STACK]], 512, 256, 1, 3>, phase = 0 : i64, program = "run"}
// KSPLIT-NEXT: "ipu_tile.compute"() {program = "run", provenance = "op0.reduce", runs = array<i64: 0, [[REDUCE]], 2, [[K_STACK]], 0, [[K_C]], 0, 0, [[ADD]], 3, [[K_C]], 0, [[K_C_AMP]], 0, [[K_C]], 0, 1, [[REDUCE]], 2, [[K_STACK]], 0, [[K_C]], 0, 1, [[ADD]], 3, [[K_C]], 0, [[K_C_AMP]], 256, [[K_C]], 0, 2, [[REDUCE]], 2, [[K_STACK]], 0, [[K_C]], 0, 2, [[ADD]], 3, [[K_C]], 0, [[K_C_AMP]], 512, [[K_C]], 0, 3, [[REDUCE]], 2, [[K_STACK]], 0, [[K_C]], 0, 3, [[ADD]], 3, [[K_C]], 0, [[K_C_AMP]], 768, [[K_C]], 0>}
// KSPLIT-NEXT: "ipu_tile.host_read"() {program = "run", stream = "result0"}

// @gemm_then_gelu, the same 32x64x64 product feeding a gelu, is the split GEMM of @gemm
// (grid [1, 1, 4, 1]): the same copies, GEMM, homes, panels, host pieces, exchange phase and
// GEMM runs, plus the gelu over each tile's whole 32x16 block (512 elements). C's AMP-output
// block is in standard memory here; op1 runs the gelu on it in place (source and result the
// same buffer and offset) and the host reads the result back from it: no rearrange, no
// second exchange phase.
// GELU: split GEMM grid op=0 grid=[1, 1, 4, 1] panels=1 k_panel=64
// GELU: lowered graph for package construction logical_shards=20 exchange_phases=1
// GELU-LABEL: module @gemm_then_gelu.tiles
// GELU-NEXT: "ipu_tile.op"() {estimate = 0 : i64, op = "ipu.matmul", provenance = "op0"}
// GELU-NEXT: "ipu_tile.op"() {estimate = 0 : i64, op = "ipu.gelu", provenance = "op1"}
// GELU-NEXT: "ipu_tile.kernel"() {index = [[G_COPY_A:[0-9]+]] : i64, name = "copy_b1024", spec = "{{.*}}"}
// GELU-NEXT: "ipu_tile.kernel"() {index = [[G_COPY_B:[0-9]+]] : i64, name = "copy_b2048", spec = "{{.*}}"}
// GELU-NEXT: "ipu_tile.kernel"() {index = [[G_GEMM:[0-9]+]] : i64, name = "gemm_f16_interleaved_k64_c16_r32", spec = "{{.*}}"}
// GELU-NEXT: "ipu_tile.kernel"() {index = [[G_GELU:[0-9]+]] : i64, name = "gelu_tanh_f16_n512", spec = "{\22Gelu\22:{\22precision\22:\22F16\22,\22form\22:\22Tanh\22,\22elements\22:512}}"}
// GELU-NEXT: "ipu_tile.buffer"() {bytes = 1024 : i64, class = "standard", id = [[G_A_HOME:[0-9]+]] : i64, live = array<i64: {{[0-9]+}}, {{[0-9]+}}>, name = "op0.a.home", tiles = array<i32: 0, 1, 2, 3>}
// GELU-NEXT: "ipu_tile.buffer"() {bytes = 2048 : i64, class = "standard", id = [[G_B_HOME:[0-9]+]] : i64, live = array<i64: {{[0-9]+}}, {{[0-9]+}}>, name = "op0.b.home", tiles = array<i32: 0, 1, 2, 3>}
// GELU-NEXT: "ipu_tile.buffer"() {bytes = 4096 : i64, class = "interleaved", id = [[G_A_PANEL:[0-9]+]] : i64, live = array<i64: {{[0-9]+}}, {{[0-9]+}}>, name = "op0.a.amp_left", tiles = array<i32: 0, 1, 2, 3>}
// GELU-NEXT: "ipu_tile.buffer"() {bytes = 2048 : i64, class = "interleaved", id = [[G_B_PANEL:[0-9]+]] : i64, live = array<i64: {{[0-9]+}}, {{[0-9]+}}>, name = "op0.b.amp_right", tiles = array<i32: 0, 1, 2, 3>}
// GELU-NEXT: "ipu_tile.buffer"() {bytes = 1024 : i64, class = "standard", id = [[G_C:[0-9]+]] : i64, live = array<i64: {{[0-9]+}}, {{[0-9]+}}>, name = "op0.c.amp_output", tiles = array<i32: 0, 1, 2, 3>}
// GELU-NEXT: "ipu_tile.stream"() {name = "arg0", pieces = [array<i64: 0, [[G_A_HOME]], 0, 0, 1024, 32, 128>, array<i64: 1, [[G_A_HOME]], 0, 32, 1024, 32, 128>, array<i64: 2, [[G_A_HOME]], 0, 64, 1024, 32, 128>, array<i64: 3, [[G_A_HOME]], 0, 96, 1024, 32, 128>], precision = "f16", role = "input", shape = array<i64: 32, 64>}
// GELU-NEXT: "ipu_tile.stream"() {name = "arg1", pieces = [array<i64: 0, [[G_B_HOME]], 0, 0, 2048, 64, 128>, array<i64: 1, [[G_B_HOME]], 0, 32, 2048, 64, 128>, array<i64: 2, [[G_B_HOME]], 0, 64, 2048, 64, 128>, array<i64: 3, [[G_B_HOME]], 0, 96, 2048, 64, 128>], precision = "f16", role = "input", shape = array<i64: 64, 64>}
// GELU-NEXT: "ipu_tile.stream"() {name = "result0", pieces = [array<i64: 0, [[G_C]], 0, 0, 1024, 32, 128>, array<i64: 1, [[G_C]], 0, 32, 1024, 32, 128>, array<i64: 2, [[G_C]], 0, 64, 1024, 32, 128>, array<i64: 3, [[G_C]], 0, 96, 1024, 32, 128>], precision = "f16", role = "output", shape = array<i64: 32, 64>}
// GELU-NEXT: "ipu_tile.host_write"() {program = "run", stream = "arg0"}
// GELU-NEXT: "ipu_tile.host_write"() {program = "run", stream = "arg1"}
// GELU-NEXT: "ipu_tile.exchange"() {moves = array<i64: 0, [[G_A_HOME]], 0, [[G_A_PANEL]], 0, 1024, 3, 1, 2, 3, 1, [[G_A_HOME]], 0, [[G_A_PANEL]], 1024, 1024, 3, 0, 2, 3, 2, [[G_A_HOME]], 0, [[G_A_PANEL]], 2048, 1024, 3, 0, 1, 3, 3, [[G_A_HOME]], 0, [[G_A_PANEL]], 3072, 1024, 3, 0, 1, 2>, phase = 0 : i64, program = "run"}
// GELU-NEXT: "ipu_tile.compute"() {program = "run", provenance = "op0", runs = array<i64: 0, [[G_COPY_A]], 2, [[G_A_HOME]], 0, [[G_A_PANEL]], 0, 0, [[G_COPY_B]], 2, [[G_B_HOME]], 0, [[G_B_PANEL]], 0, 0, [[G_GEMM]], 6, [[G_A_PANEL]], 0, [[G_B_PANEL]], 0, [[G_C]], 0, -1, 0, -1, 0, -1, 0, 1, [[G_COPY_A]], 2, [[G_A_HOME]], 0, [[G_A_PANEL]], 1024, 1, [[G_COPY_B]], 2, [[G_B_HOME]], 0, [[G_B_PANEL]], 0, 1, [[G_GEMM]], 6, [[G_A_PANEL]], 0, [[G_B_PANEL]], 0, [[G_C]], 0, -1, 0, -1, 0, -1, 0, 2, [[G_COPY_A]], 2, [[G_A_HOME]], 0, [[G_A_PANEL]], 2048, 2, [[G_COPY_B]], 2, [[G_B_HOME]], 0, [[G_B_PANEL]], 0, 2, [[G_GEMM]], 6, [[G_A_PANEL]], 0, [[G_B_PANEL]], 0, [[G_C]], 0, -1, 0, -1, 0, -1, 0, 3, [[G_COPY_A]], 2, [[G_A_HOME]], 0, [[G_A_PANEL]], 3072, 3, [[G_COPY_B]], 2, [[G_B_HOME]], 0, [[G_B_PANEL]], 0, 3, [[G_GEMM]], 6, [[G_A_PANEL]], 0, [[G_B_PANEL]], 0, [[G_C]], 0, -1, 0, -1, 0, -1, 0>}
// GELU-NEXT: "ipu_tile.compute"() {program = "run", provenance = "op1", runs = array<i64: 0, [[G_GELU]], 2, [[G_C]], 0, [[G_C]], 0, 1, [[G_GELU]], 2, [[G_C]], 0, [[G_C]], 0, 2, [[G_GELU]], 2, [[G_C]], 0, [[G_C]], 0, 3, [[G_GELU]], 2, [[G_C]], 0, [[G_C]], 0>}
// GELU-NEXT: "ipu_tile.host_read"() {program = "run", stream = "result0"}
// GELU-NEXT: }

// @gemm_then_add, the same 32x64x64 product added to a third input, keeps the
// output-stationary lowering: N = 64 is one column block of 64, M splits into 4 row blocks
// of 8 rows; tile i owns C rows 8i..8i+8. The host writes A's row block i and B's 16-row
// chunk i to tile i in row-major order; op0.convert packs them into AMP order on the device
// (A into the AMP-left operand, B's chunk into a staging buffer whose column groups tile i
// copies into its own AMP-right operand), one exchange phase broadcasts every converted
// chunk's column groups (512 B each) to the other three tiles, op0 runs the GEMM and
// op0.output rearranges C to row-major; then the host writes the third input's row block i
// to tile i and op1 adds it to C.
// STATIONARY-NOT: split GEMM grid
// STATIONARY: lowered graph for package construction logical_shards=36 exchange_phases=1
// STATIONARY-LABEL: module @gemm_then_add.tiles
// STATIONARY-NEXT: "ipu_tile.op"() {estimate = 0 : i64, op = "ipu.matmul", provenance = "op0"}
// STATIONARY-NEXT: "ipu_tile.op"() {estimate = 0 : i64, op = "ipu.add", provenance = "op1"}
// STATIONARY-DAG: "ipu_tile.kernel"() {index = [[LEFT:[0-9]+]] : i64, name = "rearrange_amp_left_f16_o0_r8_p8_c64_p64", spec = "{{.*}}"}
// STATIONARY-DAG: "ipu_tile.kernel"() {index = [[RIGHT:[0-9]+]] : i64, name = "rearrange_amp_right_f16_o0_r16_p16_c64_p64", spec = "{{.*}}"}
// STATIONARY-DAG: "ipu_tile.kernel"() {index = [[COPY:[0-9]+]] : i64, name = "copy_b512", spec = "{{.*}}"}
// STATIONARY-DAG: "ipu_tile.kernel"() {index = [[SGEMM:[0-9]+]] : i64, name = "gemm_f16_interleaved_k64_c64_r8", spec = "{{.*}}"}
// STATIONARY-DAG: "ipu_tile.kernel"() {index = [[FROM_AMP:[0-9]+]] : i64, name = "rearrange_from_amp_output_f16_o0_r8_p8_c64_p64", spec = "{{.*}}"}
// STATIONARY-DAG: "ipu_tile.kernel"() {index = [[S_ADD:[0-9]+]] : i64, name = "add_f16_r8_c64_b8", spec = "{{.*}}"}
// STATIONARY-DAG: "ipu_tile.buffer"() {bytes = 1024 : i64, class = "standard", id = [[A:[0-9]+]] : i64, live = array<i64: {{[0-9]+}}, {{[0-9]+}}>, name = "op0.a", tiles = array<i32: 0, 1, 2, 3>}
// STATIONARY-DAG: "ipu_tile.buffer"() {bytes = 2048 : i64, class = "standard", id = [[B:[0-9]+]] : i64, {{.*}}name = "op0.b", tiles = array<i32: 0, 1, 2, 3>}
// STATIONARY-DAG: "ipu_tile.buffer"() {bytes = 2048 : i64, class = "standard", id = [[STAGE:[0-9]+]] : i64, {{.*}}name = "op0.b.amp_chunk"
// STATIONARY-DAG: "ipu_tile.buffer"() {bytes = 1024 : i64, class = "interleaved", id = [[A_AMP:[0-9]+]] : i64, {{.*}}name = "op0.a.amp_left"
// STATIONARY-DAG: "ipu_tile.buffer"() {bytes = 8192 : i64, class = "interleaved", id = [[B_AMP:[0-9]+]] : i64, {{.*}}name = "op0.b.amp_right"
// STATIONARY-DAG: "ipu_tile.buffer"() {bytes = 1024 : i64, class = "standard", id = [[SC_AMP:[0-9]+]] : i64, {{.*}}name = "op0.c.amp_output"
// STATIONARY-DAG: "ipu_tile.buffer"() {bytes = 1024 : i64, class = "standard", id = [[SC:[0-9]+]] : i64, {{.*}}name = "op0.c"
// STATIONARY-DAG: "ipu_tile.buffer"() {bytes = 1024 : i64, class = "standard", id = [[R:[0-9]+]] : i64, {{.*}}name = "arg2.home"
// STATIONARY-DAG: "ipu_tile.buffer"() {bytes = 1024 : i64, class = "standard", id = [[OUT:[0-9]+]] : i64, {{.*}}name = "op1.out"
// STATIONARY-NOT: address =
// Contiguous pieces, printed in the compact form of one array of rows of 5 (tile, buffer,
// buffer offset, tensor offset, bytes): one 128 B tensor row each for A's row block i and
// B's 16-row chunk i on tile i and the add's result read back from every tile; the third
// input's row block i (1 KiB) in one piece on tile i.
// STATIONARY: "ipu_tile.stream"() {name = "arg0", pieces = array<i64: 0, [[A]], 0, 0, 128, 0, [[A]], 128, 128, 128, {{.*}}, 3, [[A]], 896, 3968, 128>, precision = "f16", role = "input", shape = array<i64: 32, 64>}
// STATIONARY-NEXT: "ipu_tile.stream"() {name = "arg1", pieces = array<i64: 0, [[B]], 0, 0, 128, {{.*}}, 3, [[B]], 1920, 8064, 128>, precision = "f16", role = "input", shape = array<i64: 64, 64>}
// STATIONARY-NEXT: "ipu_tile.stream"() {name = "arg2", pieces = array<i64: 0, [[R]], 0, 0, 1024, 1, [[R]], 0, 1024, 1024, 2, [[R]], 0, 2048, 1024, 3, [[R]], 0, 3072, 1024>, precision = "f16", role = "input", shape = array<i64: 32, 64>}
// STATIONARY-NEXT: "ipu_tile.stream"() {name = "result0", pieces = array<i64: 0, [[OUT]], 0, 0, 128, {{.*}}, 3, [[OUT]], 896, 3968, 128>, precision = "f16", role = "output", shape = array<i64: 32, 64>}
// STATIONARY-NEXT: "ipu_tile.host_write"() {program = "run", stream = "arg0"}
// STATIONARY-NEXT: "ipu_tile.host_write"() {program = "run", stream = "arg1"}
// Tile 0 packs A's row block and B's chunk and copies the chunk's four column groups into
// its own AMP-right operand (at 0, 2048, 4096, 6144); tiles 1..3 follow.
// STATIONARY-NEXT: "ipu_tile.compute"() {program = "run", provenance = "op0.convert", runs = array<i64: 0, [[LEFT]], 2, [[A]], 0, [[A_AMP]], 0, 0, [[RIGHT]], 2, [[B]], 0, [[STAGE]], 0, 0, [[COPY]], 2, [[STAGE]], 0, [[B_AMP]], 0, 0, [[COPY]], 2, [[STAGE]], 512, [[B_AMP]], 2048, 0, [[COPY]], 2, [[STAGE]], 1024, [[B_AMP]], 4096, 0, [[COPY]], 2, [[STAGE]], 1536, [[B_AMP]], 6144, 1, [[LEFT]], {{.*}}>}
// STATIONARY-NEXT: "ipu_tile.exchange"() {moves = array<i64: 0, [[STAGE]], 0, [[B_AMP]], 0, 512, 3, 1, 2, 3, 0, [[STAGE]], 512, [[B_AMP]], 2048, 512, 3, 1, 2, 3, {{.*}}>, phase = 0 : i64, program = "run"}
// STATIONARY-NEXT: "ipu_tile.compute"() {program = "run", provenance = "op0", runs = array<i64: 0, [[SGEMM]], 6, [[A_AMP]], 0, [[B_AMP]], 0, [[SC_AMP]], 0, -1, 0, -1, 0, -1, 0, {{.*}}>}
// STATIONARY-NEXT: "ipu_tile.compute"() {program = "run", provenance = "op0.output", runs = array<i64: 0, [[FROM_AMP]], 2, [[SC_AMP]], 0, [[SC]], 0, {{.*}}>}
// STATIONARY-NEXT: "ipu_tile.host_write"() {program = "run", stream = "arg2"}
// STATIONARY-NEXT: "ipu_tile.compute"() {program = "run", provenance = "op1", runs = array<i64: 0, [[S_ADD]], 3, [[SC]], 0, [[R]], 0, [[OUT]], 0, {{.*}}>}
// STATIONARY-NEXT: "ipu_tile.host_read"() {program = "run", stream = "result0"}

func.func @gemm(%x: tensor<32x64xf16>, %w: tensor<64x64xf16>) -> tensor<32x64xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
  return %y : tensor<32x64xf16>
}

func.func @gemm_then_gelu(%x: tensor<32x64xf16>, %w: tensor<64x64xf16>) -> tensor<32x64xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
  %z = "ipu.gelu"(%y) {approximate = "tanh"} : (tensor<32x64xf16>) -> tensor<32x64xf16>
  return %z : tensor<32x64xf16>
}

func.func @k_split(%x: tensor<16x512xf16>, %w: tensor<512x32xf16>) -> tensor<16x32xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<16x512xf16>, tensor<512x32xf16>) -> tensor<16x32xf16>
  return %y : tensor<16x32xf16>
}

func.func @gemm_then_add(%x: tensor<32x64xf16>, %w: tensor<64x64xf16>, %r: tensor<32x64xf16>) -> tensor<32x64xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
  %z = "ipu.add"(%y, %r) : (tensor<32x64xf16>, tensor<32x64xf16>) -> tensor<32x64xf16>
  return %z : tensor<32x64xf16>
}
