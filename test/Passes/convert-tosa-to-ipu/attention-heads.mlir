// RUN: ipu-opt %s --pass-pipeline='builtin.module(func.func(convert-tosa-to-ipu))' | FileCheck %s
// RUN: ipu-opt %s --pass-pipeline='builtin.module(func.func(convert-tosa-to-ipu))' | %mlir_opt --irdl-file=%irdl_ipu --verify-diagnostics > /dev/null
// RUN: ipu-oracle %s --check-reference | FileCheck %s --check-prefix=ORACLE

// Multi-head attention as TOSA frontends write it (2 heads of 2 over hidden 4):
// - head split: reshape(transpose(reshape(x @ W, [1, S, H, Dh]), [0, 2, 1, 3]), [H, S, Dh])
//   becomes x @ W' with W'[h, d, j] = W[0, d, h * Dh + j] (the batch axis broadcasts);
// - softmax(q @ transpose(k) * scale) @ v becomes ipu.attention with the scale;
// - the head merge reshape(transpose(reshape(a, [1, H, S, Dh]), [0, 2, 1, 3]), [1, S, D]) @ Wo
//   becomes the per-head products a @ Wo' (Wo' = Wo as [H, Dh, E]) summed over the heads by a
//   ones-matmul between two rearranges (ipu has no reshape or reduction).
// The imported function evaluated by our reference matches MLIR's own execution (ipu-oracle).
// ORACLE: numericalTest=PASS

