// RUN: ipu-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(ipu-canonicalize{disable-patterns=fold-identity-cast,fold-everything}))'
// RUN: not ipu-opt %s --pass-pipeline='builtin.module(ipu-canonicalize{max-iteration=3})' 2>&1 | FileCheck %s --strict-whitespace --check-prefix=OPTION
// RUN: not ipu-opt %s --pass-pipeline='builtin.module(ipu-canonicalize{max-iterations=-1})' 2>&1 | FileCheck %s --strict-whitespace --check-prefix=VALUE
// RUN: not ipu-opt %s --pass-pipeline='builtin.module(ipu-canonicalize{max-iterations})' 2>&1 | FileCheck %s --check-prefix=MISSING

// Invalid uses of ipu-canonicalize. An unknown pattern name is an error at each op the pass runs
// on, naming the valid patterns (a misspelled name must not silently disable nothing).

// expected-error@+1 {{ipu-canonicalize: unknown pattern 'fold-everything' in disable-patterns; patterns: fold-identity-cast, fold-cast-of-cast, fold-identity-rearrange, fold-rearrange-of-rearrange, fold-transpose-into-matmul}}
func.func @unknown_pattern(%x: tensor<4xf16>) -> tensor<4xf16> {
  return %x : tensor<4xf16>
}

// -----

// expected-error@+1 {{unknown pattern 'fold-everything'}}
func.func @unknown_pattern_each_function() {
  return
}

// An unknown option is a pipeline error pointing at the option, with a suggestion.
// OPTION: error: pass 'ipu-canonicalize' has no option 'max-iteration'; did you mean 'max-iterations'? valid options: max-iterations, disable-patterns
// OPTION-NEXT: builtin.module(ipu-canonicalize{max-iteration=3})
// OPTION-NEXT: {{^ {32}\^~{12}$}}

// A value of the wrong type names the option and the expected type.
// VALUE: error: invalid value '-1' for option 'max-iterations' of pass 'ipu-canonicalize': expected u32
// VALUE-NEXT: builtin.module(ipu-canonicalize{max-iterations=-1})
// VALUE-NEXT: {{^ {47}\^~$}}

// An option without a value is a value error too.
// MISSING: error: invalid value '' for option 'max-iterations' of pass 'ipu-canonicalize': expected u32
