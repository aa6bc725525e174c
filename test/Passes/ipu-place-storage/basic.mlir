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
// A K split: the reduction's buffers reuse the places of the homes and panels.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4 function=k_split}, ipu-place-storage)' | FileCheck %s --check-prefix=KSPLIT
// A matmul feeding a gelu is a split GEMM whose result the gelu rewrites in place: one more
// step, no more buffers.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4 function=gemm_then_gelu}, ipu-place-storage)' | FileCheck %s --check-prefix=GELU
// The output-stationary lowering (a matmul feeding an add of another full tensor, not a bias
// add): C's copies and the third input reuse the places of B and its staging.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4 function=gemm_then_add}, ipu-place-storage)' | FileCheck %s --check-prefix=STATIONARY

// @gemm is a split GEMM on grid [1, 1, 4, 1]; steps: 0 and 1 write A's and B's homes from
// the host, 2 broadcasts the A ranges into the AMP-left panel, 3 copies the own ranges and
// runs the GEMM, 4 reads C back. Standard data starts at 0x58000 (360448, element 22).
// Largest first: B's home (64 K rows x 16 columns, 2 KiB) takes it, A's home (a quarter of
// the AMP-left panel, 1 KiB) follows. The panels and C's AMP output are interleaved, all
// live at the GEMM, so none reuses another's place: A's panel (4 KiB) at 0x80000, B's
// after it, C's after that.
// CHECK-LABEL: module @gemm.tiles
// CHECK: "ipu_tile.buffer"() {address = 362496 : i64, bytes = 1024 : i64, class = "standard", id = {{[0-9]+}} : i64, live = array<i64: 0, 3>, name = "op0.a.home"
// CHECK-NEXT: "ipu_tile.buffer"() {address = 360448 : i64, bytes = 2048 : i64, class = "standard", id = {{[0-9]+}} : i64, live = array<i64: 1, 3>, name = "op0.b.home"
// CHECK-NEXT: "ipu_tile.buffer"() {address = 524288 : i64, bytes = 4096 : i64, class = "interleaved", id = {{[0-9]+}} : i64, live = array<i64: 2, 3>, name = "op0.a.amp_left"
// CHECK-NEXT: "ipu_tile.buffer"() {address = 528384 : i64, bytes = 2048 : i64, class = "interleaved", id = {{[0-9]+}} : i64, live = array<i64: 3, 3>, name = "op0.b.amp_right"
// CHECK-NEXT: "ipu_tile.buffer"() {address = 530432 : i64, bytes = 1024 : i64, class = "interleaved", id = {{[0-9]+}} : i64, live = array<i64: 3, 4>, name = "op0.c.amp_output"
// CHECK-NOT: "ipu_tile.buffer"
// Support: the linked runtime, the profile counters, the busiest tile's exchange table rows
// (16 B each: it broadcasts its A home once and receives the other three ranges), host code,
// 5 steps of generated code (8 B each).
// CHECK: "ipu_tile.support"() {code_address = 318160 : i64, exchange_table_bytes = 64 : i64, generated_code_bytes = 40 : i64, host_code_bytes = 436 : i64, interleaved_ranges = array<i64: 524288, 949168>, linked_end = 317624 : i64, profile_bytes = 32 : i64, standard_ranges = array<i64: 360448, 524288>}
// Placement adds no schedule and no code.
// CHECK-NOT: schedule
// CHECK-NOT: ipu_tile.code

// LOG: allocated package support memory linked_end=317624 profile_bytes=32 exchange_table_bytes=64 host_code_bytes=436 generated_code_bytes=40 code_address=318160 standard_ranges=[(360448, 524288)]
// LOG: pass finished pass=ipu-place-storage op=builtin.module elapsed_ms={{[0-9]+}} success=true

// STATS: IpuPlaceStorage
// STATS-NEXT: (S) 5 buffers - buffers placed

