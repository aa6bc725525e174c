// RUN: ipu-opt %s -p 'builtin.module(func.func(ipu-canonicalize), cse, ipu-cleanup{symbol-dce=false})' --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s
// RUN: ipu-opt %s -p 'builtin.module(func.func(ipu-canonicalize{max-iterations=10 disable-patterns=}), cse, ipu-canonicalize{max-iterations=10 disable-patterns=}, cse, canonicalize)' --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s
// RUN: ipu-opt %s -p 'builtin.module(ipu-canonicalize{disable-patterns=fold-cast-of-cast,fold-identity-cast max-iterations=3})' --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=OPTIONS
// RUN: ipu-opt %s --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=EMPTY

// --dump-pass-pipeline prints, on stderr before running, the pipeline with named pipelines
// expanded and every option of our passes with its value (defaults included), in the same
// syntax --pass-pipeline reads (the second RUN line feeds the dump back in).

// CHECK: Pass Manager with 5 passes:
// CHECK-NEXT: builtin.module(func.func(ipu-canonicalize{max-iterations=10 disable-patterns=}), cse, ipu-canonicalize{max-iterations=10 disable-patterns=}, cse, canonicalize)

// Options print in declaration order, lists as written.
// OPTIONS: Pass Manager with 1 passes:
// OPTIONS-NEXT: builtin.module(ipu-canonicalize{max-iterations=3 disable-patterns=fold-cast-of-cast,fold-identity-cast})

// Without a pipeline, the empty one.
// EMPTY: Pass Manager with 0 passes:
// EMPTY-NEXT: builtin.module()

func.func @f() {
  return
}
