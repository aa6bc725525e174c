// RUN: ipu-opt --list-passes | FileCheck %s
// RUN: ipu-opt -list-passes | FileCheck %s
// RUN: ipu-opt --list-passes %s | FileCheck %s --check-prefix=NO-IR

// --list-passes prints our passes, then the named pipelines, each with its options, their types,
// defaults and help, then MLIR's own listing of the upstream passes (as mlir-opt prints it), and
// exits without reading the input.

// CHECK-LABEL: Passes:
// CHECK: {{^}}  ipu-canonicalize  -  Simplify ipu ops: casts of casts, identity rearranges and reshapes, transposes into matmul flags, reshapes sunk below elementwise ops
// CHECK-NEXT: {{^}}    max-iterations=<u32>  (default: 10)  -  Upper bound on greedy driver iterations over the IR.
// CHECK-NEXT: {{^}}    disable-patterns=<comma-separated list of string>  (default: "")  -  Patterns to leave out (by name, e.g. fold-cast-of-cast).
// CHECK-DAG: {{^}}  ipu-demote-f32  -  Make every f32 tensor an f16 tensor (constants rounded once)
// CHECK-DAG: {{^}}  ipu-form-attention  -  Form ipu.softmax / ipu.layer_norm from row cones, then fuse attention into ipu.attention
// CHECK-DAG: {{^}}  ipu-fuse-maps  -  Fuse chains of single-use ipu.map ops into one map
// CHECK-LABEL: Pass Pipelines:
// CHECK-NEXT: {{^}}  ipu-cleanup  -  ipu-canonicalize, then upstream cse, canonicalize and symbol-dce
// CHECK-NEXT: {{^}}    max-iterations=<u32>  (default: 10)  -  Passed to ipu-canonicalize.
// CHECK-NEXT: {{^}}    symbol-dce=<bool>  (default: true)  -  Whether to finish with symbol-dce.
// CHECK: Upstream MLIR passes and pipelines (registered, usable as flags and in pipelines):
// CHECK-NEXT: Passes:
// CHECK: {{^}}  --canonicalize {{.*}}Canonicalize operations
// CHECK: {{^}}  --cse {{.*}}Eliminate common sub-expressions

// NO-IR-NOT: {{never_parsed|not even valid IR|error:}}
func.func @never_parsed() {
  "not even valid IR"
}
