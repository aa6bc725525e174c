// RUN: ipu-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(convert-tosa-to-ipu))'

// Ops without an ipu equivalent outside a recognized decomposition are reported, each naming
// the op and why, and the pass fails without rewriting anything.

func.func @exp_alone(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  // expected-error@+1 {{'tosa.exp' op cannot be converted to ipu: only exp inside a softmax decomposition is supported}}
  %0 = tosa.exp %x : (tensor<4x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// A softmax whose exp is also used elsewhere is not a softmax: every op of it is reported
// (and the convertible matmul is not rewritten, since the pass fails as a whole).
func.func @softmax_exp_escapes(%x: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  // expected-error@+1 {{'tosa.exp' op cannot be converted to ipu: only exp inside a softmax decomposition is supported}}
  %e = tosa.exp %x : (tensor<4x16xf32>) -> tensor<4x16xf32>
  // expected-error@+1 {{'tosa.reduce_sum' op cannot be converted to ipu: only reduce_sum over the last axis inside a softmax or layer-norm decomposition is supported}}
  %sum = tosa.reduce_sum %e {axis = 1 : i32} : (tensor<4x16xf32>) -> tensor<4x1xf32>
  // expected-error@+1 {{'tosa.reciprocal' op cannot be converted to ipu: only reciprocal inside a softmax decomposition is supported}}
  %inv = tosa.reciprocal %sum : (tensor<4x1xf32>) -> tensor<4x1xf32>
  // expected-error@+1 {{'tosa.mul' op cannot be converted to ipu: ipu has no elementwise multiply; only mul inside a softmax, GeLU or layer-norm decomposition is supported}}
  %0 = tosa.mul %e, %inv, %shift : (tensor<4x16xf32>, tensor<4x1xf32>, tensor<1xi8>) -> tensor<4x16xf32>
  return %0, %e : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// Softmax over a leading axis is not ipu.softmax (which normalizes the last axis).
func.func @softmax_wrong_axis(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  // expected-error@+1 {{'tosa.exp' op cannot be converted}}
  %e = tosa.exp %x : (tensor<4x16xf32>) -> tensor<4x16xf32>
  // expected-error@+1 {{'tosa.reduce_sum' op cannot be converted}}
  %sum = tosa.reduce_sum %e {axis = 0 : i32} : (tensor<4x16xf32>) -> tensor<1x16xf32>
  // expected-error@+1 {{'tosa.reciprocal' op cannot be converted}}
  %inv = tosa.reciprocal %sum : (tensor<1x16xf32>) -> tensor<1x16xf32>
  // expected-error@+1 {{'tosa.mul' op cannot be converted}}
  %0 = tosa.mul %e, %inv, %shift : (tensor<4x16xf32>, tensor<1x16xf32>, tensor<1xi8>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// A GeLU with a wrong constant (0.6 instead of 0.5) is a different function.
func.func @gelu_wrong_constant(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %c = "tosa.const"() <{values = dense<0.6> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %one = "tosa.const"() <{values = dense<1.0> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %k = "tosa.const"() <{values = dense<0.707106769> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  // expected-error@+1 {{'tosa.mul' op cannot be converted}}
  %s = tosa.mul %x, %k, %shift : (tensor<4x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<4x16xf32>
  // expected-error@+1 {{'tosa.erf' op cannot be converted to ipu: only erf inside a GeLU decomposition 0.5*x*(1+erf(x/sqrt(2))) is supported}}
  %e = tosa.erf %s : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %t = tosa.add %e, %one : (tensor<4x16xf32>, tensor<1x1xf32>) -> tensor<4x16xf32>
  // expected-error@+1 {{'tosa.mul' op cannot be converted}}
  %h = tosa.mul %x, %c, %shift : (tensor<4x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<4x16xf32>
  // expected-error@+1 {{'tosa.mul' op cannot be converted}}
  %0 = tosa.mul %h, %t, %shift : (tensor<4x16xf32>, tensor<4x16xf32>, tensor<1xi8>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @quantized_matmul(%a: tensor<1x4x8xi8>, %b: tensor<1x8x16xi8>) -> tensor<1x4x16xi32> {
  %zp = "tosa.const"() <{values = dense<3> : tensor<1xi8>}> : () -> tensor<1xi8>
  // expected-error@+1 {{'tosa.matmul' op cannot be converted to ipu: operand A element type i8 is not one of ipu's (f32, f16, f8E4M3FNUZ, f8E5M2FNUZ)}}
  %0 = tosa.matmul %a, %b, %zp, %zp : (tensor<1x4x8xi8>, tensor<1x8x16xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x16xi32>
  return %0 : tensor<1x4x16xi32>
}

// -----

func.func @unsupported_op(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  // expected-error@+1 {{'tosa.abs' op cannot be converted to ipu: it has no ipu equivalent}}
  %0 = tosa.abs %x : (tensor<4x16xf32>) -> tensor<4x16xf32>
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
