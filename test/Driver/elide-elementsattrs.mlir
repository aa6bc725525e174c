// RUN: ipu-opt %s --mlir-elide-elementsattrs-if-larger=3 | FileCheck %s
// RUN: ipu-opt %s --mlir-elide-elementsattrs-if-larger=4 | FileCheck %s --check-prefix=KEEP
// RUN: ipu-opt %s | FileCheck %s --check-prefix=KEEP

// --mlir-elide-elementsattrs-if-larger=N: elements attributes with more than N elements print
// as an elided resource; smaller ones stay.

// CHECK-LABEL: func.func @constants
// CHECK: arith.constant dense_resource<__elided__> : tensor<4xf32>
// CHECK: arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// KEEP-LABEL: func.func @constants
// KEEP: arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
func.func @constants() -> (tensor<4xf32>, tensor<2xf32>) {
  %0 = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %1 = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  return %0, %1 : tensor<4xf32>, tensor<2xf32>
}