// @k_split is a split GEMM on grid [1, 1, 1, 4] (16x512x32, K slices of 128); steps: 0 and 1
// write the homes, 2 copies them into the panels and runs the GEMM, 3 sends the partial
// ranges, 4 reduces, 5 reads C back. The homes and panels die at step 2, so the reduce
// stack (op0.c.partials, standard) takes B's home's place and the reduced range (op0.c,
// interleaved) B's panel's; C's AMP output, still sent and added, keeps its own.
// KSPLIT-LABEL: module @k_split.tiles
// KSPLIT: "ipu_tile.buffer"() {address = 368640 : i64, bytes = 4096 : i64, class = "standard", id = {{[0-9]+}} : i64, live = array<i64: 0, 2>, name = "op0.a.home"
// KSPLIT-NEXT: "ipu_tile.buffer"() {address = [[B_HOME:360448]] : i64, bytes = 8192 : i64, class = "standard", id = {{[0-9]+}} : i64, live = array<i64: 1, 2>, name = "op0.b.home"
// KSPLIT-NEXT: "ipu_tile.buffer"() {address = 532480 : i64, bytes = 4096 : i64, class = "interleaved", id = {{[0-9]+}} : i64, live = array<i64: 2, 2>, name = "op0.a.amp_left"
// KSPLIT-NEXT: "ipu_tile.buffer"() {address = [[B_PANEL:524288]] : i64, bytes = 8192 : i64, class = "interleaved", id = {{[0-9]+}} : i64, live = array<i64: 2, 2>, name = "op0.b.amp_right"
// KSPLIT-NEXT: "ipu_tile.buffer"() {address = 536576 : i64, bytes = 1024 : i64, class = "interleaved", id = {{[0-9]+}} : i64, live = array<i64: 2, 4>, name = "op0.c.amp_output"
// KSPLIT-NEXT: "ipu_tile.buffer"() {address = [[B_HOME]] : i64, bytes = 768 : i64, class = "standard", id = {{[0-9]+}} : i64, live = array<i64: 3, 4>, name = "op0.c.partials"
// KSPLIT-NEXT: "ipu_tile.buffer"() {address = [[B_PANEL]] : i64, bytes = 256 : i64, class = "interleaved", id = {{[0-9]+}} : i64, live = array<i64: 4, 5>, name = "op0.c"
// The busiest tile sends three ranges and receives three; 6 steps.
// KSPLIT: "ipu_tile.support"() {code_address = {{[0-9]+}} : i64, exchange_table_bytes = 96 : i64, generated_code_bytes = 48 : i64,

// @gemm_then_gelu is @gemm's split GEMM followed by the gelu in place; steps: 0 and 1 write
// the homes, 2 broadcasts the A ranges, 3 runs the GEMM, 4 the gelu, 5 reads the result back.
// The homes and panels are placed as for @gemm; C's AMP-output block is in standard memory
// here, live from the GEMM to the read-back (through the gelu, which writes it in place),
// so it cannot reuse the homes' places (they die at the GEMM) and follows A's home.
// GELU-LABEL: module @gemm_then_gelu.tiles
// GELU: "ipu_tile.buffer"() {address = 362496 : i64, bytes = 1024 : i64, class = "standard", id = {{[0-9]+}} : i64, live = array<i64: 0, 3>, name = "op0.a.home"
// GELU-NEXT: "ipu_tile.buffer"() {address = 360448 : i64, bytes = 2048 : i64, class = "standard", id = {{[0-9]+}} : i64, live = array<i64: 1, 3>, name = "op0.b.home"
// GELU-NEXT: "ipu_tile.buffer"() {address = 524288 : i64, bytes = 4096 : i64, class = "interleaved", id = {{[0-9]+}} : i64, live = array<i64: 2, 3>, name = "op0.a.amp_left"
// GELU-NEXT: "ipu_tile.buffer"() {address = 528384 : i64, bytes = 2048 : i64, class = "interleaved", id = {{[0-9]+}} : i64, live = array<i64: 3, 3>, name = "op0.b.amp_right"
// GELU-NEXT: "ipu_tile.buffer"() {address = 363520 : i64, bytes = 1024 : i64, class = "standard", id = {{[0-9]+}} : i64, live = array<i64: 3, 5>, name = "op0.c.amp_output"
// GELU-NOT: "ipu_tile.buffer"
// The same exchange table as @gemm; 6 steps of generated code.
// GELU: "ipu_tile.support"() {code_address = 318160 : i64, exchange_table_bytes = 64 : i64, generated_code_bytes = 48 : i64, host_code_bytes = 436 : i64,

