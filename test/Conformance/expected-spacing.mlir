// Checks that -verify-diagnostics accepts an expectation written with a space
// between the kind and the location (`expected-error @+1`) as well as without
// one (`expected-error@+1`), for errors and notes alike. If either spelling
// were not recognised, the diagnostic it should match would be reported as
// unexpected and the run would fail.

// RUN: %mlir_opt %s -split-input-file -verify-diagnostics 2>&1 | FileCheck %s
// RUN: ipu-opt %s -split-input-file -verify-diagnostics 2>&1 | FileCheck %s

// Every chunk holds a met expectation, so the run succeeds and prints only the
// three separators between the four chunks: no IR and no diagnostics.
// CHECK-NOT:  {{error|note|func}}
// CHECK:      {{^}}// {{-----$}}
// CHECK-NEXT: {{^}}// {{-----$}}
// CHECK-NEXT: {{^}}// {{-----$}}
// CHECK-NOT:  {{.}}

// expected-note @+1 {{prior use here}}
func.func @with_space(%a: i32, %b: i64) -> i32 {
  // expected-error @+1 {{use of value '%b' expects different type than prior uses: 'i32' vs 'i64'}}
  %0 = arith.addi %a, %b : i32
  return %0 : i32
}

// -----

// expected-note@+1 {{prior use here}}
func.func @without_space(%a: i64, %b: i32) -> i64 {
  // expected-error@+1 {{use of value '%b' expects different type than prior uses: 'i64' vs 'i32'}}
  %0 = arith.addi %a, %b : i64
  return %0 : i64
}

// -----

func.func @return_count(%a: i32) -> i32 {
  // expected-error@+1 {{'func.return' op has 2 operands, but enclosing function (@return_count) returns 1}}
  return %a, %a : i32, i32
}

// -----

func.func @return_count_spaced(%a: i32) -> i32 {
  // expected-error @+1 {{'func.return' op has 0 operands, but enclosing function (@return_count_spaced) returns 1}}
  return
}
