// RUN: ipu-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(convert-linalg-to-ipu))' | FileCheck %s
// RUN: ipu-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(convert-linalg-to-ipu))' | %mlir_opt --split-input-file --irdl-file=%irdl_ipu > /dev/null

// 2-D convolutions become a matmul over the input's windows. A patch embedding (stride =
// kernel, the image tiled exactly) takes its windows by a reshape and a permutation of leading
// axes; a constant filter is permuted at import (a splat here: any f32 constant is); an NCHW
// input and result are permuted on the device.

// ViT's patch embedding in PyTorch's layout: 16x16 image, 4x4 patches, 32 channels out.
// CHECK-LABEL: func.func @patches_nchw
// CHECK: "ipu.rearrange"(%arg0) {permutation = array<i64: 0, 2, 1, 3>} : (tensor<1x3x16x16xf32>) -> tensor<1x16x3x16xf32>
// CHECK: "ipu.rearrange"({{.*}}) {permutation = array<i64: 0, 1, 3, 2>} : (tensor<1x16x3x16xf32>) -> tensor<1x16x16x3xf32>
// CHECK: %[[W:.*]] = arith.constant dense<5.000000e-01> : tensor<4x4x3x32xf32>
// CHECK: "ipu.reshape"({{.*}}) : (tensor<1x16x16x3xf32>) -> tensor<1x4x4x4x4x3xf32>
// CHECK: "ipu.rearrange"({{.*}}) {permutation = array<i64: 0, 1, 3, 2, 4, 5>} : (tensor<1x4x4x4x4x3xf32>) -> tensor<1x4x4x4x4x3xf32>
// CHECK: %[[P:.*]] = "ipu.reshape"({{.*}}) : (tensor<1x4x4x4x4x3xf32>) -> tensor<16x48xf32>
// CHECK: %[[W2:.*]] = "ipu.reshape"(%[[W]]) : (tensor<4x4x3x32xf32>) -> tensor<48x32xf32>
// CHECK: %[[Y:.*]] = "ipu.matmul"(%[[P]], %[[W2]]) : (tensor<16x48xf32>, tensor<48x32xf32>) -> tensor<16x32xf32>
// CHECK: "ipu.reshape"(%[[Y]]) : (tensor<16x32xf32>) -> tensor<1x4x4x32xf32>
// CHECK: "ipu.rearrange"
// CHECK-NOT: linalg.
func.func @patches_nchw(%x: tensor<1x3x16x16xf32>) -> tensor<1x32x4x4xf32> {
  %w = arith.constant dense<0.5> : tensor<32x3x4x4xf32>
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<1x32x4x4xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x32x4x4xf32>) -> tensor<1x32x4x4xf32>
  %2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<4> : vector<2xi64>} ins(%x, %w : tensor<1x3x16x16xf32>, tensor<32x3x4x4xf32>) outs(%1 : tensor<1x32x4x4xf32>) -> tensor<1x32x4x4xf32>
  return %2 : tensor<1x32x4x4xf32>
}

// -----

// Overlapping 3x3 windows at stride 1: nine strided windows joined on the channels.
// CHECK-LABEL: func.func @im2col
// CHECK-COUNT-9: "ipu.slice"(%arg0) {offsets = array<i64: 0, {{[0-2]}}, {{[0-2]}}, 0>, strides = array<i64: 1, 1, 1, 1>} : (tensor<1x6x6x2xf32>) -> tensor<1x4x4x2xf32>
// CHECK-COUNT-8: "ipu.concat"({{.*}}) {axis = 3 : i64}
// CHECK: %[[P:.*]] = "ipu.reshape"({{.*}}) : (tensor<1x4x4x18xf32>) -> tensor<16x18xf32>
// CHECK: %[[W:.*]] = "ipu.reshape"(%arg1) : (tensor<3x3x2x8xf32>) -> tensor<18x8xf32>
// CHECK: "ipu.matmul"(%[[P]], %[[W]]) : (tensor<16x18xf32>, tensor<18x8xf32>) -> tensor<16x8xf32>
// CHECK: "ipu.add"
func.func @im2col(%x: tensor<1x6x6x2xf32>, %w: tensor<3x3x2x8xf32>, %init: tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x6x6x2xf32>, tensor<3x3x2x8xf32>) outs(%init : tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  return %0 : tensor<1x4x4x8xf32>
}
