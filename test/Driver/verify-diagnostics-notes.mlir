// RUN: ipu-opt %s --split-input-file --verify-diagnostics
// RUN: not ipu-opt %s --split-input-file 2>&1 >/dev/null | FileCheck %s --check-prefix=PLAIN

// Notes attached to an error are expectations of their own, at the note's location (here the
// first definition of a symbol defined twice), matched like errors with @+N, @below and -re.

// expected-note@+1 {{see existing symbol definition here}}
func.func @defined_twice() {
  return
}
// expected-error@+1 {{redefinition of symbol named 'defined_twice'}}
func.func @defined_twice() {
  return
}

// -----

// expected-note-re@below {{see existing {{[a-z]+}} definition here}}
func.func @twice_again() {
  return
}
// expected-error@below {{redefinition of symbol named 'twice_again'}}
func.func @twice_again() {
  return
}

// Without --verify-diagnostics, the note follows its error, at the first definition.
// PLAIN: verify-diagnostics-notes.mlir:[[# @LINE - 5]]:1: error: redefinition of symbol named 'twice_again'
// PLAIN: verify-diagnostics-notes.mlir:[[# @LINE - 10]]:1: note: see existing symbol definition here
