// An input in the style of an upstream Transforms test, for test/Conformance/upstream-conformance.test.
// RUN: mlir-opt %s -cse | FileCheck %s
// RUN: mlir-opt %s -pass-pipeline='builtin.module(func.func(cse))' | FileCheck %s
// RUN: mlir-opt %s -test-module-pass -cse | FileCheck %s
// RUN: mlir-opt %s -pass-that-no-tool-has | FileCheck %s

// CHECK-LABEL: func.func @twice
// CHECK: %[[SUM:.*]] = arith.addi
// CHECK-NOT: arith.addi
// CHECK: return %[[SUM]], %[[SUM]]
func.func @twice(%a: i32, %b: i32) -> (i32, i32) {
  %0 = arith.addi %a, %b : i32
  %1 = arith.addi %a, %b : i32
  return %0, %1 : i32, i32
}
