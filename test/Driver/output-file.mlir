// RUN: rm -rf %t && mkdir -p %t
// RUN: env -u RUST_LOG ipu-opt %s -p 'builtin.module(ipu-canonicalize)' -o %t/out.mlir 2>&1 | count 0
// RUN: FileCheck %s --input-file=%t/out.mlir
// RUN: ipu-opt %s -p 'builtin.module(ipu-canonicalize)' -o - | FileCheck %s
// RUN: cp %s %t/input.mlir
// RUN: not ipu-opt %t/input.mlir -p 'builtin.module(ipu-canonicalize)' -o %t/input.mlir 2>&1 | FileCheck %s --check-prefix=SAME
// RUN: diff %s %t/input.mlir
// RUN: not ipu-opt %s -o %t/missing-dir/out.mlir 2>&1 | FileCheck %s --check-prefix=UNWRITABLE
// RUN: not ls %t/missing-dir

// -o <file>: the output goes to the file (nothing on stdout or stderr), `-o -` is stdout. An
// output that is the input file is refused and the input stays byte for byte as it was; an
// unwritable output is a clear error.

// CHECK-LABEL: func.func @round_trip
// CHECK-SAME: (%[[X:.*]]: tensor<4xf16>)
// CHECK-NEXT: return %[[X]]

// SAME: ipu-opt: error: output file '{{.*}}input.mlir' is the input file; refusing to overwrite it
// UNWRITABLE: ipu-opt: error: cannot write output file '{{.*}}missing-dir/out.mlir': No such file or directory

func.func @round_trip(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = "ipu.cast"(%x) : (tensor<4xf16>) -> tensor<4xf32>
  %1 = "ipu.cast"(%0) : (tensor<4xf32>) -> tensor<4xf16>
  return %1 : tensor<4xf16>
}