// @gemm_then_add keeps the output-stationary lowering; steps: 0 and 1 write A and B, 2 packs
// them, 3 broadcasts the converted B chunks, 4 runs the GEMM, 5 rearranges C to row-major,
// 6 writes the third input, 7 adds, 8 reads the result back. Largest first: B's host chunk
// (16 K rows x 64 columns, 2 KiB) takes the first standard address, its AMP-right staging
// follows, then A (one row block of 8 x 64); the AMP operands are interleaved, B's first
// (0x80000), A's after it. C's AMP output and row-major copy (live only from the GEMM on)
// reuse B's place once B and its staging are dead; the third input's row block reuses the
// AMP output's place and the add's result the staging's.
// STATIONARY-LABEL: module @gemm_then_add.tiles
// STATIONARY: "ipu_tile.buffer"() {address = 364544 : i64, bytes = 1024 : i64, class = "standard", id = {{[0-9]+}} : i64, live = array<i64: 0, 2>, name = "op0.a"
// STATIONARY-NEXT: "ipu_tile.buffer"() {address = [[B:360448]] : i64, bytes = 2048 : i64, class = "standard", id = {{[0-9]+}} : i64, live = array<i64: 1, 2>, name = "op0.b"
// STATIONARY-NEXT: "ipu_tile.buffer"() {address = 532480 : i64, bytes = 1024 : i64, class = "interleaved", id = {{[0-9]+}} : i64, live = array<i64: 2, 4>, name = "op0.a.amp_left"
// STATIONARY-NEXT: "ipu_tile.buffer"() {address = 524288 : i64, bytes = 8192 : i64, class = "interleaved", id = {{[0-9]+}} : i64, live = array<i64: 2, 4>, name = "op0.b.amp_right"
// STATIONARY-NEXT: "ipu_tile.buffer"() {address = [[STAGE:362496]] : i64, bytes = 2048 : i64, class = "standard", id = {{[0-9]+}} : i64, live = array<i64: 2, 3>, name = "op0.b.amp_chunk"
// STATIONARY-NEXT: "ipu_tile.buffer"() {address = [[B]] : i64, bytes = 1024 : i64, class = "standard", id = {{[0-9]+}} : i64, live = array<i64: 4, 5>, name = "op0.c.amp_output"
// STATIONARY-NEXT: "ipu_tile.buffer"() {address = 361472 : i64, bytes = 1024 : i64, class = "standard", id = {{[0-9]+}} : i64, live = array<i64: 5, 7>, name = "op0.c"
// STATIONARY-NEXT: "ipu_tile.buffer"() {address = [[B]] : i64, bytes = 1024 : i64, class = "standard", id = {{[0-9]+}} : i64, live = array<i64: 6, 7>, name = "arg2.home"
// STATIONARY-NEXT: "ipu_tile.buffer"() {address = [[STAGE]] : i64, bytes = 1024 : i64, class = "standard", id = {{[0-9]+}} : i64, live = array<i64: 7, 8>, name = "op1.out"
// STATIONARY-NOT: "ipu_tile.buffer"
// The busiest tile sends its 4 column groups to 3 tiles and receives 12; 9 steps.
// STATIONARY: "ipu_tile.support"() {code_address = {{[0-9]+}} : i64, exchange_table_bytes = 256 : i64, generated_code_bytes = 72 : i64,

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
