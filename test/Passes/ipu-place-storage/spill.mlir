// Standard buffers that do not fit the standard region of a tile are placed in its
// interleaved region (data needs no instruction fetch): on one tile, an add of two
// 128 x 512 F16 values holds 3 x 128 KiB live at once, more than the standard region
// leaves after the support memory. The first buffer stays standard, the others spill and
// say so in their class; the add still runs on the simulator and matches the reference.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=1}, ipu-place-storage)' | FileCheck %s
// RUN: ipu run %s --tiles 1 --artifacts %t | FileCheck %s --check-prefix=SIM
// REQUIRES: tool-ipu

// CHECK: "ipu_tile.buffer"() {address = {{[0-9]+}} : i64, bytes = 131072 : i64, class = "standard", {{.*}}name = "arg0.home"
// CHECK: "ipu_tile.buffer"() {address = {{[0-9]+}} : i64, bytes = 131072 : i64, class = "interleaved", {{.*}}name = "arg1.home"
// CHECK: "ipu_tile.buffer"() {address = {{[0-9]+}} : i64, bytes = 131072 : i64, class = "interleaved", {{.*}}name = "op0.out"
// SIM-NOT: error
// SIM: referenceMaximumAbsoluteError={{.*}} numericalTest=PASS

func.func @add(%a: tensor<128x512xf16>, %b: tensor<128x512xf16>) -> tensor<128x512xf16> {
  %c = "ipu.add"(%a, %b) : (tensor<128x512xf16>, tensor<128x512xf16>) -> tensor<128x512xf16>
  return %c : tensor<128x512xf16>
}
