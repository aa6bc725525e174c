// RUN: rm -rf %t && mkdir -p %t
// RUN: not ipu-opt %s -p 'builtin.module(func.func(ipu-canonicalize{max-iterations=1}))' --mlir-disable-threading --verify-each=false --mlir-pass-pipeline-crash-reproducer=%t/single.repro 2>&1 | FileCheck %s --check-prefix=FAILED
// RUN: FileCheck %s --input-file=%t/single.repro --check-prefix=RECORDED
// RUN: env RUST_LOG=ipu_driver=info not ipu-opt %t/single.repro --run-reproducer 2>&1 | FileCheck %s --check-prefix=REPLAYED
// RUN: ipu-opt %s -p 'builtin.module(func.func(ipu-canonicalize))' -mlir-disable-threading | FileCheck %s

// --mlir-disable-threading: passes on functions run on one thread (same results); the setting
// is recorded in a failure reproducer with --verify-each, and --run-reproducer replays with both.

// FAILED: error: Failures have been detected while processing an MLIR pass pipeline
// FAILED-NEXT: note: Pipeline failed while executing {{.*}}reproducer generated at `{{.*}}single.repro`
// RECORDED: disable_threading: true,
// RECORDED-NEXT: verify_each: false
// REPLAYED: INFO ipu_driver::opt: replaying reproducer pipeline=builtin.module(func.func(ipu-canonicalize{max-iterations=1 disable-patterns=})) disable_threading=true verify_each=false
// REPLAYED: error: ipu-canonicalize did not converge in 1 iterations

// CHECK-LABEL: func.func @first
// CHECK-NEXT: return
// CHECK-LABEL: func.func @second
// CHECK-NEXT: return
func.func @first(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = "ipu.cast"(%x) : (tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

func.func @second(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = "ipu.rearrange"(%x) : (tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}
