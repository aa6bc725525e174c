// RUN: ipu-opt %s --split-input-file --pass-pipeline='builtin.module(ipu-canonicalize)' | FileCheck %s
// RUN: ipu-opt %s --split-input-file --pass-pipeline='builtin.module(ipu-canonicalize)' | %mlir_opt --split-input-file --irdl-file=%irdl_ipu > /dev/null

// fold-identity-reshape: reshape(x : T -> T) => x.
// CHECK-LABEL: func.func @identity
// CHECK-NEXT: return %arg0 : tensor<4x8xf16>
func.func @identity(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %0 = "ipu.reshape"(%x) : (tensor<4x8xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

// fold-reshape-of-reshape: two reshapes are one; a pair that restores the shape is none.
// CHECK-LABEL: func.func @chain
// CHECK-NEXT: %[[R:.*]] = "ipu.reshape"(%arg0) : (tensor<2x3x4xf32>) -> tensor<24xf32>
// CHECK-NEXT: return %[[R]], %arg0
func.func @chain(%x: tensor<2x3x4xf32>) -> (tensor<24xf32>, tensor<2x3x4xf32>) {
  %0 = "ipu.reshape"(%x) : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %1 = "ipu.reshape"(%0) : (tensor<6x4xf32>) -> tensor<24xf32>
  %2 = "ipu.reshape"(%x) : (tensor<2x3x4xf32>) -> tensor<1x2x12xf32>
  %3 = "ipu.reshape"(%2) : (tensor<1x2x12xf32>) -> tensor<2x3x4xf32>
  return %1, %3 : tensor<24xf32>, tensor<2x3x4xf32>
}

// -----

// fold-reshape-of-constant: a dense constant is re-typed (its elements in row-major order);
// a constant other ops read stays for them.
// CHECK-LABEL: func.func @constant
// CHECK-DAG: arith.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// CHECK-DAG: arith.constant dense<{{\[}}[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00], [5.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
// CHECK-NOT: ipu.reshape
func.func @constant(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3x2xf32>) {
  %c = arith.constant dense<[[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]]> : tensor<1x3x2xf32>
  %0 = "ipu.reshape"(%c) : (tensor<1x3x2xf32>) -> tensor<2x3xf32>
  %1 = "ipu.reshape"(%c) : (tensor<1x3x2xf32>) -> tensor<3x2xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<3x2xf32>
}

// -----

// A reshape into a layout format is a layout change and stays.
// CHECK-LABEL: func.func @format_stays
// CHECK: "ipu.reshape"(%{{.*}}) : (tensor<1x4x8xf16>) -> tensor<4x8xf16, #ipu.format
func.func @format_stays(%x: tensor<1x4x8xf16>) -> tensor<4x8xf16, #ipu.format<"amp_left", [4, 8], [1, 1], [0, 0], "standard", 0>> {
  %0 = "ipu.reshape"(%x) : (tensor<1x4x8xf16>) -> tensor<4x8xf16, #ipu.format<"amp_left", [4, 8], [1, 1], [0, 0], "standard", 0>>
  return %0 : tensor<4x8xf16, #ipu.format<"amp_left", [4, 8], [1, 1], [0, 0], "standard", 0>>
}
