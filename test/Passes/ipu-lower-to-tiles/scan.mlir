// ipu.scan lowers like ipu.repeat (one structured ipu_tile.repeat, the body lowered once),
// and each per-iteration stack is a host stream written inside the repeat's body: its
// binding has the stacked shape and `iterations = 3`, its pieces place one slice, and the
// e-th execution of its write streams slice e. The carried value is written once, before
// the loop; the result is read once, after it. Storage placement reads the streams back.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=16})' | FileCheck %s
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=16}, ipu-place-storage)' | FileCheck %s

// CHECK: "ipu_tile.stream"() {name = "arg0", {{.*}}shape = array<i64: 32, 64>}
// CHECK-NEXT: "ipu_tile.stream"() {iterations = 3 : i64, name = "arg1", {{.*}}role = "input", shape = array<i64: 3, 64, 64>}
// CHECK-NEXT: "ipu_tile.stream"() {iterations = 3 : i64, name = "arg2", {{.*}}role = "input", shape = array<i64: 3, 64>}
// CHECK: "ipu_tile.host_write"() {program = "run", stream = "arg0"}
// CHECK-NEXT: "ipu_tile.repeat"() {count = 3 : i64, program = "run", steps = [[STEPS:[0-9]+]] : i64}
// CHECK-NEXT: "ipu_tile.host_write"() {program = "run", stream = "arg1"}
// CHECK: "ipu_tile.compute"() {program = "run", provenance = "op0.layer.op0"
// CHECK: "ipu_tile.host_write"() {program = "run", stream = "arg2"}
// CHECK-NEXT: "ipu_tile.exchange"
// CHECK-NEXT: "ipu_tile.compute"() {program = "run", provenance = "op0.layer.op1"
// CHECK-NEXT: "ipu_tile.compute"() {program = "run", provenance = "op0.layer.op2"
// CHECK-NEXT: "ipu_tile.compute"() {program = "run", provenance = "op0"
// CHECK-NEXT: "ipu_tile.host_read"() {program = "run", stream = "result0"}

func.func private @layer(%x: tensor<32x64xf16>, %w: tensor<64x64xf16>, %b: tensor<64xf16>) -> tensor<32x64xf16> {
  %h = "ipu.matmul"(%x, %w) : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
  %hb = "ipu.add"(%h, %b) : (tensor<32x64xf16>, tensor<64xf16>) -> tensor<32x64xf16>
  %g = "ipu.gelu"(%hb) {approximate = "tanh"} : (tensor<32x64xf16>) -> tensor<32x64xf16>
  return %g : tensor<32x64xf16>
}
func.func @mlp(%x: tensor<32x64xf16>, %ws: tensor<3x64x64xf16>, %bs: tensor<3x64xf16>) -> tensor<32x64xf16> {
  %sw = "ipu.stack"(%ws) : (tensor<3x64x64xf16>) -> !ipu.stacked
  %sb = "ipu.stack"(%bs) : (tensor<3x64xf16>) -> !ipu.stacked
  %y = "ipu.scan"(%x, %sw, %sb) {body = @layer, count = 3 : i64} : (tensor<32x64xf16>, !ipu.stacked, !ipu.stacked) -> tensor<32x64xf16>
  return %y : tensor<32x64xf16>
}
