// Checks the --dump-pass-pipeline text on stderr: a `Pass Manager with N
// passes:` header counting the top-level entries, then the pipeline one entry
// per line, indented by nesting depth, with canonicalize printing every option
// (defaults included, user-given values substituted); and the empty pipeline
// printed when no pass is given, after which the IR is still printed.

// RUN: %mlir_opt %s --dump-pass-pipeline --pass-pipeline='builtin.module(func.func(canonicalize,cse),symbol-dce)' 2>&1 >/dev/null | FileCheck %s --strict-whitespace --check-prefix=NESTED
// RUN: ipu-opt %s --dump-pass-pipeline --pass-pipeline='builtin.module(func.func(canonicalize,cse),symbol-dce)' 2>&1 >/dev/null | FileCheck %s --strict-whitespace --check-prefix=NESTED

// RUN: %mlir_opt %s --dump-pass-pipeline -canonicalize='top-down=false region-simplify=disabled' 2>&1 >/dev/null | FileCheck %s --strict-whitespace --check-prefix=OPTIONS
// RUN: ipu-opt %s --dump-pass-pipeline -canonicalize='top-down=false region-simplify=disabled' 2>&1 >/dev/null | FileCheck %s --strict-whitespace --check-prefix=OPTIONS

// RUN: %mlir_opt %s --dump-pass-pipeline 2>&1 >/dev/null | FileCheck %s --strict-whitespace --check-prefix=EMPTY
// RUN: ipu-opt %s --dump-pass-pipeline 2>&1 >/dev/null | FileCheck %s --strict-whitespace --check-prefix=EMPTY
// RUN: %mlir_opt %s --dump-pass-pipeline 2>/dev/null | FileCheck %s --check-prefix=IR
// RUN: ipu-opt %s --dump-pass-pipeline 2>/dev/null | FileCheck %s --check-prefix=IR

// NESTED:      {{^}}Pass Manager with 2 passes:
// NESTED-NEXT: {{^}}builtin.module(
// NESTED-NEXT: {{^}}  func.func(
// NESTED-NEXT: {{^}}    canonicalize{  max-iterations=10 max-num-rewrites=-1 region-simplify=normal test-convergence=false top-down=true},
// NESTED-NEXT: {{^}}    cse
// NESTED-NEXT: {{^}}  ),
// NESTED-NEXT: {{^}}  symbol-dce
// NESTED-NEXT: {{^}})
// NESTED-EMPTY:
// NESTED-NOT:  {{.}}

// OPTIONS:      {{^}}Pass Manager with 1 passes:
// OPTIONS-NEXT: {{^}}builtin.module(
// OPTIONS-NEXT: {{^}}  canonicalize{  max-iterations=10 max-num-rewrites=-1 region-simplify=disabled test-convergence=false top-down=false}
// OPTIONS-NEXT: {{^}})

// EMPTY:      {{^}}Pass Manager with 0 passes:
// EMPTY-NEXT: {{^}}builtin.module(
// EMPTY-EMPTY:
// EMPTY-NEXT: {{^}})

// IR:      module {
// IR-NEXT:   func.func @id(%[[A:.*]]: i32) -> i32 {
// IR-NEXT:     return %[[A]] : i32

func.func @id(%a: i32) -> i32 {
  return %a : i32
}
