// Padded host pieces, packaged and run: the last `pad` bytes of every run of a piece are
// zeros the host writes, not tensor bytes (an AMP order's padded 16-element group), and a
// piece of padding only writes zeros. Tile 0's buffer x (4 x 4 f32) is first filled with
// arg1 (16 ones), then arg0 (4 x 3 f32) is written over it as 4 runs of 12 tensor bytes,
// 12 B apart, each followed by 4 B of zeros, and y (4 f32) gets arg2's two values and two
// zeros from a padding-only piece. result0 reads x whole (arg0 with a zero column: the
// zeros overwrote the ones), result1 reads x back through the same padded runs (arg0
// itself: the host drops the padding), result2 reads y. `ipu inspect` names the padding.
// REQUIRES: tool-ipu
// RUN: rm -rf %t && mkdir -p %t/in
// RUN: ipu-opt %s -p 'builtin.module(ipu-place-storage, ipu-emit-tile-code)' -o %t/emitted.mlir
// RUN: FileCheck %s --check-prefix=IR < %t/emitted.mlir
// RUN: ipu-translate --ipu-to-package %t/emitted.mlir --no-embed-kernels -o %t/padded.ipuexe
// RUN: ipu inspect %t/padded.ipuexe --bindings | FileCheck %s
// RUN: python3 -c "import numpy as np; np.save('%t/in/arg0.npy', np.arange(1, 13, dtype=np.float32).reshape(4, 3)); np.save('%t/in/arg1.npy', np.ones(16, dtype=np.float32)); np.save('%t/in/arg2.npy', np.array([7, 8], dtype=np.float32))"
// RUN: not ipu run %t/padded.ipuexe --inputs %t/in --outputs %t/out --artifacts %t/a 2>/dev/null | FileCheck %s --check-prefix=EXEC
// RUN: python3 -c "import numpy as np; x = np.arange(1, 13, dtype=np.float32).reshape(4, 3); y = np.load('%t/out/result0.npy'); assert (y == np.pad(x, ((0, 0), (0, 1)))).all(), y; assert (np.load('%t/out/result1.npy') == x).all(); assert (np.load('%t/out/result2.npy') == [7, 8, 0, 0]).all()"

// The passes that read and rewrite the program keep the padded rows (8 entries).
// IR: "ipu_tile.stream"() {name = "arg0", pieces = [array<i64: 0, 0, 0, 0, 64, 4, 12, 4>]
// IR: "ipu_tile.stream"() {name = "arg2", pieces = [array<i64: 0, 1, 0, 0, 8>, array<i64: 0, 1, 8, 0, 8, 1, 0, 8>]

// CHECK: input arg0: F32 [4, 3], 48 bytes, stream 'arg0', 1 pieces
// CHECK-NEXT: tile    0 0x{{[0-9a-f]+}}..0x{{[0-9a-f]+}} <-> tensor bytes 0..48 in 4 runs of 12 bytes and 4 zero bytes, stride 12
// CHECK: input arg2: F32 [2], 8 bytes, stream 'arg2', 2 pieces
// CHECK-NEXT: tile    0 0x{{[0-9a-f]+}}..0x{{[0-9a-f]+}} <-> tensor bytes 0..8
// CHECK-NEXT: tile    0 0x{{[0-9a-f]+}}..0x{{[0-9a-f]+}} <-> tensor bytes 0..0 and 8 zero bytes
// CHECK: output result1: F32 [4, 3], 48 bytes, stream 'result1', 1 pieces
// CHECK-NEXT: tile    0 0x{{[0-9a-f]+}}..0x{{[0-9a-f]+}} <-> tensor bytes 0..48 in 4 runs of 12 bytes and 4 zero bytes, stride 12

// EXEC: numericalTest=FAIL (no reference: the source module has no function @padded
// EXEC-NEXT: package={{.*}}/padded/model-final.ipuexe tiles=1472 hardwareTest=PASS

module {
  module @padded.tiles attributes {ipu_tile.function = "padded", ipu_tile.target = "c600", ipu_tile.tiles = 1472 : i64} {
    "ipu_tile.buffer"() {bytes = 64 : i64, class = "standard", id = 0 : i64, live = array<i64: 0, 5>, name = "x", tiles = array<i32: 0>} : () -> ()
    "ipu_tile.buffer"() {bytes = 16 : i64, class = "standard", id = 1 : i64, live = array<i64: 0, 5>, name = "y", tiles = array<i32: 0>} : () -> ()
    "ipu_tile.stream"() {name = "arg0", pieces = [array<i64: 0, 0, 0, 0, 64, 4, 12, 4>], precision = "f32", role = "input", shape = array<i64: 4, 3>} : () -> ()
    "ipu_tile.stream"() {name = "arg1", pieces = array<i64: 0, 0, 0, 0, 64>, precision = "f32", role = "input", shape = array<i64: 16>} : () -> ()
    "ipu_tile.stream"() {name = "arg2", pieces = [array<i64: 0, 1, 0, 0, 8>, array<i64: 0, 1, 8, 0, 8, 1, 0, 8>], precision = "f32", role = "input", shape = array<i64: 2>} : () -> ()
    "ipu_tile.stream"() {name = "result0", pieces = array<i64: 0, 0, 0, 0, 64>, precision = "f32", role = "output", shape = array<i64: 4, 4>} : () -> ()
    "ipu_tile.stream"() {name = "result1", pieces = [array<i64: 0, 0, 0, 0, 64, 4, 12, 4>], precision = "f32", role = "output", shape = array<i64: 4, 3>} : () -> ()
    "ipu_tile.stream"() {name = "result2", pieces = array<i64: 0, 1, 0, 0, 16>, precision = "f32", role = "output", shape = array<i64: 4>} : () -> ()
    "ipu_tile.host_write"() {program = "run", stream = "arg1"} : () -> ()
    "ipu_tile.host_write"() {program = "run", stream = "arg0"} : () -> ()
    "ipu_tile.host_write"() {program = "run", stream = "arg2"} : () -> ()
    "ipu_tile.host_read"() {program = "run", stream = "result0"} : () -> ()
    "ipu_tile.host_read"() {program = "run", stream = "result1"} : () -> ()
    "ipu_tile.host_read"() {program = "run", stream = "result2"} : () -> ()
  }
}
