// Checks the effect of the printing and driver flags shared with mlir-opt:
// alias-free printing (--mlir-print-local-scope), pretty locations, value-user
// comments, unique SSA ids, hex elements attributes, assume-verified printing,
// --no-implicit-module, versioned bytecode round-trips between the two tools,
// --show-dialects, --version and --help-hidden.

// RUN: %mlir_opt %s | FileCheck %s --check-prefix=ALIAS
// RUN: ipu-opt %s | FileCheck %s --check-prefix=ALIAS
// RUN: %mlir_opt %s --mlir-print-local-scope | FileCheck %s --check-prefix=LOCAL
// RUN: ipu-opt %s --mlir-print-local-scope | FileCheck %s --check-prefix=LOCAL
// RUN: %mlir_opt %s --mlir-print-debuginfo --mlir-pretty-debuginfo | FileCheck %s --check-prefix=PRETTY
// RUN: ipu-opt %s --mlir-print-debuginfo --mlir-pretty-debuginfo | FileCheck %s --check-prefix=PRETTY
// RUN: %mlir_opt %s --mlir-print-value-users | FileCheck %s --check-prefix=USERS
// RUN: ipu-opt %s --mlir-print-value-users | FileCheck %s --check-prefix=USERS
// RUN: %mlir_opt %s --mlir-print-unique-ssa-ids | FileCheck %s --check-prefix=UNIQUE
// RUN: ipu-opt %s --mlir-print-unique-ssa-ids | FileCheck %s --check-prefix=UNIQUE
// RUN: %mlir_opt %s --mlir-print-elementsattrs-with-hex-if-larger=1 | FileCheck %s --check-prefix=HEX
// RUN: ipu-opt %s --mlir-print-elementsattrs-with-hex-if-larger=1 | FileCheck %s --check-prefix=HEX
// RUN: %mlir_opt %s --mlir-print-assume-verified | FileCheck %s --check-prefix=ALIAS
// RUN: ipu-opt %s --mlir-print-assume-verified | FileCheck %s --check-prefix=ALIAS

// --no-implicit-module: one top-level func.func is printed as it is; two
// top-level ops are an error.
// RUN: sh -c "printf 'func.func @solo() {\n  return\n}\n' > %t.one.mlir"
// RUN: sh -c "printf 'func.func @a() {\n  return\n}\nfunc.func @b() {\n  return\n}\n' > %t.two.mlir"
// RUN: %mlir_opt %t.one.mlir --no-implicit-module | FileCheck %s --check-prefix=NOIMPL
// RUN: ipu-opt %t.one.mlir --no-implicit-module | FileCheck %s --check-prefix=NOIMPL
// RUN: not %mlir_opt %t.two.mlir --no-implicit-module 2>&1 | FileCheck %s --check-prefix=NOIMPL-TWO
// RUN: not ipu-opt %t.two.mlir --no-implicit-module 2>&1 | FileCheck %s --check-prefix=NOIMPL-TWO

// Bytecode version 1 (the version is the varint after the "ML\xefR" magic,
// 0x03), written by each tool and read back by both.
// RUN: %mlir_opt %s --emit-bytecode --emit-bytecode-version=1 -o %t.stock.mlirbc
// RUN: ipu-opt %s --emit-bytecode --emit-bytecode-version=1 -o %t.ipu.mlirbc
// RUN: od -An -tx1 -N5 %t.stock.mlirbc | FileCheck %s --check-prefix=BC-HEADER
// RUN: od -An -tx1 -N5 %t.ipu.mlirbc | FileCheck %s --check-prefix=BC-HEADER
// RUN: %mlir_opt %t.stock.mlirbc | FileCheck %s --check-prefix=ALIAS
// RUN: %mlir_opt %t.ipu.mlirbc | FileCheck %s --check-prefix=ALIAS
// RUN: ipu-opt %t.stock.mlirbc | FileCheck %s --check-prefix=ALIAS
// RUN: ipu-opt %t.ipu.mlirbc | FileCheck %s --check-prefix=ALIAS

// RUN: %mlir_opt --help-hidden | FileCheck %s --check-prefix=HELP
// RUN: ipu-opt --help-hidden | FileCheck %s --check-prefix=HELP

// --version: ipu-opt names itself and the LLVM it is built on (stock prints
// the distribution's LLVM banner instead, so only ipu-opt is checked); like
// stock's, each line ends with a newline.
// RUN: ipu-opt --version | FileCheck %s --check-prefix=VERSION
// RUN: ipu-opt --version | count 2

// --show-dialects: one line, names separated by bare commas. ipu-opt also
// registers its own ipu dialect.
// RUN: ipu-opt --show-dialects | FileCheck %s --check-prefix=DIALECTS-IPU
// RUN: %mlir_opt --show-dialects | FileCheck %s --check-prefix=DIALECTS
// RUN: ipu-opt --show-dialects | FileCheck %s --check-prefix=DIALECTS

// A bytecode module read back with --no-implicit-module is the module itself.
// RUN: %mlir_opt %t.stock.mlirbc --no-implicit-module | FileCheck %s --check-prefix=ALIAS
// RUN: ipu-opt %t.stock.mlirbc --no-implicit-module | FileCheck %s --check-prefix=ALIAS

