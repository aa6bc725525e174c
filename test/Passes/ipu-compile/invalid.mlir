// ipu-compile reports the failing stage's diagnostic: options out of range at the module,
// ops the lowering does not handle at the function, and stops the build there.
// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-compile{tiles=16 compile-kernels=false})' --verify-diagnostics -o /dev/null
// RUN: not ipu-opt %s --split-input-file -p 'builtin.module(ipu-compile{tiles=0 compile-kernels=false})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not ipu-opt %s --split-input-file -p 'builtin.module(ipu-compile{tiles=1473 compile-kernels=false})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=MANY
// RUN: not ipu-opt %s --split-input-file -p 'builtin.module(ipu-compile{tiles=16 target=gc200 compile-kernels=false})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not ipu-opt %s --split-input-file -p 'builtin.module(ipu-compile{precision=bf16})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=PRECISION
// The failing phase is logged with success=false and no later phase runs.
// RUN: env RUST_LOG=info not ipu-opt %s --split-input-file -p 'builtin.module(ipu-compile{tiles=1473 compile-kernels=false})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOG

// ZERO: error: 'builtin.module' op ipu-lower-mid: tiles=0 is outside 1..=1472 of target c600
// MANY: error: 'builtin.module' op ipu-lower-mid: tiles=1473 is outside 1..=1472 of target c600
// TARGET: error: 'builtin.module' op ipu-lower-mid: unknown target 'gc200'
// PRECISION: error: invalid value 'bf16' for option 'precision' of pass 'ipu-compile'

// The stage that failed (ipu-compile is the pipeline of its stages) ends the run.
// LOG: package build phase finished phase="lower_mid" elapsed_ms={{[0-9]+}} success=false
// LOG-NOT: phase="select_finalist"
// LOG: pass finished pass=ipu-lower-mid op=builtin.module elapsed_ms={{[0-9]+}} success=false
// LOG-NOT: pass=ipu-select-finalist

// A cast with an FP8 scale has no plan: the pointwise strategy offers only what it lowers,
// and planning names the rule it breaks.
func.func @cast(%x: tensor<32x64xf16>) -> tensor<32x64xf8E4M3FNUZ> {
  // expected-error@+1 {{'ipu.cast' op has no operator plan: a cast at FP8 scale 3: the cast kernel reads and writes FP8 at scale 0}}
  %0 = "ipu.cast"(%x) {scale = 3 : i32} : (tensor<32x64xf16>) -> tensor<32x64xf8E4M3FNUZ>
  return %0 : tensor<32x64xf8E4M3FNUZ>
}

// -----

// A permutation the lowering does not implement.
// expected-error-re@+1 {{ipu-lower-to-tiles: ipu.rearrange: {{.*}}moves the last axis{{.*}}}}
func.func @rotate(%x: tensor<2x4x16xf16>) -> tensor<16x2x4xf16> {
  %0 = "ipu.rearrange"(%x) {permutation = array<i64: 2, 0, 1>} : (tensor<2x4x16xf16>) -> tensor<16x2x4xf16>
  return %0 : tensor<16x2x4xf16>
}