// CHECK-LABEL: func.func @attention_heads
// CHECK-SAME: (%[[X:.*]]: tensor<1x3x4xf32>)
// CHECK-NOT: tosa.
// CHECK-DAG: %[[WQ:.*]] = arith.constant dense<{{\[\[\[}}0.000000e+00, 1.000000e+00], [4.000000e+00, 5.000000e+00], [8.000000e+00, 9.000000e+00], [1.200000e+01, 1.300000e+01]], {{\[\[}}2.000000e+00, 3.000000e+00], [6.000000e+00, 7.000000e+00], [1.000000e+01, 1.100000e+01], [1.400000e+01, 1.500000e+01]]]> : tensor<2x4x2xf32>
// CHECK: %[[Q:.*]] = "ipu.matmul"(%[[X]], %[[WQ]]) : (tensor<1x3x4xf32>, tensor<2x4x2xf32>) -> tensor<2x3x2xf32>
// CHECK: %[[K:.*]] = "ipu.matmul"(%[[X]], %{{.*}}) : (tensor<1x3x4xf32>, tensor<2x4x2xf32>) -> tensor<2x3x2xf32>
// CHECK: %[[V:.*]] = "ipu.matmul"(%[[X]], %{{.*}}) : (tensor<1x3x4xf32>, tensor<2x4x2xf32>) -> tensor<2x3x2xf32>
// CHECK: %[[A:.*]] = "ipu.attention"(%[[Q]], %[[K]], %[[V]]) {scale = 0.707106769 : f32} : (tensor<2x3x2xf32>, tensor<2x3x2xf32>, tensor<2x3x2xf32>) -> tensor<2x3x2xf32>
// CHECK: %[[WO:.*]] = arith.constant dense<{{.*}}> : tensor<2x2x4xf32>
// CHECK: %[[P:.*]] = "ipu.matmul"(%[[A]], %[[WO]]) : (tensor<2x3x2xf32>, tensor<2x2x4xf32>) -> tensor<2x3x4xf32>
// CHECK: %[[R:.*]] = "ipu.rearrange"(%[[P]]) {permutation = array<i64: 1, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
// CHECK: %[[ONES:.*]] = arith.constant dense<1.000000e+00> : tensor<1x2xf32>
// CHECK: %[[S:.*]] = "ipu.matmul"(%[[ONES]], %[[R]]) : (tensor<1x2xf32>, tensor<3x2x4xf32>) -> tensor<3x1x4xf32>
// CHECK: %[[O:.*]] = "ipu.rearrange"(%[[S]]) {permutation = array<i64: 1, 0, 2>} : (tensor<3x1x4xf32>) -> tensor<1x3x4xf32>
// CHECK: return %[[O]]
func.func @attention_heads(%x: tensor<1x3x4xf32>) -> tensor<1x3x4xf32> {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %scale = "tosa.const"() <{values = dense<0.707106769> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %wq = "tosa.const"() <{values = dense<[[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0], [12.0, 13.0, 14.0, 15.0]]]> : tensor<1x4x4xf32>}> : () -> tensor<1x4x4xf32>
  %wk = "tosa.const"() <{values = dense<[[[0.5, -1.0, 0.25, 2.0], [1.0, 0.0, -0.5, 1.5], [0.0, 0.75, 1.0, -1.0], [2.0, 1.0, 0.0, 0.5]]]> : tensor<1x4x4xf32>}> : () -> tensor<1x4x4xf32>
  %wv = "tosa.const"() <{values = dense<[[[1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 1.0, 0.0], [1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 1.0]]]> : tensor<1x4x4xf32>}> : () -> tensor<1x4x4xf32>
  %wo = "tosa.const"() <{values = dense<[[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [-1.0, -2.0, -3.0, -4.0], [0.5, 0.5, 0.5, 0.5]]]> : tensor<1x4x4xf32>}> : () -> tensor<1x4x4xf32>
  %split4 = tosa.const_shape {values = dense<[1, 3, 2, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %heads3 = tosa.const_shape {values = dense<[2, 3, 2]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %merge4 = tosa.const_shape {values = dense<[1, 2, 3, 2]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %merged3 = tosa.const_shape {values = dense<[1, 3, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %q = tosa.matmul %x, %wq, %zp, %zp : (tensor<1x3x4xf32>, tensor<1x4x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x3x4xf32>
  %q4 = tosa.reshape %q, %split4 : (tensor<1x3x4xf32>, !tosa.shape<4>) -> tensor<1x3x2x2xf32>
  %qt = tosa.transpose %q4 {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x3x2x2xf32>) -> tensor<1x2x3x2xf32>
  %qh = tosa.reshape %qt, %heads3 : (tensor<1x2x3x2xf32>, !tosa.shape<3>) -> tensor<2x3x2xf32>
  %k = tosa.matmul %x, %wk, %zp, %zp : (tensor<1x3x4xf32>, tensor<1x4x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x3x4xf32>
  %k4 = tosa.reshape %k, %split4 : (tensor<1x3x4xf32>, !tosa.shape<4>) -> tensor<1x3x2x2xf32>
  %kt = tosa.transpose %k4 {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x3x2x2xf32>) -> tensor<1x2x3x2xf32>
  %kh = tosa.reshape %kt, %heads3 : (tensor<1x2x3x2xf32>, !tosa.shape<3>) -> tensor<2x3x2xf32>
  %v = tosa.matmul %x, %wv, %zp, %zp : (tensor<1x3x4xf32>, tensor<1x4x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x3x4xf32>
  %v4 = tosa.reshape %v, %split4 : (tensor<1x3x4xf32>, !tosa.shape<4>) -> tensor<1x3x2x2xf32>
  %vt = tosa.transpose %v4 {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x3x2x2xf32>) -> tensor<1x2x3x2xf32>
  %vh = tosa.reshape %vt, %heads3 : (tensor<1x2x3x2xf32>, !tosa.shape<3>) -> tensor<2x3x2xf32>
  %khT = tosa.transpose %kh {perms = array<i32: 0, 2, 1>} : (tensor<2x3x2xf32>) -> tensor<2x2x3xf32>
  %scores = tosa.matmul %qh, %khT, %zp, %zp : (tensor<2x3x2xf32>, tensor<2x2x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x3x3xf32>
  %scaled = tosa.mul %scores, %scale, %shift : (tensor<2x3x3xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<2x3x3xf32>
  %max = tosa.reduce_max %scaled {axis = 2 : i32} : (tensor<2x3x3xf32>) -> tensor<2x3x1xf32>
  %centered = tosa.sub %scaled, %max : (tensor<2x3x3xf32>, tensor<2x3x1xf32>) -> tensor<2x3x3xf32>
  %e = tosa.exp %centered : (tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
  %sum = tosa.reduce_sum %e {axis = 2 : i32} : (tensor<2x3x3xf32>) -> tensor<2x3x1xf32>
  %inv = tosa.reciprocal %sum : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32>
  %probs = tosa.mul %e, %inv, %shift : (tensor<2x3x3xf32>, tensor<2x3x1xf32>, tensor<1xi8>) -> tensor<2x3x3xf32>
  %attn = tosa.matmul %probs, %vh, %zp, %zp : (tensor<2x3x3xf32>, tensor<2x3x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x3x2xf32>
  %a4 = tosa.reshape %attn, %merge4 : (tensor<2x3x2xf32>, !tosa.shape<4>) -> tensor<1x2x3x2xf32>
  %at = tosa.transpose %a4 {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x2x3x2xf32>) -> tensor<1x3x2x2xf32>
  %merged = tosa.reshape %at, %merged3 : (tensor<1x3x2x2xf32>, !tosa.shape<3>) -> tensor<1x3x4xf32>
  %o = tosa.matmul %merged, %wo, %zp, %zp : (tensor<1x3x4xf32>, tensor<1x4x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x3x4xf32>
  return %o : tensor<1x3x4xf32>
}
