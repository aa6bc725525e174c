// Checks how -pass-pipeline handles malformed or unusual pipelines:
//  * a pipeline without an anchor op (`cse`) and an empty pipeline are both
//    rejected with the "wrapped with the anchor operation type" error;
//  * when -pass-pipeline is given twice the last one wins;
//  * an unbalanced pipeline (missing or extra parenthesis) and an unknown pass
//    name fail with the pipeline parser's message, including its echo of the
//    offending text and caret. The parser's message ends with a newline of
//    its own, so an empty line follows the caret.
// ipu-opt prints stock's message first and then adds its own caret rendering of
// the whole pipeline; that addition is not stock behaviour, so it is checked
// (with an -IPU prefix) for ipu-opt only.

// RUN: not %mlir_opt %s --pass-pipeline='cse' 2>&1 | FileCheck %s --check-prefix=ANCHOR
// RUN: not ipu-opt %s --pass-pipeline='cse' 2>&1 | FileCheck %s --check-prefix=ANCHOR
// RUN: not %mlir_opt %s --pass-pipeline='' 2>&1 | FileCheck %s --check-prefix=ANCHOR
// RUN: not ipu-opt %s --pass-pipeline='' 2>&1 | FileCheck %s --check-prefix=ANCHOR

// RUN: %mlir_opt %s --pass-pipeline='builtin.module(cse)' --pass-pipeline='builtin.module(func.func(canonicalize),symbol-dce)' --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=LAST
// RUN: ipu-opt %s --pass-pipeline='builtin.module(cse)' --pass-pipeline='builtin.module(func.func(canonicalize),symbol-dce)' --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=LAST

// RUN: not %mlir_opt %s --pass-pipeline='builtin.module(func.func(cse)' 2>&1 | FileCheck %s --check-prefix=OPEN
// RUN: not ipu-opt %s --pass-pipeline='builtin.module(func.func(cse)' 2>&1 | FileCheck %s --check-prefixes=OPEN,OPEN-IPU
// RUN: not %mlir_opt %s --pass-pipeline='builtin.module(cse))' 2>&1 | FileCheck %s --check-prefix=CLOSE
// RUN: not ipu-opt %s --pass-pipeline='builtin.module(cse))' 2>&1 | FileCheck %s --check-prefixes=CLOSE,CLOSE-IPU
// RUN: not %mlir_opt %s --pass-pipeline='builtin.module(func.func(cse,no-such-pass))' 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not ipu-opt %s --pass-pipeline='builtin.module(func.func(cse,no-such-pass))' 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// ANCHOR: <unknown>:0: error: expected pass pipeline to be wrapped with the anchor operation type, e.g. 'builtin.module(...)'

// LAST:      Pass Manager with 2 passes:
// LAST-NEXT: builtin.module(
// LAST-NEXT:   func.func(
// LAST-NEXT:     canonicalize{
// LAST-NEXT:   ),
// LAST-NEXT:   symbol-dce
// LAST-NEXT: )
// LAST-NOT:  cse

// OPEN:           <unknown>:0: error: MLIR Textual PassPipeline Parser:1:11: error: encountered unbalanced parentheses while parsing pipeline
// OPEN-NEXT:      {{^}}func.func(cse{{$}}
// OPEN-NEXT:      {{^          \^$}}
// OPEN-EMPTY:
// OPEN-IPU:       builtin.module(func.func(cse)
// OPEN-IPU-NEXT:  {{^ +\^$}}

// CLOSE:          <unknown>:0: error: MLIR Textual PassPipeline Parser:1:4: error: encountered extra closing ')' creating unbalanced parentheses while parsing pipeline
// CLOSE-NEXT:     {{^}}cse){{$}}
// CLOSE-NEXT:     {{^   \^$}}
// CLOSE-EMPTY:
// CLOSE-IPU:      builtin.module(cse))
// CLOSE-IPU-NEXT: {{^ +\^$}}

// UNKNOWN:        <unknown>:0: error: MLIR Textual PassPipeline Parser:1:15: error: 'no-such-pass' does not refer to a registered pass or pass pipeline
// UNKNOWN-NEXT:   {{^}}func.func(cse,no-such-pass){{$}}
// UNKNOWN-NEXT:   {{^              \^$}}
// UNKNOWN-EMPTY:

func.func @f(%a: i32) -> i32 {
  return %a : i32
}
