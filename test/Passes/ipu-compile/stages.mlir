// ipu-compile is a registered pipeline of its stage passes: its options are forwarded to the
// stages, and everything mlir-opt users run between passes runs between its stages.
// RUN: ipu-opt %s -p 'builtin.module(ipu-compile{tiles=8 precision=fp8 fp8-scale=-2 finalists=2 compile-kernels=false function=gemm})' --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=DUMP
// RUN: ipu-opt %s -p 'builtin.module(ipu-compile{tiles=8 compile-kernels=false})' --mlir-print-ir-after=ipu-place-storage -o /dev/null 2>&1 | FileCheck %s --check-prefix=AFTER
// RUN: ipu-opt %s -p 'builtin.module(ipu-compile{tiles=8 compile-kernels=false})' --mlir-timing -o /dev/null 2>&1 | FileCheck %s --check-prefix=TIMING
// RUN: ipu-opt %s -p 'builtin.module(ipu-compile{tiles=8 compile-kernels=false})' --mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS
// A stage can be named like any pass, the pipeline itself cannot.
// RUN: not ipu-opt %s -p 'builtin.module(ipu-compile{tiles=8 compile-kernels=false})' --mlir-print-ir-after=ipu-compile -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOT-A-PASS

// DUMP: Pass Manager with 8 passes:
// DUMP-NEXT: builtin.module(
// DUMP-NEXT:   ipu-lower-mid{target=c600 tiles=8 {{.*}}precision=fp8 fp8-scale=-2 {{.*}}finalists=2 {{.*}}},
// DUMP-NEXT:   ipu-select-finalist{finalists=2 {{.*}}},
// DUMP-NEXT:   ipu-lower-to-tiles{target=c600 {{.*}}function=gemm},
// DUMP-NEXT:   ipu-plan-kernels{target=c600 compile=false},
// DUMP-NEXT:   ipu-place-storage{target=c600},
// DUMP-NEXT:   ipu-lower-exchanges{target=c600 reuse=true},
// DUMP-NEXT:   ipu-optimize-exchange-placement{target=c600},
// DUMP-NEXT:   ipu-emit-tile-code{target=c600}
// DUMP-NEXT: )

// The placed program between ipu-place-storage and ipu-lower-exchanges: buffers have
// addresses, phases have no schedule yet.
// AFTER: // -----// IR Dump After IpuPlaceStorage (ipu-place-storage) //----- //
// AFTER: "ipu_tile.buffer"() {address = {{[0-9]+}} : i64, bytes = {{[0-9]+}} : i64, class = "{{standard|interleaved}}"
// AFTER-NOT: IR Dump

// TIMING: Parser
// TIMING-NEXT: IpuLowerMid
// TIMING-NEXT: IpuSelectFinalist
// TIMING-NEXT: IpuLowerToTiles
// TIMING-NEXT: IpuPlanKernels
// TIMING-NEXT: IpuPlaceStorage
// TIMING-NEXT: IpuLowerExchanges
// TIMING-NEXT: IpuOptimizeExchangePlacement
// TIMING-NEXT: IpuEmitTileCode
// TIMING-NEXT: Output
// TIMING-NEXT: Rest
// TIMING-NEXT: Total

// STATS: IpuPlaceStorage
// STATS: buffers placed
// STATS: IpuEmitTileCode
// STATS: tiles with code

// NOT-A-PASS: 'ipu-compile' is a pass pipeline, not a pass

func.func @gemm(%x: tensor<32x64xf16>, %w: tensor<64x64xf16>) -> tensor<32x64xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
  return %y : tensor<32x64xf16>
}
