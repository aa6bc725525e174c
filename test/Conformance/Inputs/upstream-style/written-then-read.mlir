// An input in the style of an upstream Pass test whose second RUN line reads what the first wrote.
// RUN: mlir-opt %s -canonicalize -o %t
// RUN: FileCheck %s --input-file=%t

// CHECK-LABEL: func.func @folded
// CHECK-NEXT: %[[C:.*]] = arith.constant 5 : i32
// CHECK-NEXT: return %[[C]]
func.func @folded() -> i32 {
  %0 = arith.constant 2 : i32
  %1 = arith.constant 3 : i32
  %2 = arith.addi %0, %1 : i32
  return %2 : i32
}
