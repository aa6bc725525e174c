// RUN: env RUST_LOG=info ipu-opt %s -p 'builtin.module(func.func(ipu-canonicalize))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=TEXT
// RUN: env RUST_LOG=info ipu-opt %s -p 'builtin.module(func.func(ipu-canonicalize))' -o /dev/null --log-format=json 2>&1 | FileCheck %s --check-prefix=JSON
// RUN: env RUST_LOG=ipu_passes=debug not ipu-opt %s -p 'builtin.module(func.func(ipu-canonicalize{max-iterations=1}))' -o /dev/null -log-format=json 2>&1 | FileCheck %s --check-prefix=FAILED
// RUN: env -u RUST_LOG ipu-opt %s -p 'builtin.module(func.func(ipu-canonicalize))' -o /dev/null --log-format=json 2>&1 | count 0
// RUN: not ipu-opt %s --log-format=xml 2>&1 | FileCheck %s --check-prefix=BAD

// Logging: RUST_LOG selects levels (default: warnings only, so a clean run prints nothing);
// every run of one of our passes logs `pass finished` with the pass, the op, the time and the
// outcome, as text or, with --log-format=json, as one JSON object per line.

// TEXT: INFO ipu.pass{pass=ipu-canonicalize}: ipu_passes::pass: pass finished pass=ipu-canonicalize op=func.func elapsed_ms={{[0-9]+}} success=true

// JSON: {"timestamp":"{{[^"]+}}","level":"INFO","fields":{"message":"pass finished","pass":"ipu-canonicalize","op":"func.func","elapsed_ms":{{[0-9]+}},"success":true},"target":"ipu_passes::pass"

// A failing run says so, and at debug level why.
// FAILED: "level":"INFO","fields":{"message":"pass finished","pass":"ipu-canonicalize","op":"func.func","elapsed_ms":{{[0-9]+}},"success":false}
// FAILED: "level":"DEBUG","fields":{"message":"pass failed","pass":"ipu-canonicalize","reason":"greedy rewriting did not converge"}

// BAD: error: invalid value 'xml' for '--log-format <LOG_FORMAT>'

func.func @round_trip(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = "ipu.cast"(%x) : (tensor<4xf16>) -> tensor<4xf32>
  %1 = "ipu.cast"(%0) : (tensor<4xf32>) -> tensor<4xf16>
  return %1 : tensor<4xf16>
}
