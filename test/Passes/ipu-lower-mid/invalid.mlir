// Inputs ipu-lower-mid cannot plan are diagnosed at the op, options at the module.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16})' --verify-diagnostics -o /dev/null
// RUN: not ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=0})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=TILES
// Searches with no room are refused, not widened to 1.
// RUN: not ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 beam-width=0})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=BEAM
// RUN: not ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 candidates-per-op=0})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=CANDIDATES
// RUN: not ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 finalists=0})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=FINALISTS
// BEAM: error: 'builtin.module' op ipu-lower-mid: beam-width=0: the search needs at least 1
// CANDIDATES: error: 'builtin.module' op ipu-lower-mid: candidates-per-op=0: the search needs at least 1
// FINALISTS: error: 'builtin.module' op ipu-lower-mid: finalists=0: the search needs at least 1

func.func private @helper(%x: tensor<4x8xf16>) -> tensor<4x8xf16>

func.func @calls_a_function(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  // expected-error@+1 {{ipu-lower-mid: cannot be planned: 'func.call' is not an ipu graph op}}
  %0 = func.call @helper(%x) : (tensor<4x8xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// TILES: error: 'builtin.module' op ipu-lower-mid: tiles=0 is outside 1..=1472 of target c600
