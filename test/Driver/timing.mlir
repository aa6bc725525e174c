// RUN: ipu-opt %s -p 'builtin.module(func.func(ipu-canonicalize), cse)' --mlir-timing --mlir-timing-display=list -o /dev/null 2>&1 | FileCheck %s --check-prefix=LIST
// RUN: ipu-opt %s -p 'builtin.module(func.func(ipu-canonicalize), cse)' --mlir-timing --mlir-timing-display=tree -o /dev/null 2>&1 | FileCheck %s --strict-whitespace --check-prefix=TREE
// RUN: ipu-opt %s -p 'builtin.module(func.func(ipu-canonicalize), cse)' -mlir-timing -o /dev/null 2>&1 | FileCheck %s --strict-whitespace --check-prefix=TREE
// RUN: not ipu-opt %s --mlir-timing-display=flat 2>&1 | FileCheck %s --check-prefix=BAD

// --mlir-timing: wall time per pass on stderr. The tree display (the default, as in mlir-opt)
// follows the pipeline's nesting; the list display sums by pass, largest first. Times vary, so
// only the shape of the report is checked.

// LIST: ... Execution time report ...
// LIST: Total Execution Time: {{[0-9]+\.[0-9]+}} seconds
// LIST: ----Wall Time----  ----Name----
// LIST-DAG: {{[0-9]+\.[0-9]+}} ({{ *[0-9]+\.[0-9]}}%)  IpuCanonicalize (ipu-canonicalize)
// LIST-DAG: {{[0-9]+\.[0-9]+}} ({{ *[0-9]+\.[0-9]}}%)  {{.*}} (cse)
// LIST-NOT: Pipeline
// LIST: {{[0-9]+\.[0-9]+}} (100.0%)  Total

// TREE: ----Wall Time----  ----Name----
// TREE-NEXT: {{^ +[0-9]+\.[0-9]+ \( *[0-9]+\.[0-9]%\)  }}'func.func' Pipeline
// TREE-NEXT: {{^ +[0-9]+\.[0-9]+ \( *[0-9]+\.[0-9]%\)    }}IpuCanonicalize (ipu-canonicalize)
// TREE-NEXT: {{^ +[0-9]+\.[0-9]+ \( *[0-9]+\.[0-9]%\)  }}{{.*}} (cse)
// TREE-NEXT: (100.0%)  Total

// BAD: error: invalid value 'flat' for '--mlir-timing-display <TIMING_DISPLAY>'
// BAD: [possible values: list, tree]

func.func @round_trip(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = "ipu.cast"(%x) : (tensor<4xf16>) -> tensor<4xf32>
  %1 = "ipu.cast"(%0) : (tensor<4xf32>) -> tensor<4xf16>
  return %1 : tensor<4xf16>
}
