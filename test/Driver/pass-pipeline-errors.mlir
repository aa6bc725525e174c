// RUN: not ipu-opt %s -p 'builtin.module(func.func(ipu-canonicalise))' 2>&1 | FileCheck %s --strict-whitespace --check-prefix=MISSPELLED
// RUN: not ipu-opt %s -p 'builtin.module(ipu-nothing)' 2>&1 | FileCheck %s --strict-whitespace --check-prefix=UNKNOWN
// RUN: not ipu-opt %s -p 'builtin.module(ipu-canonicalize{max-iteration=3})' 2>&1 | FileCheck %s --strict-whitespace --check-prefix=OPTION
// RUN: not ipu-opt %s -p 'builtin.module(cse{foo=1})' 2>&1 | FileCheck %s --strict-whitespace --check-prefix=UPSTREAM-OPTION
// RUN: not ipu-opt %s -p 'builtin.module(ipu-canonicalize,)' 2>&1 | FileCheck %s --strict-whitespace --check-prefix=TRAILING-COMMA
// RUN: not ipu-opt %s -p 'builtin.module(ipu-canonicalize))' 2>&1 | FileCheck %s --strict-whitespace --check-prefix=EXTRA-PAREN
// RUN: not ipu-opt %s -p 'builtin.module(ipu-canonicalize{max-iterations=2' 2>&1 | FileCheck %s --strict-whitespace --check-prefix=OPEN-OPTIONS
// RUN: not ipu-opt %s -p 'builtin.module(ipu-canonicalize{disable-patterns="a,b})' 2>&1 | FileCheck %s --strict-whitespace --check-prefix=OPEN-QUOTE
// RUN: not ipu-opt %s -p 'func.func(ipu-canonicalize)' 2>&1 | FileCheck %s --strict-whitespace --check-prefix=ANCHOR
// RUN: not ipu-opt %s -p 'builtin.module(ipu-annotate-flops{include-elementwise=})' 2>&1 | FileCheck %s --strict-whitespace --check-prefix=EMPTY-BOOL
// RUN: ipu-opt %s -p 'builtin.module(ipu-annotate-flops{include-elementwise})' -o /dev/null

// Bad pipeline strings: a non-zero exit, the error, the pipeline, and a caret under the offending
// characters; unknown names get a suggestion when one is close and the list of valid passes.
// The input below is never read past parsing.

// MISSPELLED: ipu-opt: invalid pass pipeline:
// MISSPELLED-NEXT: error: 'ipu-canonicalise' does not refer to a registered pass or pass pipeline; did you mean 'ipu-canonicalize'?
// MISSPELLED-NEXT: builtin.module(func.func(ipu-canonicalise))
// MISSPELLED-NEXT: {{^ {25}\^~{15}$}}
// MISSPELLED-NEXT: note: valid passes: {{.*}}cse, {{.*}}ipu-canonicalize, ipu-cleanup, {{.*}}symbol-dce

// No pass is close to this one: no suggestion, but the list.
// UNKNOWN: <unknown>:0: error: MLIR Textual PassPipeline Parser:1:1: error: 'ipu-nothing' does not refer to a registered pass or pass pipeline
// UNKNOWN: ipu-opt: invalid pass pipeline:
// UNKNOWN-NEXT: error: 'ipu-nothing' does not refer to a registered pass or pass pipeline{{$}}
// UNKNOWN-NEXT: builtin.module(ipu-nothing)
// UNKNOWN-NEXT: {{^ {15}\^~{10}$}}
// UNKNOWN-NEXT: note: valid passes: canonicalize, {{.*}}ipu-canonicalize

// OPTION: error: pass 'ipu-canonicalize' has no option 'max-iteration'; did you mean 'max-iterations'? valid options: max-iterations, disable-patterns
// OPTION-NEXT: builtin.module(ipu-canonicalize{max-iteration=3})
// OPTION-NEXT: {{^ {32}\^~{12}$}}

// Upstream passes report their own option errors, placed at the pass.
// UPSTREAM-OPTION: error: pass 'cse': {{.*}}no such option foo
// UPSTREAM-OPTION: builtin.module(cse{foo=1})
// UPSTREAM-OPTION-NEXT: {{^ {15}\^~~$}}

// TRAILING-COMMA: error: expected pass or op name, found ')'
// TRAILING-COMMA-NEXT: builtin.module(ipu-canonicalize,)
// TRAILING-COMMA-NEXT: {{^ {32}\^$}}

// EXTRA-PAREN: error: unexpected ')' with no matching '('
// EXTRA-PAREN-NEXT: builtin.module(ipu-canonicalize))
// EXTRA-PAREN-NEXT: {{^ {32}\^$}}

// OPEN-OPTIONS: error: expected '}' to close options of 'ipu-canonicalize' opened at column 32
// OPEN-OPTIONS-NEXT: builtin.module(ipu-canonicalize{max-iterations=2
// OPEN-OPTIONS-NEXT: {{^ {48}\^$}}

// OPEN-QUOTE: error: unterminated "..." value of option 'disable-patterns'
// OPEN-QUOTE-NEXT: builtin.module(ipu-canonicalize{disable-patterns="a,b})
// OPEN-QUOTE-NEXT: {{^ {49}\^$}}

// The anchor must be the input's top-level op.
// ANCHOR: error: can't run 'func.func' pass manager on 'builtin.module' op
// ANCHOR-NEXT: func.func(ipu-canonicalize)
// ANCHOR-NEXT: {{^\^~{8}$}}

func.func @untouched() {
  return
}

// A bool option given `=` and no value is an error; the bare flag means true.
// EMPTY-BOOL: ipu-opt: invalid pass pipeline:
// EMPTY-BOOL-NEXT: error: invalid value '' for option 'include-elementwise' of pass 'ipu-annotate-flops': expected bool (use true, false, 1 or 0; the bare flag means true)
// EMPTY-BOOL-NEXT: builtin.module(ipu-annotate-flops{include-elementwise=})
