// RUN: ipu-opt %s -p 'builtin.module(func.func(ipu-canonicalize), cse)' --mlir-print-ir-before=ipu-canonicalize -o /dev/null 2>&1 | FileCheck %s --check-prefix=BEFORE
// RUN: ipu-opt %s -p 'builtin.module(func.func(ipu-canonicalize), cse)' --mlir-print-ir-after=ipu-canonicalize,cse -o /dev/null 2>&1 | FileCheck %s --check-prefix=AFTER
// RUN: ipu-opt %s -p 'builtin.module(func.func(ipu-canonicalize), cse)' --mlir-print-ir-after=cse --mlir-print-ir-before=cse -o /dev/null 2>&1 | FileCheck %s --check-prefix=AROUND-CSE
// RUN: not ipu-opt %s -p 'builtin.module(func.func(ipu-canonicalize))' --mlir-print-ir-after=ipu-canonicalise 2>&1 | FileCheck %s --check-prefix=MISSPELLED
// RUN: not ipu-opt %s -p 'builtin.module(ipu-cleanup)' --mlir-print-ir-before=cse,ipu-cleanup 2>&1 | FileCheck %s --check-prefix=PIPELINE
// RUN: env -u RUST_LOG ipu-opt %s -p 'builtin.module(func.func(ipu-canonicalize))' --mlir-print-ir-before=lower-affine -o /dev/null 2>&1 | count 0

// --mlir-print-ir-before=<passes> / --mlir-print-ir-after=<passes>: the IR on stderr around the
// named passes only (ours and upstream ones), for each op the pass runs on.

// BEFORE: // -----// IR Dump Before IpuCanonicalize (ipu-canonicalize) //----- //
// BEFORE-NEXT: func.func @round_trip(%[[X:.*]]: tensor<4xf16>) -> tensor<4xf16> {
// BEFORE-NEXT: %[[WIDE:.*]] = "ipu.cast"(%[[X]])
// BEFORE-NEXT: "ipu.cast"(%[[WIDE]])
// BEFORE-NOT: IR Dump

// AFTER: // -----// IR Dump After IpuCanonicalize (ipu-canonicalize) //----- //
// AFTER-NEXT: func.func @round_trip(%[[X:.*]]: tensor<4xf16>) -> tensor<4xf16> {
// AFTER-NEXT: return %[[X]]
// AFTER: // -----// IR Dump After {{.*}} (cse) //----- //
// AFTER-NEXT: module {
// AFTER-NOT: IR Dump

// AROUND-CSE-NOT: ipu-canonicalize
// AROUND-CSE: // -----// IR Dump Before {{.*}} (cse) //----- //
// AROUND-CSE: // -----// IR Dump After {{.*}} (cse) //----- //
// AROUND-CSE-NOT: IR Dump

// A name that is no pass is an error (it would silently print nothing); upstream names are
// checked against MLIR's registry, so any registered pass is accepted.
// MISSPELLED: ipu-opt: error: --mlir-print-ir-after: unknown pass 'ipu-canonicalise'; did you mean 'ipu-canonicalize'?
// PIPELINE: ipu-opt: error: --mlir-print-ir-before: 'ipu-cleanup' is a pass pipeline, not a pass; name one of the passes it expands to (see --dump-pass-pipeline)

func.func @round_trip(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = "ipu.cast"(%x) : (tensor<4xf16>) -> tensor<4xf32>
  %1 = "ipu.cast"(%0) : (tensor<4xf32>) -> tensor<4xf16>
  return %1 : tensor<4xf16>
}
