// A pass that runs on one kind of op nested under another is a positioned pipeline error, not
// an abort inside MLIR's pass manager: for our passes, for a named pipeline whose stages
// include such a pass (the caret is under the pipeline's name), and under `any`.
// RUN: not ipu-opt %s -p 'builtin.module(func.func(ipu-place-storage))' 2>&1 | FileCheck %s --strict-whitespace --check-prefix=PASS
// RUN: not ipu-opt %s -p 'builtin.module(func.func(ipu-compile{tiles=4}))' 2>&1 | FileCheck %s --strict-whitespace --check-prefix=PIPELINE
// RUN: not ipu-opt %s -p 'builtin.module(any(ipu-emit-tile-code))' 2>&1 | FileCheck %s --strict-whitespace --check-prefix=ANY
// Passes that run on any op nest anywhere.
// RUN: ipu-opt %s -p 'builtin.module(func.func(ipu-canonicalize))' | FileCheck %s --check-prefix=OK

// PASS: ipu-opt: invalid pass pipeline:
// PASS-NEXT: error: Can't add pass 'IpuPlaceStorage' restricted to 'builtin.module' on a PassManager intended to run on 'func.func', did you intend to nest? ('ipu-place-storage' runs on 'builtin.module' ops: place it at the 'builtin.module' level of the pipeline)
// PASS-NEXT: builtin.module(func.func(ipu-place-storage))
// PASS-NEXT: {{^ {25}\^~{16}$}}

// PIPELINE: error: Can't add pass 'IpuLowerToTiles' restricted to 'builtin.module' on a PassManager intended to run on 'func.func', did you intend to nest?
// PIPELINE-NEXT: builtin.module(func.func(ipu-compile{tiles=4}))
// PIPELINE-NEXT: {{^ {25}\^~{19}$}}

// ANY: error: Can't add pass 'IpuEmitTileCode' restricted to 'builtin.module' on a PassManager intended to run on 'any', did you intend to nest?

// OK: func.func @f

func.func @f(%x: tensor<4xf16>) -> tensor<4xf16> {
  return %x : tensor<4xf16>
}
