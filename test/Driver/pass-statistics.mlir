// RUN: ipu-opt %s -p 'builtin.module(cse, func.func(ipu-canonicalize))' --mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s
// RUN: env -u RUST_LOG ipu-opt %s -p 'builtin.module(cse, func.func(ipu-canonicalize))' -o /dev/null 2>&1 | count 0

// --mlir-pass-statistics: after the run, a report on stderr with the statistics of our passes
// (always reported, zeros included); without the flag nothing is printed.

// CHECK: ===-------------------------------------------------------------------------===
// CHECK-NEXT: ... Pass statistics report ...
// CHECK-NEXT: ===-------------------------------------------------------------------------===
// CHECK-NEXT: IpuCanonicalize
// CHECK-NEXT: (S) 1 fold-identity-cast - Number of times the pattern rewrote an op
// CHECK-NEXT: (S) 1 rewrites - Number of ops rewritten
// CHECK-EMPTY:

func.func @identity_cast(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = "ipu.cast"(%x) : (tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}
