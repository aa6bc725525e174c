// RUN: ipu-opt %s --pass-pipeline='builtin.module(func.func(convert-tosa-to-ipu))' | FileCheck %s
// RUN: ipu-opt %s --pass-pipeline='builtin.module(func.func(convert-tosa-to-ipu))' | %mlir_opt --irdl-file=%irdl_ipu --verify-diagnostics > /dev/null
// RUN: ipu-oracle %s --check-reference | FileCheck %s --check-prefix=ORACLE

// A pre-norm transformer block (single-head attention with the 1/sqrt(d) scale folded into
// Wq, then a tanh-GeLU MLP) written the way TOSA frontends emit it: func.func with tensor
// arguments, tosa.const weights, layer norm, softmax and GeLU decomposed. It converts to ipu
// ops only (plus arith.constant weights), and the result verifies against the IRDL dialect.
// The attention (no scale multiply: it is folded into Wq) becomes ipu.attention with scale 1.
// The imported block evaluated by our reference matches MLIR's own execution (ipu-oracle).
// ORACLE: numericalTest=PASS

// CHECK-LABEL: func.func @transformer_block
// CHECK-SAME: (%[[X:.*]]: tensor<1x8x16xf32>)
// CHECK-NOT: tosa.
// CHECK: %[[LN1:.*]] = "ipu.layer_norm"(%[[X]], %{{.*}}, %{{.*}}) {epsilon = 9.99999974E-6 : f32}
// CHECK: %[[Q:.*]] = "ipu.matmul"(%[[LN1]], %{{.*}})
// CHECK: %[[K:.*]] = "ipu.matmul"(%[[LN1]], %{{.*}})
// CHECK: %[[V:.*]] = "ipu.matmul"(%[[LN1]], %{{.*}})
// CHECK: %[[A:.*]] = "ipu.attention"(%[[Q]], %[[K]], %[[V]]) {scale = 1.000000e+00 : f32}
// CHECK: %[[O:.*]] = "ipu.matmul"(%[[A]], %{{.*}})
// CHECK: %[[OB:.*]] = "ipu.add"(%[[O]], %{{.*}})
// CHECK: %[[H:.*]] = "ipu.add"(%[[X]], %[[OB]])
// CHECK: %[[LN2:.*]] = "ipu.layer_norm"(%[[H]], %{{.*}}, %{{.*}})
// CHECK: %[[F1:.*]] = "ipu.matmul"(%[[LN2]], %{{.*}})
// CHECK: %[[F1B:.*]] = "ipu.add"(%[[F1]], %{{.*}})
// CHECK: %[[G:.*]] = "ipu.gelu"(%[[F1B]]) {approximate = "tanh"}
// CHECK: %[[F2:.*]] = "ipu.matmul"(%[[G]], %{{.*}})
// CHECK: %[[F2B:.*]] = "ipu.add"(%[[F2]], %{{.*}})
// CHECK: %[[OUT:.*]] = "ipu.add"(%[[H]], %[[F2B]])
// CHECK-NEXT: return %[[OUT]]
// CHECK-NOT: tosa.
func.func @transformer_block(%x: tensor<1x8x16xf32>) -> tensor<1x8x16xf32> {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %inv_n = "tosa.const"() <{values = dense<0.0625> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %eps = "tosa.const"() <{values = dense<1.0e-5> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %half = "tosa.const"() <{values = dense<0.5> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %one = "tosa.const"() <{values = dense<1.0> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %cubic = "tosa.const"() <{values = dense<0.044715> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %gk = "tosa.const"() <{values = dense<0.797884583> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %g1 = "tosa.const"() <{values = dense<1.1> : tensor<1x1x16xf32>}> : () -> tensor<1x1x16xf32>
  %b1 = "tosa.const"() <{values = dense<0.1> : tensor<1x1x16xf32>}> : () -> tensor<1x1x16xf32>
  %wq = "tosa.const"() <{values = dense<0.03125> : tensor<1x16x16xf32>}> : () -> tensor<1x16x16xf32>
  %wk = "tosa.const"() <{values = dense<0.02> : tensor<1x16x16xf32>}> : () -> tensor<1x16x16xf32>
  %wv = "tosa.const"() <{values = dense<0.05> : tensor<1x16x16xf32>}> : () -> tensor<1x16x16xf32>
  %wo = "tosa.const"() <{values = dense<0.04> : tensor<1x16x16xf32>}> : () -> tensor<1x16x16xf32>
  %bo = "tosa.const"() <{values = dense<0.01> : tensor<1x1x16xf32>}> : () -> tensor<1x1x16xf32>
  %g2 = "tosa.const"() <{values = dense<0.9> : tensor<1x1x16xf32>}> : () -> tensor<1x1x16xf32>
  %b2 = "tosa.const"() <{values = dense<-0.1> : tensor<1x1x16xf32>}> : () -> tensor<1x1x16xf32>
  %w1 = "tosa.const"() <{values = dense<0.03> : tensor<1x16x32xf32>}> : () -> tensor<1x16x32xf32>
  %bf1 = "tosa.const"() <{values = dense<0.02> : tensor<1x1x32xf32>}> : () -> tensor<1x1x32xf32>
  %w2 = "tosa.const"() <{values = dense<-0.025> : tensor<1x32x16xf32>}> : () -> tensor<1x32x16xf32>
  %bf2 = "tosa.const"() <{values = dense<0.03> : tensor<1x1x16xf32>}> : () -> tensor<1x1x16xf32>
  %ln1sum = tosa.reduce_sum %x {axis = 2 : i32} : (tensor<1x8x16xf32>) -> tensor<1x8x1xf32>
  %ln1mean = tosa.mul %ln1sum, %inv_n, %shift : (tensor<1x8x1xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<1x8x1xf32>
  %ln1d = tosa.sub %x, %ln1mean : (tensor<1x8x16xf32>, tensor<1x8x1xf32>) -> tensor<1x8x16xf32>
  %ln1sq = tosa.mul %ln1d, %ln1d, %shift : (tensor<1x8x16xf32>, tensor<1x8x16xf32>, tensor<1xi8>) -> tensor<1x8x16xf32>
  %ln1sqsum = tosa.reduce_sum %ln1sq {axis = 2 : i32} : (tensor<1x8x16xf32>) -> tensor<1x8x1xf32>
  %ln1var = tosa.mul %ln1sqsum, %inv_n, %shift : (tensor<1x8x1xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<1x8x1xf32>
  %ln1ve = tosa.add %ln1var, %eps : (tensor<1x8x1xf32>, tensor<1x1x1xf32>) -> tensor<1x8x1xf32>
  %ln1r = tosa.rsqrt %ln1ve : (tensor<1x8x1xf32>) -> tensor<1x8x1xf32>
  %ln1n = tosa.mul %ln1d, %ln1r, %shift : (tensor<1x8x16xf32>, tensor<1x8x1xf32>, tensor<1xi8>) -> tensor<1x8x16xf32>
  %ln1s = tosa.mul %ln1n, %g1, %shift : (tensor<1x8x16xf32>, tensor<1x1x16xf32>, tensor<1xi8>) -> tensor<1x8x16xf32>
  %ln1 = tosa.add %ln1s, %b1 : (tensor<1x8x16xf32>, tensor<1x1x16xf32>) -> tensor<1x8x16xf32>
  %q = tosa.matmul %ln1, %wq, %zp, %zp : (tensor<1x8x16xf32>, tensor<1x16x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x16xf32>
  %k = tosa.matmul %ln1, %wk, %zp, %zp : (tensor<1x8x16xf32>, tensor<1x16x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x16xf32>
  %v = tosa.matmul %ln1, %wv, %zp, %zp : (tensor<1x8x16xf32>, tensor<1x16x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x16xf32>
  %kt = tosa.transpose %k {perms = array<i32: 0, 2, 1>} : (tensor<1x8x16xf32>) -> tensor<1x16x8xf32>
  %scores = tosa.matmul %q, %kt, %zp, %zp : (tensor<1x8x16xf32>, tensor<1x16x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x8xf32>
  %smax = tosa.reduce_max %scores {axis = 2 : i32} : (tensor<1x8x8xf32>) -> tensor<1x8x1xf32>
  %sc = tosa.sub %scores, %smax : (tensor<1x8x8xf32>, tensor<1x8x1xf32>) -> tensor<1x8x8xf32>
  %se = tosa.exp %sc : (tensor<1x8x8xf32>) -> tensor<1x8x8xf32>
  %ss = tosa.reduce_sum %se {axis = 2 : i32} : (tensor<1x8x8xf32>) -> tensor<1x8x1xf32>
  %sr = tosa.reciprocal %ss : (tensor<1x8x1xf32>) -> tensor<1x8x1xf32>
  %probs = tosa.mul %se, %sr, %shift : (tensor<1x8x8xf32>, tensor<1x8x1xf32>, tensor<1xi8>) -> tensor<1x8x8xf32>
  %attn = tosa.matmul %probs, %v, %zp, %zp : (tensor<1x8x8xf32>, tensor<1x8x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x16xf32>
  %o = tosa.matmul %attn, %wo, %zp, %zp : (tensor<1x8x16xf32>, tensor<1x16x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x16xf32>
  %ob = tosa.add %o, %bo : (tensor<1x8x16xf32>, tensor<1x1x16xf32>) -> tensor<1x8x16xf32>
  %h = tosa.add %x, %ob : (tensor<1x8x16xf32>, tensor<1x8x16xf32>) -> tensor<1x8x16xf32>
  %ln2sum = tosa.reduce_sum %h {axis = 2 : i32} : (tensor<1x8x16xf32>) -> tensor<1x8x1xf32>
  %ln2mean = tosa.mul %ln2sum, %inv_n, %shift : (tensor<1x8x1xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<1x8x1xf32>
  %ln2d = tosa.sub %h, %ln2mean : (tensor<1x8x16xf32>, tensor<1x8x1xf32>) -> tensor<1x8x16xf32>
  %ln2sq = tosa.mul %ln2d, %ln2d, %shift : (tensor<1x8x16xf32>, tensor<1x8x16xf32>, tensor<1xi8>) -> tensor<1x8x16xf32>
  %ln2sqsum = tosa.reduce_sum %ln2sq {axis = 2 : i32} : (tensor<1x8x16xf32>) -> tensor<1x8x1xf32>
  %ln2var = tosa.mul %ln2sqsum, %inv_n, %shift : (tensor<1x8x1xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<1x8x1xf32>
  %ln2ve = tosa.add %ln2var, %eps : (tensor<1x8x1xf32>, tensor<1x1x1xf32>) -> tensor<1x8x1xf32>
  %ln2r = tosa.rsqrt %ln2ve : (tensor<1x8x1xf32>) -> tensor<1x8x1xf32>
  %ln2n = tosa.mul %ln2d, %ln2r, %shift : (tensor<1x8x16xf32>, tensor<1x8x1xf32>, tensor<1xi8>) -> tensor<1x8x16xf32>
  %ln2s = tosa.mul %ln2n, %g2, %shift : (tensor<1x8x16xf32>, tensor<1x1x16xf32>, tensor<1xi8>) -> tensor<1x8x16xf32>
  %ln2 = tosa.add %ln2s, %b2 : (tensor<1x8x16xf32>, tensor<1x1x16xf32>) -> tensor<1x8x16xf32>
  %f1 = tosa.matmul %ln2, %w1, %zp, %zp : (tensor<1x8x16xf32>, tensor<1x16x32xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x32xf32>
  %f1b = tosa.add %f1, %bf1 : (tensor<1x8x32xf32>, tensor<1x1x32xf32>) -> tensor<1x8x32xf32>
  %x2 = tosa.mul %f1b, %f1b, %shift : (tensor<1x8x32xf32>, tensor<1x8x32xf32>, tensor<1xi8>) -> tensor<1x8x32xf32>
  %x3 = tosa.mul %x2, %f1b, %shift : (tensor<1x8x32xf32>, tensor<1x8x32xf32>, tensor<1xi8>) -> tensor<1x8x32xf32>
  %cx3 = tosa.mul %x3, %cubic, %shift : (tensor<1x8x32xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<1x8x32xf32>
  %inner = tosa.add %f1b, %cx3 : (tensor<1x8x32xf32>, tensor<1x8x32xf32>) -> tensor<1x8x32xf32>
  %arg = tosa.mul %inner, %gk, %shift : (tensor<1x8x32xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<1x8x32xf32>
  %th = tosa.tanh %arg : (tensor<1x8x32xf32>) -> tensor<1x8x32xf32>
  %term = tosa.add %th, %one : (tensor<1x8x32xf32>, tensor<1x1x1xf32>) -> tensor<1x8x32xf32>
  %hx = tosa.mul %f1b, %half, %shift : (tensor<1x8x32xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<1x8x32xf32>
  %gelu = tosa.mul %hx, %term, %shift : (tensor<1x8x32xf32>, tensor<1x8x32xf32>, tensor<1xi8>) -> tensor<1x8x32xf32>
  %f2 = tosa.matmul %gelu, %w2, %zp, %zp : (tensor<1x8x32xf32>, tensor<1x32x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x16xf32>
  %f2b = tosa.add %f2, %bf2 : (tensor<1x8x16xf32>, tensor<1x1x16xf32>) -> tensor<1x8x16xf32>
  %out = tosa.add %h, %f2b : (tensor<1x8x16xf32>, tensor<1x8x16xf32>) -> tensor<1x8x16xf32>
  return %out : tensor<1x8x16xf32>
}
