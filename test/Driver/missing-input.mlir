// RUN: not ipu-opt %t.does-not-exist.mlir 2>&1 | FileCheck %s -DFILE=%t.does-not-exist.mlir
// RUN: not ipu-opt %t.does-not-exist.mlir -p 'builtin.module(ipu-canonicalize)' -o %t.out 2>&1 | FileCheck %s -DFILE=%t.does-not-exist.mlir
// RUN: not ls %t.out
// RUN: not ipu-opt %S 2>&1 | FileCheck %s --check-prefix=DIRECTORY

// A missing input file: one clear error naming the file, a non-zero exit, and no output file.
// A directory is not an input either.

// CHECK: ipu-opt: error: cannot open input file '[[FILE]]': No such file or directory (os error 2)
// CHECK-NOT: error
// DIRECTORY: ipu-opt: error: cannot open input file '{{.*}}Driver': Is a directory
