// RUN: ipu-opt %s '--split-input-file=// ====' -p 'builtin.module(ipu-canonicalize)' | FileCheck %s
// RUN: not ipu-opt %s -p 'builtin.module(ipu-canonicalize)' 2>&1 | FileCheck %s --check-prefix=WHOLE

// --split-input-file=<marker>: chunks are cut at another marker, and the outputs are joined with
// it; the default marker is then ordinary comment text. Without splitting, the file is one
// module and the symbol @f is defined twice.

// CHECK-LABEL: func.func @f
// CHECK-SAME: (%[[X:.*]]: tensor<4xf16>)
// CHECK-NEXT: return %[[X]]
// CHECK: // ====
// CHECK-LABEL: func.func @f
// CHECK-NEXT: return
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
