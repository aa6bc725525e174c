// ipu-lower-to-tiles turns the graph function into an ipu_tile program: a nested module of
// kernels, buffers (no addresses yet), host streams, one broadcast exchange phase (no schedule
// yet) and compute steps, beside the function, which stays as it is.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4})' | FileCheck %s
// RUN: env RUST_LOG=info ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOG
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4})' --mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS

// 32x64x64 on 4 tiles: N = 64 is one column block of 64, M splits into 4 row blocks of 8
// rows; tile i owns C rows 8i..8i+8. A's row block i is streamed to tile i, B (one column
// block) to tile 0, which broadcasts it to tiles 1, 2 and 3.

// CHECK-LABEL: func.func @gemm
// CHECK: "ipu.matmul"
// CHECK: module @gemm.tiles attributes {ipu_tile.function = "gemm", ipu_tile.target = "c600", ipu_tile.tiles = 1472 : i64} {
// CHECK-NEXT: "ipu_tile.op"() {estimate = 0 : i64, op = "ipu.matmul", provenance = "op0"}
// Kernel specializations, named as in the seed.
// CHECK-DAG: "ipu_tile.kernel"() {index = {{[0-9]+}} : i64, name = "rearrange_amp_left_f16_o0_r8_p8_c64_p64", spec = "{{.*}}"}
// CHECK-DAG: "ipu_tile.kernel"() {index = {{[0-9]+}} : i64, name = "rearrange_amp_right_f16_o0_r16_p16_c64_p64"
// CHECK-DAG: "ipu_tile.kernel"() {index = 3 : i64, name = "gemm_f16_interleaved_k64_c64_r8"
// CHECK-DAG: "ipu_tile.kernel"() {index = 4 : i64, name = "rearrange_from_amp_output_f16_o0_r8_p8_c64_p64"
// Buffers: one address on all four tiles, B's AMP copy in interleaved memory; no address yet.
// CHECK-DAG: "ipu_tile.buffer"() {bytes = 1024 : i64, class = "standard", id = {{[0-9]+}} : i64, live = array<i64: {{[0-9]+}}, {{[0-9]+}}>, name = "op0.a", tiles = array<i32: 0, 1, 2, 3>}
// CHECK-DAG: "ipu_tile.buffer"() {bytes = 2048 : i64, class = "standard", id = {{[0-9]+}} : i64, {{.*}}name = "op0.b", tiles = array<i32: 0, 1, 2, 3>}
// CHECK-DAG: "ipu_tile.buffer"() {bytes = 2048 : i64, class = "standard", id = {{[0-9]+}} : i64, {{.*}}name = "op0.b.amp_chunk"
// CHECK-DAG: "ipu_tile.buffer"() {bytes = 1024 : i64, class = "interleaved", id = {{[0-9]+}} : i64, {{.*}}name = "op0.a.amp_left"
// CHECK-DAG: "ipu_tile.buffer"() {bytes = 8192 : i64, class = "interleaved", id = {{[0-9]+}} : i64, {{.*}}name = "op0.b.amp_right"
// CHECK-DAG: "ipu_tile.buffer"() {bytes = 1024 : i64, class = "standard", id = {{[0-9]+}} : i64, {{.*}}name = "op0.c.amp_output"
// CHECK-DAG: "ipu_tile.buffer"() {bytes = 1024 : i64, class = "standard", id = {{[0-9]+}} : i64, {{.*}}name = "op0.c"
// CHECK-NOT: address =
// Streams: rows of (tile, buffer, buffer offset, tensor offset, bytes): A's row block i on
// tile i, B's 16-row chunk i on tile i, C read back from every tile.
// CHECK: "ipu_tile.stream"() {name = "arg0", pieces = array<i64: 0, {{[0-9]+}}, 0, 0, {{.*}}, 3, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}>, precision = "f16", role = "input", shape = array<i64: 32, 64>}
// CHECK-NEXT: "ipu_tile.stream"() {name = "arg1", pieces = array<i64: 0, {{[0-9]+}}, 0, 0, {{.*}}>, precision = "f16", role = "input", shape = array<i64: 64, 64>}
// CHECK-NEXT: "ipu_tile.stream"() {name = "result0", pieces = array<i64: 0, [[C:[0-9]+]], 0, 0, {{.*}}, 3, [[C]], {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}>, precision = "f16", role = "output", shape = array<i64: 32, 64>}
// The inputs are written first and C is read last; in between, the compute steps (records of
// tile, kernel, argument count, then (buffer, offset) or (-1, value) per argument) and B's
// converted chunks, column group by column group (512 B from tile 0's staging to the AMP-right
// operand of tiles 1, 2 and 3 first: move records of source tile, source buffer and offset,
// destination buffer and offset, bytes, destination count, destinations).
// CHECK-NEXT: "ipu_tile.host_write"() {program = "run", stream = "arg0"}
// CHECK-NEXT: "ipu_tile.host_write"() {program = "run", stream = "arg1"}
// CHECK-DAG: "ipu_tile.exchange"() {moves = array<i64: 0, [[S:[0-9]+]], 0, [[B:[0-9]+]], 0, 512, 3, 1, 2, 3, {{.*}}>, phase = 0 : i64, program = "run"}
// CHECK-DAG: "ipu_tile.compute"() {program = "run", provenance = "op0", runs = array<i64: 0, 3, 6, {{.*}}, -1, 0, -1, 0, -1, 0>}
// CHECK-DAG: "ipu_tile.compute"() {program = "run", provenance = "op0.output", runs = array<i64: 0, 4, 2, {{.*}}>}
// CHECK: "ipu_tile.host_read"() {program = "run", stream = "result0"}
// CHECK-NEXT: }
// CHECK-NOT: ipu_tile.support
// CHECK-NOT: ipu_tile.code

// LOG: lowered graph for package construction logical_shards=28 exchange_phases=1
// LOG: pass finished pass=ipu-lower-to-tiles op=builtin.module elapsed_ms={{[0-9]+}} success=true

// STATS: IpuLowerToTiles
// STATS-DAG: (S) 1 exchange-phases - exchange phases
// STATS-DAG: (S) 28 logical-shards - (buffer, tile) pairs

func.func @gemm(%x: tensor<32x64xf16>, %w: tensor<64x64xf16>) -> tensor<32x64xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
  return %y : tensor<32x64xf16>
}
