// RUN: ipu-opt %s --pass-pipeline='builtin.module(func.func(convert-tosa-to-ipu))' | FileCheck %s

// GeLU decompositions become ipu.gelu: the exact erf form, the tanh approximation, and the
// sigmoid form of the tanh approximation ((1 + tanh z) / 2 = sigmoid(2z), so it is the same
// function). Products are matched in any association and operand order.

// 0.5 * x * (1 + erf(x * (1/sqrt 2)))
// CHECK-LABEL: func.func @gelu_erf
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x16xf32>)
// CHECK-NEXT: %[[R:.*]] = "ipu.gelu"(%[[X]]) : (tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
// CHECK-NEXT: return %[[R]]
func.func @gelu_erf(%x: tensor<1x4x16xf32>) -> tensor<1x4x16xf32> {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %half = "tosa.const"() <{values = dense<0.5> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %one = "tosa.const"() <{values = dense<1.0> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %rsqrt2 = "tosa.const"() <{values = dense<0.707106769> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %scaled = tosa.mul %x, %rsqrt2, %shift : (tensor<1x4x16xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<1x4x16xf32>
  %erf = tosa.erf %scaled : (tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  %term = tosa.add %one, %erf : (tensor<1x1x1xf32>, tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  %halfx = tosa.mul %x, %half, %shift : (tensor<1x4x16xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<1x4x16xf32>
  %0 = tosa.mul %halfx, %term, %shift : (tensor<1x4x16xf32>, tensor<1x4x16xf32>, tensor<1xi8>) -> tensor<1x4x16xf32>
  return %0 : tensor<1x4x16xf32>
}

// 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x * x * x)))
// CHECK-LABEL: func.func @gelu_tanh
// CHECK-SAME: (%[[X:.*]]: tensor<4x16xf16>)
// CHECK-NEXT: %[[R:.*]] = "ipu.gelu"(%[[X]]) {approximate = "tanh"} : (tensor<4x16xf16>) -> tensor<4x16xf16>
// CHECK-NEXT: return %[[R]]
func.func @gelu_tanh(%x: tensor<4x16xf16>) -> tensor<4x16xf16> {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %half = "tosa.const"() <{values = dense<0.5> : tensor<1x1xf16>}> : () -> tensor<1x1xf16>
  %one = "tosa.const"() <{values = dense<1.0> : tensor<1x1xf16>}> : () -> tensor<1x1xf16>
  %c = "tosa.const"() <{values = dense<0.044715> : tensor<1x1xf16>}> : () -> tensor<1x1xf16>
  %k = "tosa.const"() <{values = dense<0.797884583> : tensor<1x1xf16>}> : () -> tensor<1x1xf16>
  %x2 = tosa.mul %x, %x, %shift : (tensor<4x16xf16>, tensor<4x16xf16>, tensor<1xi8>) -> tensor<4x16xf16>
  %x3 = tosa.mul %x2, %x, %shift : (tensor<4x16xf16>, tensor<4x16xf16>, tensor<1xi8>) -> tensor<4x16xf16>
  %cx3 = tosa.mul %c, %x3, %shift : (tensor<1x1xf16>, tensor<4x16xf16>, tensor<1xi8>) -> tensor<4x16xf16>
  %inner = tosa.add %x, %cx3 : (tensor<4x16xf16>, tensor<4x16xf16>) -> tensor<4x16xf16>
  %arg = tosa.mul %inner, %k, %shift : (tensor<4x16xf16>, tensor<1x1xf16>, tensor<1xi8>) -> tensor<4x16xf16>
  %t = tosa.tanh %arg : (tensor<4x16xf16>) -> tensor<4x16xf16>
  %term = tosa.add %t, %one : (tensor<4x16xf16>, tensor<1x1xf16>) -> tensor<4x16xf16>
  %prod = tosa.mul %x, %term, %shift : (tensor<4x16xf16>, tensor<4x16xf16>, tensor<1xi8>) -> tensor<4x16xf16>
  %0 = tosa.mul %half, %prod, %shift : (tensor<1x1xf16>, tensor<4x16xf16>, tensor<1xi8>) -> tensor<4x16xf16>
  return %0 : tensor<4x16xf16>
}

// x * sigmoid(2 sqrt(2/pi) * (x + 0.044715 * pow(x, 3)))
// CHECK-LABEL: func.func @gelu_sigmoid_pow
// CHECK-SAME: (%[[X:.*]]: tensor<4x16xf32>)
// CHECK-NEXT: %[[R:.*]] = "ipu.gelu"(%[[X]]) {approximate = "tanh"}
// CHECK-NEXT: return %[[R]]
func.func @gelu_sigmoid_pow(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %three = "tosa.const"() <{values = dense<3.0> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %c = "tosa.const"() <{values = dense<0.044715> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %k = "tosa.const"() <{values = dense<1.59576917> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %x3 = tosa.pow %x, %three : (tensor<4x16xf32>, tensor<1x1xf32>) -> tensor<4x16xf32>
  %cx3 = tosa.mul %x3, %c, %shift : (tensor<4x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<4x16xf32>
  %inner = tosa.add %cx3, %x : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %arg = tosa.mul %k, %inner, %shift : (tensor<1x1xf32>, tensor<4x16xf32>, tensor<1xi8>) -> tensor<4x16xf32>
  %s = tosa.sigmoid %arg : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %0 = tosa.mul %x, %s, %shift : (tensor<4x16xf32>, tensor<4x16xf32>, tensor<1xi8>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}
