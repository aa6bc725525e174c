// ipu.scan over stacks that are parameters: each stack is resident. The host writes it whole
// once, in `initialize` (its binding has the stacked shape, role parameter, `iterations = 3`),
// into stores on the tiles that read it; the repeat's iteration counter is zeroed before the
// loop, and in iteration i the holders copy slice i of their stores where the body's ops read
// it (`copy_slice`, indexed by the counter) and multicast it to the other readers; the
// repeat's own last step advances the counter. Nothing is streamed inside the loop.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=16})' | FileCheck %s
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=16}, ipu-place-storage)' | FileCheck %s --check-prefix=PLACED

// CHECK-DAG: "ipu_tile.kernel"() {index = [[SLICE:[0-9]+]] : i64, name = "copy_slice_b{{[0-9]+}}_s{{[0-9]+}}_n3"
// CHECK-DAG: "ipu_tile.kernel"() {index = [[COUNT:[0-9]+]] : i64, name = "count", spec = "\22Count\22"}
// CHECK-DAG: "ipu_tile.buffer"() {{{.*}}name = "arg1.store"
// CHECK-DAG: "ipu_tile.buffer"() {{{.*}}name = "op0.layer.counter"
// CHECK: "ipu_tile.stream"() {name = "arg0", {{.*}}shape = array<i64: 32, 64>}
// CHECK-NEXT: "ipu_tile.stream"() {iterations = 3 : i64, name = "arg1", {{.*}}role = "parameter", shape = array<i64: 3, 64, 64>}
// CHECK-NEXT: "ipu_tile.stream"() {iterations = 3 : i64, name = "arg2", {{.*}}role = "parameter", shape = array<i64: 3, 64>}
// CHECK: "ipu_tile.host_write"() {program = "initialize", stream = "arg1"}
// CHECK-NEXT: "ipu_tile.host_write"() {program = "initialize", stream = "arg2"}
// CHECK-NEXT: "ipu_tile.host_write"() {program = "run", stream = "arg0"}
// CHECK-NEXT: "ipu_tile.compute"() {program = "run", provenance = "op0.counter"
// CHECK-NEXT: "ipu_tile.repeat"() {count = 3 : i64, program = "run", steps = [[STEPS:[0-9]+]] : i64}
// CHECK-NEXT: "ipu_tile.compute"() {program = "run", provenance = "op0.layer.arg1.slice", runs = array<i64: 0, [[SLICE]], 3,
// CHECK-NOT: host_write
// CHECK: "ipu_tile.compute"() {program = "run", provenance = "op0.layer.op0"
// CHECK-NOT: host_write
// CHECK: "ipu_tile.compute"() {program = "run", provenance = "op0.layer.arg2.slice"
// CHECK-NEXT: "ipu_tile.exchange"
// CHECK-NEXT: "ipu_tile.compute"() {program = "run", provenance = "op0.layer.op1"
// CHECK-NEXT: "ipu_tile.compute"() {program = "run", provenance = "op0.layer.op2"
// CHECK-NEXT: "ipu_tile.compute"() {program = "run", provenance = "op0", runs = array<i64: {{.*}}, [[COUNT]], 1,
// CHECK-NEXT: "ipu_tile.host_read"() {program = "run", stream = "result0"}

// The stores hold three slices and live for the whole program (a parameter survives every run):
// each tile's 512-byte piece of each weight slice, and a bias slice (64 values, 128 bytes:
// under 1 KiB) held whole by its first reader, tile 0, which multicasts it to the others.
// PLACED: "ipu_tile.buffer"() {address = {{[0-9]+}} : i64, bytes = 1536 : i64, class = "standard", id = {{[0-9]+}} : i64, live = array<i64: 0, [[END:[0-9]+]]>, name = "arg1.store"
// PLACED: "ipu_tile.buffer"() {address = {{[0-9]+}} : i64, bytes = 384 : i64, class = "standard", id = {{[0-9]+}} : i64, live = array<i64: 0, [[END]]>, name = "arg2.store", tiles = array<i32: 0>

func.func private @layer(%x: tensor<32x64xf16>, %w: tensor<64x64xf16>, %b: tensor<64xf16>) -> tensor<32x64xf16> {
  %h = "ipu.matmul"(%x, %w) : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
  %hb = "ipu.add"(%h, %b) : (tensor<32x64xf16>, tensor<64xf16>) -> tensor<32x64xf16>
  %g = "ipu.gelu"(%hb) {approximate = "tanh"} : (tensor<32x64xf16>) -> tensor<32x64xf16>
  return %g : tensor<32x64xf16>
}
func.func @mlp(%x: tensor<32x64xf16>, %ws: tensor<3x64x64xf16> {ipu.parameter}, %bs: tensor<3x64xf16> {ipu.parameter}) -> tensor<32x64xf16> {
  %sw = "ipu.stack"(%ws) : (tensor<3x64x64xf16>) -> !ipu.stacked
  %sb = "ipu.stack"(%bs) : (tensor<3x64xf16>) -> !ipu.stacked
  %y = "ipu.scan"(%x, %sw, %sb) {body = @layer, count = 3 : i64} : (tensor<32x64xf16>, !ipu.stacked, !ipu.stacked) -> tensor<32x64xf16>
  return %y : tensor<32x64xf16>
}
