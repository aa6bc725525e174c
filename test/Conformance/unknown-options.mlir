// Checks that a misspelled long option starting with 'o' or 'p' is rejected as
// an unknown command-line argument (it is not taken as `-o <file>` or
// `-p <pipeline>` with a glued value) and that no output file is written, and
// that the correctly spelled -output-split-marker sets the text printed
// between the outputs of -split-input-file chunks.
//
// Only the "Unknown command line argument" line is checked: the extra notes
// that follow it ("Did you mean ...", and stock's "may not occur within a
// group!") are not part of the contract.

// RUN: rm -rf %t && mkdir -p %t/stock %t/ipu
// RUN: cd %t/stock && not %mlir_opt %s -output-split-markr=XYZ 2>&1 | FileCheck %s --check-prefix=OUT
// RUN: cd %t/ipu && not ipu-opt %s -output-split-markr=XYZ 2>&1 | FileCheck %s --check-prefix=OUT
// RUN: cd %t/stock && not %mlir_opt %s -pass-pipelin='builtin.module(cse)' 2>&1 | FileCheck %s --check-prefix=PIPE
// RUN: cd %t/ipu && not ipu-opt %s -pass-pipelin='builtin.module(cse)' 2>&1 | FileCheck %s --check-prefix=PIPE
// RUN: ls -A %t/stock | count 0
// RUN: ls -A %t/ipu | count 0

// RUN: %mlir_opt %s -split-input-file -output-split-marker=XYZ | FileCheck %s --check-prefix=MARKER
// RUN: ipu-opt %s -split-input-file -output-split-marker=XYZ | FileCheck %s --check-prefix=MARKER

// OUT: Unknown command line argument '-output-split-markr=XYZ'.  Try: '{{.*}} --help'
// PIPE: Unknown command line argument '-pass-pipelin=builtin.module(cse)'.  Try: '{{.*}} --help'

// MARKER:      func.func @one()
// MARKER:      {{^}}}
// MARKER-EMPTY:
// MARKER-NEXT: XYZ
// MARKER-NEXT: module {
// MARKER-NEXT:   func.func @two()
// MARKER-NOT:  {{-----}}

func.func @one() {
  return
}

// -----

func.func @two() {
  return
}