// --mlir-print-assume-verified on IR that does not verify (read with the
// verifier disabled): the custom form is used instead of the generic
// fallback.
// RUN: sh -c "printf 'func.func @unverified() -> i32 {\n  return\n}\n' > %t.bad.mlir"
// RUN: %mlir_opt %t.bad.mlir --no-implicit-module --mlir-very-unsafe-disable-verifier-on-parsing | FileCheck %s --check-prefix=FALLBACK
// RUN: ipu-opt %t.bad.mlir --no-implicit-module --mlir-very-unsafe-disable-verifier-on-parsing | FileCheck %s --check-prefix=FALLBACK
// RUN: %mlir_opt %t.bad.mlir --no-implicit-module --mlir-very-unsafe-disable-verifier-on-parsing --mlir-print-assume-verified | FileCheck %s --check-prefix=ASSUMED
// RUN: ipu-opt %t.bad.mlir --no-implicit-module --mlir-very-unsafe-disable-verifier-on-parsing --mlir-print-assume-verified | FileCheck %s --check-prefix=ASSUMED

// ALIAS:      #map = affine_map<(d0) -> (d0 + 1)>
// ALIAS-NEXT: module {
// ALIAS-NEXT:   func.func @scaled(%arg0: i32) -> (i32, tensor<4xi32>) attributes {shift = #map} {
// ALIAS-NEXT:     %0 = arith.addi %arg0, %arg0 : i32
// ALIAS-NEXT:     %1 = arith.muli %0, %0 : i32
// ALIAS-NEXT:     %cst = arith.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
// ALIAS-NEXT:     return %1, %cst : i32, tensor<4xi32>
// ALIAS-NEXT:   }
// ALIAS-NEXT:   func.func @plain(%arg0: i32) -> i32 {

// LOCAL-NOT:  #map
// LOCAL:      func.func @scaled(%arg0: i32) -> (i32, tensor<4xi32>) attributes {shift = affine_map<(d0) -> (d0 + 1)>} {
// LOCAL-NOT:  #map

// PRETTY:     func.func @scaled(%arg0: i32 {{.*}}printing-flags.mlir:{{[0-9]+}}:{{[0-9]+}}) -> (i32, tensor<4xi32>)
// PRETTY-NEXT:  %0 = arith.addi %arg0, %arg0 : i32 add.mlir:3:7
// PRETTY-NEXT:  %1 = arith.muli %0, %0 : i32 [#[[LHS:loc[0-9]+]], #[[RHS:loc[0-9]+]]]
// PRETTY-NOT: loc(
// PRETTY-DAG: #[[LHS]] = lhs.mlir:1:1
// PRETTY-DAG: #[[RHS]] = rhs.mlir:2:2

// USERS:      func.func @scaled(%arg0: i32)
// USERS-NEXT:   // %arg0 is used by %2
// USERS-NEXT:   %2 = arith.addi %arg0, %arg0 : i32 // user: %3
// USERS-NEXT:   %3 = arith.muli %2, %2 : i32 // user: %4
// USERS-NEXT:   %cst = arith.constant dense<[1, 2, 3, 4]> : tensor<4xi32> // user: %4
// USERS-NEXT:   return %3, %cst : i32, tensor<4xi32> // id: %4

// UNIQUE:      func.func @scaled(%arg1: i32)
// UNIQUE-NEXT:   %1 = arith.addi %arg1, %arg1 : i32
// UNIQUE-NEXT:   %2 = arith.muli %1, %1 : i32
// UNIQUE:      func.func @plain(%arg0: i32) -> i32 {
// UNIQUE-NEXT:   %0 = arith.subi %arg0, %arg0 : i32

// HEX: %cst = arith.constant dense<"0x01000000020000000300000004000000"> : tensor<4xi32>

// NOIMPL-NOT:  module
// NOIMPL:      {{^}}func.func @solo() {
// NOIMPL-NEXT: {{^}}  return
// NOIMPL-NEXT: {{^}}}
// NOIMPL-NOT:  module

// NOIMPL-TWO: two.mlir:0:0: error: source must contain a single top-level operation, found: 2

// BC-HEADER: 4d 4c ef 52 03

// HELP: --mlir-print-assume-verified

// VERSION:      {{^}}ipu-opt {{[0-9]+\.[0-9]+\.[0-9]+}}
// VERSION-NEXT: {{^}}LLVM version 22.

// DIALECTS:     {{^Available Dialects: ([a-z0-9_]+,)*arith,([a-z0-9_]+,)*builtin,([a-z0-9_]+,)*func,([a-z0-9_]+,)*[a-z0-9_]+$}}
// DIALECTS-IPU: {{[ ,]ipu(,|$)}}

// FALLBACK:      "func.func"() <{function_type = () -> i32, sym_name = "unverified"}> ({
// FALLBACK-NEXT:   "func.return"() : () -> ()
// FALLBACK-NEXT: }) : () -> ()

// ASSUMED:      {{^}}func.func @unverified() -> i32 {
// ASSUMED-NEXT:   return
// ASSUMED-NEXT: }

func.func @scaled(%a: i32) -> (i32, tensor<4xi32>) attributes {shift = affine_map<(d0) -> (d0 + 1)>} {
  %0 = arith.addi %a, %a : i32 loc("add.mlir":3:7)
  %1 = arith.muli %0, %0 : i32 loc(fused["lhs.mlir":1:1, "rhs.mlir":2:2])
  %cst = arith.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
  return %1, %cst : i32, tensor<4xi32>
}

func.func @plain(%a: i32) -> i32 {
  %0 = arith.subi %a, %a : i32
  return %0 : i32
}
