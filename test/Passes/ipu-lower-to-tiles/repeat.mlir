// ipu.repeat lowers to one structured ipu_tile.repeat whose body is the body function lowered
// once (not unrolled): its ops, provenance-prefixed with the repeat (op0.layer.opN), read the
// carried buffer, and the repeat's own step (provenance op0) copies the body's result back
// into it for the next iteration.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=16})' | FileCheck %s

// CHECK: "ipu_tile.op"() {estimate = 0 : i64, op = "ipu.gelu", provenance = "op0.layer.op0"}
// CHECK: "ipu_tile.op"() {estimate = 0 : i64, op = "ipu.repeat", provenance = "op0"}
// CHECK: "ipu_tile.host_write"() {program = "run", stream = "arg0"}
// CHECK-NEXT: "ipu_tile.repeat"() {count = 10 : i64, program = "run", steps = 2 : i64}
// CHECK-NEXT: "ipu_tile.compute"() {program = "run", provenance = "op0.layer.op0", runs = array<i64: 0, [[GELU:[0-9]+]], 2, [[X:[0-9]+]], 0, [[Y:[0-9]+]], 0,
// CHECK-NEXT: "ipu_tile.compute"() {program = "run", provenance = "op0", runs = array<i64: 0, {{[0-9]+}}, 2, [[Y]], 0, [[X]], 0,
// CHECK-NEXT: "ipu_tile.host_read"() {program = "run", stream = "result0"}
// CHECK-NOT: "ipu_tile.compute"

func.func private @layer(%x: tensor<64x64xf16>) -> tensor<64x64xf16> {
  %0 = "ipu.gelu"(%x) {approximate = "tanh"} : (tensor<64x64xf16>) -> tensor<64x64xf16>
  return %0 : tensor<64x64xf16>
}
func.func @repeated(%x: tensor<64x64xf16>) -> tensor<64x64xf16> {
  %0 = "ipu.repeat"(%x) {body = @layer, count = 10 : i64} : (tensor<64x64xf16>) -> tensor<64x64xf16>
  return %0 : tensor<64x64xf16>
}
