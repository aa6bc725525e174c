// Checks the shape of the --mlir-timing report on stderr: the default tree
// display (Parser, each pass with the analyses it computed indented beneath
// it, Output, Rest, Total), the list display (a `root` row, rows summed by
// name and ordered by time, then Rest and Total), and the JSON output format.
// Times vary from run to run, so only the names and the layout are checked.

// RUN: %mlir_opt %s -mlir-disable-threading --mlir-timing -cse -canonicalize -o /dev/null 2>&1 | FileCheck %s --strict-whitespace --check-prefix=TREE
// RUN: ipu-opt %s -mlir-disable-threading --mlir-timing -cse -canonicalize -o /dev/null 2>&1 | FileCheck %s --strict-whitespace --check-prefix=TREE

// RUN: %mlir_opt %s -mlir-disable-threading --mlir-timing --mlir-timing-display=list -cse -canonicalize -o /dev/null 2>&1 | FileCheck %s --check-prefix=LIST
// RUN: ipu-opt %s -mlir-disable-threading --mlir-timing --mlir-timing-display=list -cse -canonicalize -o /dev/null 2>&1 | FileCheck %s --check-prefix=LIST

// RUN: %mlir_opt %s -mlir-disable-threading --mlir-timing --mlir-output-format=json -cse -canonicalize -o /dev/null 2>&1 | FileCheck %s --check-prefix=JSON
// RUN: ipu-opt %s -mlir-disable-threading --mlir-timing --mlir-output-format=json -cse -canonicalize -o /dev/null 2>&1 | FileCheck %s --check-prefix=JSON

// TREE:      ... Execution time report ...
// TREE:      Total Execution Time: {{[0-9]+\.[0-9]+}} seconds
// TREE-EMPTY:
// TREE-NEXT: {{^  }}----Wall Time----  ----Name----
// TREE-NEXT: {{^ +[0-9]+\.[0-9]+ \( *[0-9]+\.[0-9]%\)  }}Parser
// TREE-NEXT: {{^ +[0-9]+\.[0-9]+ \( *[0-9]+\.[0-9]%\)  }}CSE
// TREE-NEXT: {{^ +[0-9]+\.[0-9]+ \( *[0-9]+\.[0-9]%\)    }}(A) DominanceInfo
// TREE-NEXT: {{^ +[0-9]+\.[0-9]+ \( *[0-9]+\.[0-9]%\)  }}Canonicalizer
// TREE-NEXT: {{^ +[0-9]+\.[0-9]+ \( *[0-9]+\.[0-9]%\)  }}Output
// TREE-NEXT: {{^ +[0-9]+\.[0-9]+ \( *[0-9]+\.[0-9]%\)  }}Rest
// TREE-NEXT: {{^ +[0-9]+\.[0-9]+ \(100\.0%\)  }}Total

// LIST:      ----Wall Time----  ----Name----
// LIST-NEXT: (100.0%)  root
// LIST-DAG:  %)  Parser
// LIST-DAG:  %)  CSE
// LIST-DAG:  %)  (A) DominanceInfo
// LIST-DAG:  %)  Canonicalizer
// LIST-DAG:  %)  Output
// LIST:      %)  Rest
// LIST-NEXT: (100.0%)  Total

// JSON:      [
// JSON-NEXT: "name": "Parser"
// JSON:      "name": "CSE"
// JSON-NEXT: "name": "(A) DominanceInfo"
// JSON:      "name": "Canonicalizer"
// JSON:      "name": "Output"
// JSON:      "name": "Rest"
// JSON-NEXT: "name": "Total"
// JSON-NEXT: ]

func.func @f(%a: i32) -> i32 {
  %0 = arith.muli %a, %a : i32
  %1 = arith.muli %a, %a : i32
  %2 = arith.subi %0, %1 : i32
  return %2 : i32
}
