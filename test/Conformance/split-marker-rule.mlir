// The split marker cuts the input wherever it occurs, as mlir-opt's splitter does (also after
// code on a line; a prefix not followed by the marker's last two characters is a near miss), a
// chunk's whole-source location (line 0) is where the chunk starts, and `expected-*-re` pieces
// are LLVM regexes with LLVM's error texts. Every point is checked with both tools.

// RUN: %mlir_opt %S/Inputs/split-rule.mlir --split-input-file 2>%t.stock.err | FileCheck %s
// RUN: ipu-opt %S/Inputs/split-rule.mlir --split-input-file 2>%t.ipu.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=NEAR < %t.stock.err
// RUN: FileCheck %s --check-prefix=NEAR < %t.ipu.err

// CHECK:      func.func private @first()
// CHECK-NOT:  @second
// CHECK:      {{^}}// {{-{5}$}}
// CHECK:      func.func private @second()
// CHECK-NEXT: func.func private @still_second()
// CHECK:      {{^}}// {{-{5}$}}
// CHECK:      func.func private @third()

// NEAR: split-rule.mlir:3:7: warning: near miss with file split marker
// NEAR: split-rule.mlir:5:7: warning: near miss with file split marker

// RUN: not %mlir_opt %S/Inputs/split-top-level.mlir --split-input-file --no-implicit-module 2>&1 | FileCheck %s --check-prefix=TOP
// RUN: not ipu-opt %S/Inputs/split-top-level.mlir --split-input-file --no-implicit-module 2>&1 | FileCheck %s --check-prefix=TOP

// TOP: split-top-level.mlir:2:9: error: source must contain a single top-level operation, found: 2

// RUN: not %mlir_opt %S/Inputs/regex-errors.mlir --split-input-file --verify-diagnostics 2>&1 | FileCheck %s --check-prefix=RE
// RUN: not ipu-opt %S/Inputs/regex-errors.mlir --split-input-file --verify-diagnostics 2>&1 | FileCheck %s --check-prefix=RE

// RE-DAG: regex-errors.mlir:1:4: error: invalid regex: parentheses not balanced
// RE-DAG: regex-errors.mlir:5:4: error: invalid regex: empty (sub)expression
// RE-DAG: regex-errors.mlir:9:4: error: invalid regex: brackets ([ ]) not balanced
// RE-NOT: returns
