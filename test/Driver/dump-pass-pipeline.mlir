// RUN: ipu-opt %s -p 'builtin.module(func.func(ipu-canonicalize), cse, ipu-cleanup{symbol-dce=false})' --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s
// RUN: ipu-opt %s -p 'builtin.module(func.func(ipu-canonicalize{max-iterations=10 disable-patterns=}), cse, ipu-canonicalize{max-iterations=10 disable-patterns=}, cse, canonicalize{  max-iterations=10 max-num-rewrites=-1 region-simplify=normal test-convergence=false top-down=true})' --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s
// RUN: ipu-opt %s -p 'builtin.module(ipu-canonicalize{disable-patterns=fold-cast-of-cast,fold-identity-cast max-iterations=3})' --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=OPTIONS
// RUN: ipu-opt %s --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=EMPTY
// Pass flags nest under the op a pass is restricted to, as mlir-opt nests them.
// RUN: ipu-opt %s -affine-scalrep -cse -ipu-canonicalize='max-iterations=2' --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=FLAGS

// --dump-pass-pipeline prints, on stderr before running, the pipeline as mlir-opt prints it
// (one element per line, indented by nesting; the count is of top-level elements), with named
// pipelines expanded and every option with its value (defaults included), ours and upstream
// passes' alike, in the syntax --pass-pipeline reads (the second RUN line feeds the dump back).

// CHECK: Pass Manager with 5 passes:
// CHECK-NEXT: builtin.module(
// CHECK-NEXT:   func.func(
// CHECK-NEXT:     ipu-canonicalize{max-iterations=10 disable-patterns=}
// CHECK-NEXT:   ),
// CHECK-NEXT:   cse,
// CHECK-NEXT:   ipu-canonicalize{max-iterations=10 disable-patterns=},
// CHECK-NEXT:   cse,
// CHECK-NEXT:   canonicalize{  max-iterations=10 max-num-rewrites=-1 region-simplify=normal test-convergence=false top-down=true}
// CHECK-NEXT: )
// CHECK-EMPTY:

// Options print in declaration order, lists as written.
// OPTIONS: Pass Manager with 1 passes:
// OPTIONS-NEXT: builtin.module(
// OPTIONS-NEXT:   ipu-canonicalize{max-iterations=3 disable-patterns=fold-cast-of-cast,fold-identity-cast}
// OPTIONS-NEXT: )

// Without a pipeline, the empty one.
// EMPTY: Pass Manager with 0 passes:
// EMPTY-NEXT: builtin.module(
// EMPTY-EMPTY:
// EMPTY-NEXT: )

// FLAGS: Pass Manager with 3 passes:
// FLAGS-NEXT: builtin.module(
// FLAGS-NEXT:   func.func(
// FLAGS-NEXT:     affine-scalrep
// FLAGS-NEXT:   ),
// FLAGS-NEXT:   cse,
// FLAGS-NEXT:   ipu-canonicalize{max-iterations=2 disable-patterns=}
// FLAGS-NEXT: )

func.func @f() {
  return
}
