// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-demote-f32)' | FileCheck %s
// RUN: not ipu-opt %s --split-input-file -p 'builtin.module(ipu-demote-f32{to=bf16})' 2>&1 | FileCheck %s --check-prefix=TO

// Every f32 tensor becomes f16: the signature, op results, constants (rounded once: 0.1 is
// 0.099975586 in f16), a repeat body; scalar map bodies keep computing in f32.
// CHECK-LABEL: func.func private @body
// CHECK-SAME: (%{{.*}}: f32) -> f32
// CHECK-LABEL: func.func private @layer
// CHECK-SAME: (%{{.*}}: tensor<4x8xf16>) -> tensor<4x8xf16>
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf16>) -> (tensor<4x8xf16>, tensor<4x8xf16>)
// CHECK: %[[W:.*]] = arith.constant dense<{{\[\[}}9.997550e-02, {{.*}}, 1.999510e-01]]> : tensor<8x8xf16>
// CHECK: "ipu.matmul"(%[[X]], %[[W]]) : (tensor<4x8xf16>, tensor<8x8xf16>) -> tensor<4x8xf16>
// CHECK: "ipu.map"(%{{.*}}) {body = @body} : (tensor<4x8xf16>) -> tensor<4x8xf16>
// CHECK: "ipu.repeat"(%{{.*}}) {body = @layer, count = 2 : i64} : (tensor<4x8xf16>) -> tensor<4x8xf16>
func.func private @body(%x: f32) -> f32 {
  %0 = math.exp %x : f32
  return %0 : f32
}
func.func private @layer(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "ipu.gelu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
func.func @main(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %w = arith.constant dense<[[0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1], [0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1], [0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1], [0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1], [0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1], [0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1], [0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1], [0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.2]]> : tensor<8x8xf32>
  %0 = "ipu.matmul"(%x, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = "ipu.map"(%0) {body = @body} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "ipu.repeat"(%1) {body = @layer, count = 2 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %1, %2 : tensor<4x8xf32>, tensor<4x8xf32>
}

// TO: error: 'builtin.module' op ipu-demote-f32: to=bf16 is not supported (f32 tensors become f16)
