// ipu-select-finalist needs ipu-lower-mid's finalists.
// RUN: ipu-opt %s -p 'builtin.module(ipu-select-finalist)' --verify-diagnostics -o /dev/null
// Searches with no room are refused, not widened to 1.
// RUN: not ipu-opt %s -p 'builtin.module(ipu-select-finalist{mappings=0})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=MAPPINGS
// RUN: not ipu-opt %s -p 'builtin.module(ipu-select-finalist{finalists=0})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=FINALISTS
// MAPPINGS: error: 'builtin.module' op ipu-select-finalist: mappings=0: the search needs at least 1
// FINALISTS: error: 'builtin.module' op ipu-select-finalist: finalists=0: the search needs at least 1

// expected-error@below {{ipu-select-finalist: the module has no 'ipu.finalists' attribute; run ipu-lower-mid first}}
module {
  func.func @gelu(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
    %0 = "ipu.gelu"(%x) : (tensor<4x8xf16>) -> tensor<4x8xf16>
    return %0 : tensor<4x8xf16>
  }
}
