// RUN: rm -rf %t && mkdir -p %t
// RUN: not ipu-opt %s -p 'builtin.module(cse, func.func(ipu-canonicalize{max-iterations=1}))' --mlir-pass-pipeline-crash-reproducer=%t/failure.repro --verify-each=false 2>&1 | FileCheck %s --check-prefix=WROTE
// RUN: FileCheck %s --input-file=%t/failure.repro --check-prefix=REPRO
// RUN: not ipu-opt %t/failure.repro --run-reproducer 2>&1 | FileCheck %s --check-prefix=REPLAY
// RUN: ipu-opt %s -p 'builtin.module(func.func(ipu-canonicalize))' --mlir-pass-pipeline-crash-reproducer=%t/success.repro -o /dev/null
// RUN: not ls %t/success.repro
// RUN: not ipu-opt %s --run-reproducer 2>&1 | FileCheck %s --check-prefix=NOT-A-REPRODUCER
// RUN: echo 'func.func @f() { return }' > %t/plain.mlir
// RUN: not ipu-opt %t/plain.mlir --run-reproducer 2>&1 | FileCheck %s --check-prefix=NOT-A-REPRODUCER

// --mlir-pass-pipeline-crash-reproducer=<file>: when the pipeline fails, the file records the IR
// the pipeline started from and the pipeline (fully spelled out) with the run's settings;
// --run-reproducer replays it and fails the same way. A successful run writes nothing.

// WROTE: crash-reproducer.mlir:[[# @LINE + 22]]:1: error: ipu-canonicalize did not converge in 1 iterations (raise max-iterations)
// WROTE: error: Failures have been detected while processing an MLIR pass pipeline
// WROTE: note: Pipeline failed while executing [`builtin.module(cse,func.func(ipu-canonicalize{max-iterations=1 disable-patterns=}))` on 'builtin.module' operation]: reproducer generated at `{{.*}}failure.repro`

// REPRO: func.func @round_trip
// REPRO: "ipu.cast"
// REPRO: "ipu.cast"
// REPRO: {-#
// REPRO-NEXT: external_resources: {
// REPRO-NEXT: mlir_reproducer: {
// REPRO-NEXT: pipeline: "builtin.module(cse,func.func(ipu-canonicalize{max-iterations=1 disable-patterns=}))",
// REPRO-NEXT: disable_threading: false,
// REPRO-NEXT: verify_each: false
// REPRO-NEXT: }
// REPRO-NEXT: }
// REPRO-NEXT: #-}

// REPLAY: failure.repro:{{[0-9]+}}:{{[0-9]+}}: error: ipu-canonicalize did not converge in 1 iterations (raise max-iterations)

// An input without the resource (this file only mentions one in comments) is refused.
// NOT-A-REPRODUCER: ipu-opt: error: {{.*}}.mlir: --run-reproducer needs a reproducer file with an `mlir_reproducer` resource (written by --mlir-pass-pipeline-crash-reproducer)

func.func @round_trip(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = "ipu.cast"(%x) : (tensor<4xf16>) -> tensor<4xf32>
  %1 = "ipu.cast"(%0) : (tensor<4xf32>) -> tensor<4xf16>
  return %1 : tensor<4xf16>
}
