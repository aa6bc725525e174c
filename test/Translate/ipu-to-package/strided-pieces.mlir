// A tile program whose input is gathered by strided host pieces, packaged and run: the host
// streams arg0 (4 x 8 f32) in column blocks, tile 0 getting columns 0..4 as 4 runs of 16 B
// 32 B apart and tile 1 columns 4..8, and reads each tile's 64 B back contiguously as
// result0 (2 x 4 x 4). So result0[b] = arg0[:, 4b:4b+4]: a block transpose done entirely by
// the host's gather, checked on the written outputs. The package has no reference function:
// `ipu run` reports the numerical test as failed for that reason (exit 1) and the hardware
// test as passed.
// REQUIRES: tool-ipu
// RUN: rm -rf %t && mkdir -p %t/in
// RUN: ipu-opt %s -p 'builtin.module(ipu-place-storage, ipu-emit-tile-code)' -o %t/emitted.mlir
// RUN: ipu-translate --ipu-to-package %t/emitted.mlir --no-embed-kernels -o %t/blocks.ipuexe
// RUN: ipu inspect %t/blocks.ipuexe --bindings | FileCheck %s
// RUN: python3 -c "import numpy as np; np.save('%t/in/arg0.npy', np.arange(32, dtype=np.float32).reshape(4, 8))"
// RUN: not ipu run %t/blocks.ipuexe --inputs %t/in --outputs %t/out --artifacts %t/a 2>/dev/null | FileCheck %s --check-prefix=EXEC
// RUN: python3 -c "import numpy as np; x = np.arange(32, dtype=np.float32).reshape(4, 8); y = np.load('%t/out/result0.npy'); assert (y == x.reshape(4, 2, 4).transpose(1, 0, 2)).all(), y"

// CHECK: input arg0: F32 [4, 8], 128 bytes, stream 'arg0', 2 pieces
// CHECK-NEXT: tile    0 0x{{[0-9a-f]+}}..0x{{[0-9a-f]+}} <-> tensor bytes 0..112 in 4 runs of 16 bytes, stride 32
// CHECK-NEXT: tile    1 0x{{[0-9a-f]+}}..0x{{[0-9a-f]+}} <-> tensor bytes 16..128 in 4 runs of 16 bytes, stride 32
// CHECK: output result0: F32 [2, 4, 4], 128 bytes, stream 'result0', 2 pieces
// CHECK-NEXT: tile    0 0x{{[0-9a-f]+}}..0x{{[0-9a-f]+}} <-> tensor bytes 0..64
// CHECK-NEXT: tile    1 0x{{[0-9a-f]+}}..0x{{[0-9a-f]+}} <-> tensor bytes 64..128

// EXEC: numericalTest=FAIL (no reference: the source module has no function @blocks
// EXEC-NEXT: package={{.*}}/blocks/model-final.ipuexe tiles=1472 hardwareTest=PASS

module {
  module @blocks.tiles attributes {ipu_tile.function = "blocks", ipu_tile.target = "c600", ipu_tile.tiles = 1472 : i64} {
    "ipu_tile.buffer"() {bytes = 64 : i64, class = "standard", id = 0 : i64, live = array<i64: 0, 1>, name = "x", tiles = array<i32: 0, 1>} : () -> ()
    "ipu_tile.stream"() {name = "arg0", pieces = [array<i64: 0, 0, 0, 0, 64, 4, 32>, array<i64: 1, 0, 0, 16, 64, 4, 32>], precision = "f32", role = "input", shape = array<i64: 4, 8>} : () -> ()
    "ipu_tile.stream"() {name = "result0", pieces = array<i64: 0, 0, 0, 0, 64, 1, 0, 0, 64, 64>, precision = "f32", role = "output", shape = array<i64: 2, 4, 4>} : () -> ()
    "ipu_tile.host_write"() {program = "run", stream = "arg0"} : () -> ()
    "ipu_tile.host_read"() {program = "run", stream = "result0"} : () -> ()
  }
}
