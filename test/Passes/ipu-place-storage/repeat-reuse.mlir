// Buffers of a repeat body share memory like any others when no iteration reads what the
// previous one left: four softmaxes of a 128 x 512 F16 value on one tile, each result read
// only by the next op, so the third result takes the first one's address and the fourth the
// second's (each lives from its write to its read). The value carried into the next
// iteration lives in the argument's home over the whole run. The repeat still runs three
// iterations on the simulator and matches the reference.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=1}, ipu-place-storage)' | FileCheck %s
// RUN: ipu run %s --tiles 1 --artifacts %t | FileCheck %s --check-prefix=SIM
// REQUIRES: tool-ipu

// CHECK: "ipu_tile.buffer"() {address = {{[0-9]+}} : i64, bytes = 131072 : i64, {{.*}}live = array<i64: 0, 7>, name = "arg0.home"
// CHECK: "ipu_tile.buffer"() {address = [[FIRST:[0-9]+]] : i64, bytes = 131072 : i64, {{.*}}live = array<i64: 2, 3>, name = "op0.step.op0.out"
// CHECK: "ipu_tile.buffer"() {address = [[SECOND:[0-9]+]] : i64, bytes = 131072 : i64, {{.*}}live = array<i64: 3, 4>, name = "op0.step.op1.out"
// CHECK: "ipu_tile.buffer"() {address = [[FIRST]] : i64, bytes = 131072 : i64, {{.*}}live = array<i64: 4, 5>, name = "op0.step.op2.out"
// CHECK: "ipu_tile.buffer"() {address = [[SECOND]] : i64, bytes = 131072 : i64, {{.*}}live = array<i64: 5, 6>, name = "op0.step.op3.out"
// SIM-NOT: error
// SIM: referenceMaximumAbsoluteError={{.*}} numericalTest=PASS

func.func private @step(%x: tensor<128x512xf16>) -> tensor<128x512xf16> {
  %s = "ipu.softmax"(%x) : (tensor<128x512xf16>) -> tensor<128x512xf16>
  %t = "ipu.softmax"(%s) : (tensor<128x512xf16>) -> tensor<128x512xf16>
  %u = "ipu.softmax"(%t) : (tensor<128x512xf16>) -> tensor<128x512xf16>
  %v = "ipu.softmax"(%u) : (tensor<128x512xf16>) -> tensor<128x512xf16>
  return %v : tensor<128x512xf16>
}
func.func @reuse(%x: tensor<128x512xf16>) -> tensor<128x512xf16> {
  %0 = "ipu.repeat"(%x) {body = @step, count = 3 : i64} : (tensor<128x512xf16>) -> tensor<128x512xf16>
  return %0 : tensor<128x512xf16>
}
