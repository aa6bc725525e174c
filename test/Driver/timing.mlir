// RUN: ipu-opt %s -p 'builtin.module(func.func(ipu-canonicalize), cse)' --mlir-timing --mlir-timing-display=list -o /dev/null 2>&1 | FileCheck %s --check-prefix=LIST
// RUN: ipu-opt %s -p 'builtin.module(func.func(ipu-canonicalize), cse)' --mlir-timing --mlir-timing-display=tree -mlir-disable-threading -o /dev/null 2>&1 | FileCheck %s --strict-whitespace --check-prefix=TREE
// RUN: not ipu-opt %s -func-ipu-canonicalize-not-a-pass -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: ipu-opt %s -p 'builtin.module(func.func(ipu-canonicalize), cse)' -mlir-timing -mlir-disable-threading -o /dev/null 2>&1 | FileCheck %s --strict-whitespace --check-prefix=TREE
// RUN: ipu-opt %s -p 'builtin.module(func.func(ipu-canonicalize), cse)' -mlir-timing -mlir-output-format=json -o /dev/null 2>&1 | FileCheck %s --check-prefix=JSON
// RUN: ipu-opt %s -cse -mlir-timing -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=SPLIT
// RUN: not ipu-opt %s --mlir-timing-display=flat 2>&1 | FileCheck %s --check-prefix=BAD

// --mlir-timing: MLIR's own timing report on stderr, as mlir-opt prints it: parsing, each pass
// (ours and upstream) with the analyses it computed, printing the output, and the rest. The
// tree display (the default) follows the pipeline's nesting; the list display sums by name.
// Times vary, so only the shape of the report is checked.

// LIST: ... Execution time report ...
// LIST: Total Execution Time: {{[0-9]+\.[0-9]+}} seconds
// LIST: ----Wall Time----  ----Name----
// LIST-DAG: {{[0-9]+\.[0-9]+}} ({{ *[0-9]+\.[0-9]}}%)  Parser
// LIST-DAG: {{[0-9]+\.[0-9]+}} ({{ *[0-9]+\.[0-9]}}%)  IpuCanonicalize
// LIST-DAG: {{[0-9]+\.[0-9]+}} ({{ *[0-9]+\.[0-9]}}%)  CSE
// LIST-DAG: {{[0-9]+\.[0-9]+}} ({{ *[0-9]+\.[0-9]}}%)  (A) DominanceInfo
// LIST-DAG: {{[0-9]+\.[0-9]+}} ({{ *[0-9]+\.[0-9]}}%)  Output
// LIST: {{[0-9]+\.[0-9]+}} ({{ *[0-9]+\.[0-9]}}%)  Rest
// LIST-NEXT: {{[0-9]+\.[0-9]+}} (100.0%)  Total

// TREE: ----Wall Time----  ----Name----
// TREE-NEXT: {{^ +[0-9]+\.[0-9]+ \( *[0-9]+\.[0-9]%\)  }}Parser
// TREE-NEXT: {{^ +[0-9]+\.[0-9]+ \( *[0-9]+\.[0-9]%\)  }}'func.func' Pipeline
// TREE-NEXT: {{^ +[0-9]+\.[0-9]+ \( *[0-9]+\.[0-9]%\)    }}IpuCanonicalize
// TREE-NEXT: {{^ +[0-9]+\.[0-9]+ \( *[0-9]+\.[0-9]%\)  }}CSE
// TREE-NEXT: {{^ +[0-9]+\.[0-9]+ \( *[0-9]+\.[0-9]%\)    }}(A) DominanceInfo
// TREE-NEXT: {{^ +[0-9]+\.[0-9]+ \( *[0-9]+\.[0-9]%\)  }}Output
// TREE-NEXT: {{^ +[0-9]+\.[0-9]+ \( *[0-9]+\.[0-9]%\)  }}Rest
// TREE-NEXT: (100.0%)  Total

// JSON: [
// JSON: "name": "Parser"
// JSON: "name": "IpuCanonicalize"
// JSON: "name": "CSE"
// JSON: "name": "Output"
// JSON: "name": "Rest"
// JSON: "name": "Total"

// Split chunks add up in one report: one Parser and one Output row for all chunks.
// SPLIT: Parser
// SPLIT-NOT: Parser
// SPLIT: CSE
// SPLIT: Output
// SPLIT-NOT: {{Output|Parser}}
// SPLIT: Total

// UNKNOWN: Unknown command line argument '-func-ipu-canonicalize-not-a-pass'

// BAD: error: invalid value 'flat' for '--mlir-timing-display <TIMING_DISPLAY>'

func.func @round_trip(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = "ipu.cast"(%x) : (tensor<4xf16>) -> tensor<4xf32>
  %1 = "ipu.cast"(%0) : (tensor<4xf32>) -> tensor<4xf16>
  return %1 : tensor<4xf16>
}

// -----

func.func @second() {
  return
}
