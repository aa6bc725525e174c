// A stored schedule whose key still matches (only addresses moved) is reused after its rows
// are validated at the current addresses, and says so; reuse=false schedules again.
// RUN: env RUST_LOG=info ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4}, ipu-place-storage, ipu-lower-exchanges, ipu-lower-exchanges)' -o /dev/null 2>&1 | FileCheck %s --check-prefix=REUSE
// RUN: env RUST_LOG=info ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4}, ipu-place-storage, ipu-lower-exchanges, ipu-lower-exchanges)' --log-format=json -o /dev/null 2>&1 | FileCheck %s --check-prefix=JSON
// RUN: env RUST_LOG=info ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4}, ipu-place-storage, ipu-lower-exchanges, ipu-lower-exchanges{reuse=false})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOREUSE
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4}, ipu-place-storage, ipu-lower-exchanges, ipu-lower-exchanges)' --mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4}, ipu-place-storage, ipu-lower-exchanges, ipu-lower-exchanges{reuse=false})' --mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS-NOREUSE
// Reused or rescheduled, the schedule is the same.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4}, ipu-place-storage, ipu-lower-exchanges)' -o %t.once.mlir
// RUN: ipu-opt %t.once.mlir -p 'builtin.module(ipu-lower-exchanges)' | diff %t.once.mlir -
// RUN: ipu-opt %t.once.mlir -p 'builtin.module(ipu-lower-exchanges{reuse=false})' | diff %t.once.mlir -
// After ipu-optimize-exchange-placement moved the swap program's buffers, the schedule is
// reused at the new addresses.
// RUN: env RUST_LOG=info ipu-opt %S/Inputs/swap.mlir -p 'builtin.module(ipu-place-storage, ipu-lower-exchanges, ipu-optimize-exchange-placement, ipu-lower-exchanges)' -o /dev/null 2>&1 | FileCheck %s --check-prefix=MOVED

// REUSE: pass finished pass=ipu-lower-exchanges op=builtin.module
// REUSE-NOT: pass finished
// REUSE: INFO ipu.pass{pass=ipu-lower-exchanges}:ipu.package.build{{.*}}:ipu.package.phase{phase="lower_exchanges"}: ipu_passes::lower::passes: reused exchange optimization after validating relocated rows phase=0
// REUSE-NEXT: package build phase finished phase="lower_exchanges" elapsed_ms={{[0-9]+}} success=true
// REUSE-NEXT: pass finished pass=ipu-lower-exchanges op=builtin.module elapsed_ms={{[0-9]+}} success=true

// JSON: {"timestamp":"{{[^"]+}}","level":"INFO","fields":{"message":"reused exchange optimization after validating relocated rows","phase":0},"target":"ipu_passes::lower::passes","span":{"phase":"lower_exchanges","name":"ipu.package.phase"},"spans":[{"pass":"ipu-lower-exchanges","name":"ipu.pass"},{"operations":1,"tile_count":{{[0-9]+}},"name":"ipu.package.build"},{"phase":"lower_exchanges","name":"ipu.package.phase"}]}

// NOREUSE-NOT: reused exchange optimization
// NOREUSE: pass finished pass=ipu-lower-exchanges
// NOREUSE-NOT: reused exchange optimization
// NOREUSE: pass finished pass=ipu-lower-exchanges
// NOREUSE-NOT: reused exchange optimization

// STATS: IpuLowerExchanges
// STATS-NEXT: (S) 0 phases-reused - stored schedules reused
// STATS-NEXT: (S) 1 phases-scheduled - phases scheduled
// STATS-NEXT: IpuLowerExchanges
// STATS-NEXT: (S) 1 phases-reused - stored schedules reused
// STATS-NEXT: (S) 0 phases-scheduled - phases scheduled

// STATS-NOREUSE: IpuLowerExchanges
// STATS-NOREUSE: IpuLowerExchanges
// STATS-NOREUSE-NEXT: (S) 0 phases-reused - stored schedules reused
// STATS-NOREUSE-NEXT: (S) 1 phases-scheduled - phases scheduled

// MOVED: optimized exchange placement moved_buffers=1 rescheduled_phases=0 phases=1
// MOVED: INFO ipu.pass{pass=ipu-lower-exchanges}:ipu.package.build{{.*}}:ipu.package.phase{phase="lower_exchanges"}: ipu_passes::lower::passes: reused exchange optimization after validating relocated rows phase=0
// MOVED-NEXT: package build phase finished phase="lower_exchanges" elapsed_ms={{[0-9]+}} success=true
// MOVED-NEXT: pass finished pass=ipu-lower-exchanges op=builtin.module elapsed_ms={{[0-9]+}} success=true

func.func @gemm(%x: tensor<32x64xf16>, %w: tensor<64x64xf16>) -> tensor<32x64xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
  return %y : tensor<32x64xf16>
}
