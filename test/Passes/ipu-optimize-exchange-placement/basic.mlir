// ipu-optimize-exchange-placement moves receive buffers that share a 16 KiB memory element
// with a send-read on the same tile at overlapping cycles, to the lowest address of their
// class clear of live buffers and of the elements sends read, keeping the stored schedules
// (validated again at the new addresses, one log line per phase).
// RUN: ipu-opt %S/Inputs/swap.mlir -p 'builtin.module(ipu-place-storage, ipu-lower-exchanges, ipu-optimize-exchange-placement)' | FileCheck %s --check-prefix=SWAP
// RUN: ipu-opt %S/Inputs/swap.mlir -p 'builtin.module(ipu-place-storage, ipu-lower-exchanges, ipu-optimize-exchange-placement{target=bow})' | FileCheck %s --check-prefix=SWAP
// RUN: env RUST_LOG=info ipu-opt %S/Inputs/swap.mlir -p 'builtin.module(ipu-place-storage, ipu-lower-exchanges, ipu-optimize-exchange-placement)' -o /dev/null 2>&1 | FileCheck %s --check-prefix=SWAP-LOG
// RUN: ipu-opt %S/Inputs/swap.mlir -p 'builtin.module(ipu-place-storage, ipu-lower-exchanges, ipu-optimize-exchange-placement)' --mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=SWAP-STATS
// After the moves the swap program is emitted (without them ipu-emit-tile-code refuses it:
// see ../ipu-emit-tile-code/invalid.mlir).
// RUN: ipu-opt %S/Inputs/swap.mlir -p 'builtin.module(ipu-place-storage, ipu-lower-exchanges, ipu-optimize-exchange-placement, ipu-emit-tile-code)' | FileCheck %s --check-prefix=EMIT
// A GEMM whose broadcast has no such conflict keeps every address.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4}, ipu-place-storage, ipu-lower-exchanges)' -o %t.placed.mlir
// RUN: ipu-opt %t.placed.mlir -p 'builtin.module(ipu-optimize-exchange-placement)' | diff %t.placed.mlir -
// RUN: env RUST_LOG=info ipu-opt %t.placed.mlir -p 'builtin.module(ipu-optimize-exchange-placement)' -o /dev/null 2>&1 | FileCheck %s --check-prefix=GEMM-LOG

// Placement put x at 0x58000 and y right after it, in one element; both are receive buffers
// (y on tile 0, x on tile 2) next to the other's send-read. Moving x to the next element that
// no send of the phase reads (0x5c000) removes both conflicts, so y stays at 0x58400. The
// schedule is kept.
// SWAP: "ipu_tile.buffer"() {address = 376832 : i64, bytes = 1024 : i64, class = "standard", id = 0 : i64, live = array<i64: 0, 0>, name = "x"
// SWAP-NEXT: "ipu_tile.buffer"() {address = 361472 : i64, bytes = 1024 : i64, class = "standard", id = 1 : i64, live = array<i64: 0, 0>, name = "y"
// SWAP-NEXT: "ipu_tile.support"
// SWAP-NEXT: "ipu_tile.exchange"() {cycles = {{[0-9]+}} : i64, moves = array<i64: 0, 0, 0, 0, 0, 1024, 1, 2, 2, 1, 0, 1, 0, 1024, 1, 0>, phase = 0 : i64, program = "run", schedule = array<i64: 0, 0, 1024, 0, 1, 0, 1024, 0>, schedule_key = {{-?[0-9]+}} : i64}

// SWAP-LOG: INFO ipu.pass{pass=ipu-optimize-exchange-placement}:ipu.package.build{{.*}}:ipu.package.phase{phase="optimize_exchange_placement"}: ipu_passes::lower::optimize: reused exchange optimization after validating relocated rows phase=0
// SWAP-LOG-NEXT: optimized exchange placement moved_buffers=1 rescheduled_phases=0 phases=1
// SWAP-LOG-NEXT: package build phase finished phase="optimize_exchange_placement" elapsed_ms={{[0-9]+}} success=true
// SWAP-LOG-NEXT: pass finished pass=ipu-optimize-exchange-placement op=builtin.module elapsed_ms={{[0-9]+}} success=true

// SWAP-STATS: IpuOptimizeExchangePlacement
// SWAP-STATS-NEXT: (S) 1 buffers-moved - buffers moved

// EMIT: "ipu_tile.code"() {final_cycles = {{[0-9]+}} : i64, final_exchange = {{[0-9]+}} : i64, tiles = array<i32: 0, 2>}

// GEMM-LOG: reused exchange optimization after validating relocated rows phase=0
// GEMM-LOG-NEXT: optimized exchange placement moved_buffers=0 rescheduled_phases=0 phases=1

func.func @gemm(%x: tensor<32x64xf16>, %w: tensor<64x64xf16>) -> tensor<32x64xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
  return %y : tensor<32x64xf16>
}
