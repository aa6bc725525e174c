// Every ipu-translate flag: the function to compile, the target, tiles and precision, the FP8
// scale, kernels by spec instead of embedded objects, JSON logs, standard input, and packaging
// an already emitted ipu_tile program; bad values are refused with the flag named.
// REQUIRES: tool-ipu
// RUN: rm -rf %t && mkdir -p %t
// RUN: ipu-translate --ipu-to-package %s --function second --tiles 8 --no-embed-kernels -o %t/second.ipuexe
// RUN: ipu inspect %t/second.ipuexe | FileCheck %s --check-prefix=SECOND
// SECOND: package second
// SECOND: kernels: {{[0-9]+}} (0 with embedded objects, 0 distinct objects, {{[0-9]+}} by spec)
// SECOND: input arg0 F16 [64, 64] over 8 tiles
// SECOND: source: function @second, precision native, {{[0-9,]+}} bytes of MLIR

// RUN: ipu-translate --ipu-to-package %s --target bow --tiles 4 --precision fp8 --fp8-scale=-2 --no-embed-kernels -o %t/bow.ipuexe
// RUN: ipu inspect %t/bow.ipuexe | FileCheck %s --check-prefix=BOW
// BOW: target bow (1472 tiles); 4 tiles with images
// BOW: gemm_f8_interleaved
// BOW: source: function @first, precision fp8 scale=-2

// RUN: cat %s | env RUST_LOG=info ipu-translate --ipu-to-package - --tiles 4 --no-embed-kernels --log-format json -o %t/stdin.ipuexe 2>&1 | FileCheck %s --check-prefix=JSON
// JSON: {"timestamp":{{.*}}"message":"lowered graph for package construction"

// RUN: ipu-opt %s -p 'builtin.module(ipu-compile{tiles=4 compile-kernels=false})' -o %t/tiles.mlir
// RUN: ipu-translate --ipu-to-package %t/tiles.mlir --no-embed-kernels -o %t/emitted.ipuexe
// RUN: ipu inspect %t/emitted.ipuexe | FileCheck %s --check-prefix=EMITTED
// EMITTED: package first
// EMITTED: 4 tiles with images

// RUN: not ipu-translate --ipu-to-package %s --precision bf16 -o %t/bad.ipuexe 2>&1 | FileCheck %s --check-prefix=PRECISION
// PRECISION: invalid value 'bf16' for '--precision <PRECISION>'
// RUN: not ipu-translate --ipu-to-package %s --tiles 0 -o %t/bad.ipuexe 2>&1 | FileCheck %s --check-prefix=TILES
// TILES: tiles=0 is outside 1..=1472 of target c600
// RUN: not ipu-translate --ipu-to-package %s --target gc200 -o %t/bad.ipuexe 2>&1 | FileCheck %s --check-prefix=TARGET
// TARGET: unknown target 'gc200'
// RUN: not ipu-translate --ipu-to-package %s --function missing --no-embed-kernels -o %t/bad.ipuexe 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: no function 'missing'
// RUN: not ipu-translate %s -o %t/bad.ipuexe 2>&1 | FileCheck %s --check-prefix=NONE
// NONE: no translation selected (use --ipu-to-package)

func.func @first(%x: tensor<32x64xf16>, %w: tensor<64x64xf16>) -> tensor<32x64xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
  return %y : tensor<32x64xf16>
}

func.func @second(%x: tensor<64x64xf16>, %w: tensor<64x64xf16>) -> tensor<64x64xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16>
  return %y : tensor<64x64xf16>
}
