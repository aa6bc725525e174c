// ipu-place-storage sizes the package support memory of every tile (an ipu_tile.support op)
// and gives every buffer an absolute address: lifetimes recomputed from the steps, largest
// first at the lowest free aligned address of its class, planned standard data from the
// first 16 KiB element after the support code.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4}, ipu-place-storage)' | FileCheck %s
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4}, ipu-place-storage{target=bow})' | FileCheck %s
// RUN: env RUST_LOG=info ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4}, ipu-place-storage)' -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOG
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4}, ipu-place-storage)' --mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS
// Placing twice gives the same addresses.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4}, ipu-place-storage)' -o %t.placed.mlir
// RUN: ipu-opt %t.placed.mlir -p 'builtin.module(ipu-place-storage)' | diff %t.placed.mlir -

// Standard data starts at 0x58000 (360448, element 22). Largest first: B's host chunk
// (16 K rows x 64 columns, 2 KiB) takes it, its AMP-right staging follows, then A (one row
// block of 8 x 64); the AMP operands are interleaved, B's first (0x80000), A's after it;
// C's AMP output and row-major copies (live only from the GEMM on) reuse B's place once B
// and its staging are dead.
// CHECK-LABEL: module @gemm.tiles
// CHECK: "ipu_tile.buffer"() {address = 364544 : i64, bytes = 1024 : i64, class = "standard", id = {{[0-9]+}} : i64, live = array<i64: 0, {{[0-9]+}}>, name = "op0.a"
// CHECK-NEXT: "ipu_tile.buffer"() {address = 360448 : i64, bytes = 2048 : i64, class = "standard", id = {{[0-9]+}} : i64, live = array<i64: 1, {{[0-9]+}}>, name = "op0.b"
// CHECK-NEXT: "ipu_tile.buffer"() {address = 532480 : i64, bytes = 1024 : i64, class = "interleaved", id = {{[0-9]+}} : i64, live = array<i64: {{[0-9]+}}, {{[0-9]+}}>, name = "op0.a.amp_left"
// CHECK-NEXT: "ipu_tile.buffer"() {address = 524288 : i64, bytes = 8192 : i64, class = "interleaved", id = {{[0-9]+}} : i64, live = array<i64: {{[0-9]+}}, {{[0-9]+}}>, name = "op0.b.amp_right"
// CHECK-NEXT: "ipu_tile.buffer"() {address = 362496 : i64, bytes = 2048 : i64, class = "standard", id = {{[0-9]+}} : i64, live = array<i64: {{[0-9]+}}, {{[0-9]+}}>, name = "op0.b.amp_chunk"
// CHECK-NEXT: "ipu_tile.buffer"() {address = 360448 : i64, bytes = 1024 : i64, class = "standard", id = {{[0-9]+}} : i64, live = array<i64: {{[0-9]+}}, {{[0-9]+}}>, name = "op0.c.amp_output"
// CHECK-NEXT: "ipu_tile.buffer"() {address = 361472 : i64, bytes = 1024 : i64, class = "standard", id = {{[0-9]+}} : i64, live = array<i64: {{[0-9]+}}, 6>, name = "op0.c"
// Support: the linked runtime, the profile counters, the busiest tile's exchange table rows
// (16 B each: it sends its 4 column groups to 3 tiles and receives 12), host code, 7 steps
// of generated code (8 B each).
// CHECK: "ipu_tile.support"() {code_address = 318352 : i64, exchange_table_bytes = 256 : i64, generated_code_bytes = 56 : i64, host_code_bytes = 436 : i64, interleaved_ranges = array<i64: 524288, 949168>, linked_end = 317624 : i64, profile_bytes = 32 : i64, standard_ranges = array<i64: 360448, 524288>}
// Placement adds no schedule and no code.
// CHECK-NOT: schedule
// CHECK-NOT: ipu_tile.code

// LOG: allocated package support memory linked_end=317624 profile_bytes=32 exchange_table_bytes=256 host_code_bytes=436 generated_code_bytes=56 code_address=318352 standard_ranges=[(360448, 524288)]
// LOG: pass finished pass=ipu-place-storage op=builtin.module elapsed_ms={{[0-9]+}} success=true

// STATS: IpuPlaceStorage
// STATS-NEXT: (S) 7 buffers - buffers placed

func.func @gemm(%x: tensor<32x64xf16>, %w: tensor<64x64xf16>) -> tensor<32x64xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
  return %y : tensor<32x64xf16>
}
