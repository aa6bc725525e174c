// RUN: ipu-opt %s '--split-input-file=// ''====' -p 'builtin.module(ipu-canonicalize)' | FileCheck %s
// RUN: ipu-opt %s '--split-input-file=// ''====' '--output-split-marker=// ++++' -p 'builtin.module(ipu-canonicalize)' | FileCheck %s --check-prefix=OUT
// RUN: not ipu-opt %s -p 'builtin.module(ipu-canonicalize)' 2>&1 | FileCheck %s --check-prefix=WHOLE

// --split-input-file=<marker>: chunks are cut at another marker, and the default marker is then
// ordinary comment text. As in mlir-opt, the marker splits wherever it occurs, so the RUN lines
// spell it in two quoted halves and the CHECK lines with a regex. The outputs are joined with --output-split-marker (`// -----` unless
// given), as mlir-opt joins them. Without splitting, the file is one
// module and the symbol @f is defined twice.

// CHECK-LABEL: func.func @f
// CHECK-SAME: (%[[X:.*]]: tensor<4xf16>)
// CHECK-NEXT: return %[[X]]
// CHECK: // -----
// CHECK-NOT: {{//}} ====
// CHECK-LABEL: func.func @f
// CHECK-NEXT: return
// OUT: func.func @f
// OUT: // ++++
// OUT-NEXT: module
// WHOLE: error: redefinition of symbol named 'f'
func.func @f(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = "ipu.cast"(%x) : (tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// ====

func.func @f() {
  return
}
