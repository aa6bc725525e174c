// RUN: ipu-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(convert-tosa-to-ipu))' | FileCheck %s
// RUN: ipu-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(convert-tosa-to-ipu))' | %mlir_opt --split-input-file --irdl-file=%irdl_ipu > /dev/null

// A dense layer as TFLite writes it: reshape to [M, 1, 1, K], a 1x1 conv2d with an OHWI weight
// and a bias, reshape back. It is a matmul with the weight transposed once at import, plus the
// bias; the reshapes around it are ipu.reshape (the ones only the conversion read are gone).
// CHECK-LABEL: func.func @dense_as_conv
// CHECK: %[[X:.*]] = "ipu.reshape"(%arg0) : (tensor<1x4x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: %[[W:.*]] = arith.constant dense<{{\[}}[1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
// CHECK-NEXT: %[[P:.*]] = "ipu.matmul"(%[[X]], %[[W]]) : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
// CHECK-NEXT: %[[S:.*]] = "ipu.add"(%[[P]], %{{.*}}) : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
// CHECK-NEXT: %[[R:.*]] = "ipu.reshape"(%[[S]]) : (tensor<4x2xf32>) -> tensor<1x4x2xf32>
// CHECK-NEXT: return %[[R]]
func.func @dense_as_conv(%x: tensor<1x4x3xf32>) -> tensor<1x4x2xf32> {
  %s4 = tosa.const_shape {values = dense<[4, 1, 1, 3]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %s3 = tosa.const_shape {values = dense<[1, 4, 2]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %w = "tosa.const"() <{values = dense<[[[[1.0, 2.0, 3.0]]], [[[4.0, 5.0, 6.0]]]]> : tensor<2x1x1x3xf32>}> : () -> tensor<2x1x1x3xf32>
  %b = "tosa.const"() <{values = dense<[0.5, -0.5]> : tensor<2xf32>}> : () -> tensor<2xf32>
  %z = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %r = tosa.reshape %x, %s4 : (tensor<1x4x3xf32>, !tosa.shape<4>) -> tensor<4x1x1x3xf32>
  %c = tosa.conv2d %r, %w, %b, %z, %z {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<4x1x1x3xf32>, tensor<2x1x1x3xf32>, tensor<2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x1x1x2xf32>
  %y = tosa.reshape %c, %s3 : (tensor<4x1x1x2xf32>, !tosa.shape<3>) -> tensor<1x4x2xf32>
  return %y : tensor<1x4x2xf32>
}
