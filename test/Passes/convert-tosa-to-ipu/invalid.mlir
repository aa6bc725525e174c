// RUN: ipu-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(convert-tosa-to-ipu))'

func.func @quantized_matmul(%a: tensor<1x4x8xi8>, %b: tensor<1x8x16xi8>) -> tensor<1x4x16xi32> {
  %zp = "tosa.const"() <{values = dense<3> : tensor<1xi8>}> : () -> tensor<1xi8>
  // expected-error@+1 {{'tosa.matmul' op cannot be converted to ipu: operand A element type i8 is not one of ipu's (f32, f16, f8E4M3FNUZ, f8E5M2FNUZ)}}
  %0 = tosa.matmul %a, %b, %zp, %zp : (tensor<1x4x8xi8>, tensor<1x8x16xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x16xi32>
  return %0 : tensor<1x4x16xi32>
}

// -----

func.func @unsupported_op(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  // expected-error@+1 {{'tosa.sin' op cannot be converted to ipu: it has no ipu equivalent}}
  %0 = tosa.sin %x : (tensor<4x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// A convolution that is not 1x1 (a 3x3 kernel) is not a matmul.
func.func @conv_3x3(%x: tensor<1x8x8x4xf32>) -> tensor<1x6x6x2xf32> {
  %w = "tosa.const"() <{values = dense<1.0> : tensor<2x3x3x4xf32>}> : () -> tensor<2x3x3x4xf32>
  %b = "tosa.const"() <{values = dense<0.0> : tensor<2xf32>}> : () -> tensor<2xf32>
  %z = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  // expected-error@+1 {{'tosa.conv2d' op cannot be converted to ipu: a convolution with kernel [2, 3, 3, 4] (only 1x1 kernels with stride 1, dilation 1 and no padding are converted, as matmuls)}}
  %c = tosa.conv2d %x, %w, %b, %z, %z {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x8x8x4xf32>, tensor<2x3x3x4xf32>, tensor<2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x6x6x2xf32>
  return %c : tensor<1x6x6x2xf32>
}
