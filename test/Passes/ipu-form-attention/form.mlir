// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-form-attention, symbol-dce, canonicalize)' | FileCheck %s

// The importers' form of attention (JAX through IREE: heads as a batch, k transposed by a
// rearrange, scores scaled by a broadcast input-free map, a softmax) becomes ipu.attention
// with the scale the map computes (1/4 = 1/sqrt(16)); the reshapes around are looked through
// and the inputs regrouped to the result's batch axes.
// CHECK-LABEL: func.func @heads
// CHECK-NOT: ipu.softmax
// CHECK-NOT: ipu.map
// CHECK: %[[Q:.*]] = "ipu.reshape"(%arg0) : (tensor<1x4x16x16xf32>) -> tensor<4x16x16xf32>
// CHECK: %[[K:.*]] = "ipu.reshape"(%arg1) : (tensor<1x4x16x16xf32>) -> tensor<4x16x16xf32>
// CHECK: "ipu.attention"(%[[Q]], %[[K]], %arg2) {scale = 2.500000e-01 : f32} : (tensor<4x16x16xf32>, tensor<4x16x16xf32>, tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
// CHECK-NOT: func.func private
func.func private @quarter() -> f32 {
  %c = arith.constant 4.0 : f32
  return %c : f32
}
func.func private @divide(%a: f32, %b: f32) -> f32 {
  %0 = arith.divf %a, %b : f32
  return %0 : f32
}
func.func @heads(%q: tensor<1x4x16x16xf32>, %k: tensor<1x4x16x16xf32>, %v: tensor<4x16x16xf32>) -> tensor<4x16x16xf32> {
  %kt = "ipu.rearrange"(%k) {permutation = array<i64: 0, 1, 3, 2>} : (tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
  %q3 = "ipu.reshape"(%q) : (tensor<1x4x16x16xf32>) -> tensor<4x16x16xf32>
  %k3 = "ipu.reshape"(%kt) : (tensor<1x4x16x16xf32>) -> tensor<4x16x16xf32>
  %s = "ipu.matmul"(%q3, %k3) : (tensor<4x16x16xf32>, tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %c = "ipu.map"() {body = @quarter} : () -> tensor<f32>
  %cb = "ipu.broadcast"(%c) : (tensor<f32>) -> tensor<4x16x16xf32>
  %scaled = "ipu.map"(%s, %cb) {body = @divide} : (tensor<4x16x16xf32>, tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %p = "ipu.softmax"(%scaled) : (tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %o = "ipu.matmul"(%p, %v) : (tensor<4x16x16xf32>, tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  return %o : tensor<4x16x16xf32>
}

// -----

// A transpose_rhs matmul of the scores, no scale (1), a splat-scaled variant not needed.
// CHECK-LABEL: func.func @flagged
// CHECK: "ipu.attention"(%arg0, %arg1, %arg2) {scale = 1.000000e+00 : f32}
func.func @flagged(%q: tensor<8x32xf16>, %k: tensor<12x32xf16>, %v: tensor<12x16xf16>) -> tensor<8x16xf16> {
  %s = "ipu.matmul"(%q, %k) {transpose_rhs} : (tensor<8x32xf16>, tensor<12x32xf16>) -> tensor<8x12xf16>
  %p = "ipu.softmax"(%s) : (tensor<8x12xf16>) -> tensor<8x12xf16>
  %o = "ipu.matmul"(%p, %v) : (tensor<8x12xf16>, tensor<12x16xf16>) -> tensor<8x16xf16>
  return %o : tensor<8x16xf16>
}

// -----

// Near misses stay: the scores read twice (also returned), and a scale that is not linear in
// the scores (exp(s) * c).
// CHECK-LABEL: func.func @scores_read_twice
// CHECK-NOT: ipu.attention
// CHECK: ipu.softmax
func.func @scores_read_twice(%q: tensor<8x32xf16>, %k: tensor<12x32xf16>, %v: tensor<12x16xf16>) -> (tensor<8x16xf16>, tensor<8x12xf16>) {
  %s = "ipu.matmul"(%q, %k) {transpose_rhs} : (tensor<8x32xf16>, tensor<12x32xf16>) -> tensor<8x12xf16>
  %p = "ipu.softmax"(%s) : (tensor<8x12xf16>) -> tensor<8x12xf16>
  %o = "ipu.matmul"(%p, %v) : (tensor<8x12xf16>, tensor<12x16xf16>) -> tensor<8x16xf16>
  return %o, %s : tensor<8x16xf16>, tensor<8x12xf16>
}

// -----

// CHECK-LABEL: func.func @not_a_scale
// CHECK-NOT: ipu.attention
// CHECK: "ipu.map"
// CHECK: ipu.softmax
func.func private @exp_times(%a: f32, %b: f32) -> f32 {
  %0 = math.exp %a : f32
  %1 = arith.mulf %0, %b : f32
  return %1 : f32
}
func.func @not_a_scale(%q: tensor<8x32xf16>, %k: tensor<12x32xf16>, %v: tensor<12x16xf16>) -> tensor<8x16xf16> {
  %s = "ipu.matmul"(%q, %k) {transpose_rhs} : (tensor<8x32xf16>, tensor<12x32xf16>) -> tensor<8x12xf16>
  %c = arith.constant dense<0.5> : tensor<f16>
  %cb = "ipu.broadcast"(%c) : (tensor<f16>) -> tensor<8x12xf16>
  %scaled = "ipu.map"(%s, %cb) {body = @exp_times} : (tensor<8x12xf16>, tensor<8x12xf16>) -> tensor<8x12xf16>
  %p = "ipu.softmax"(%scaled) : (tensor<8x12xf16>) -> tensor<8x12xf16>
  %o = "ipu.matmul"(%p, %v) : (tensor<8x12xf16>, tensor<12x16xf16>) -> tensor<8x16xf16>
  return %o : tensor<8x16xf16>
}

// -----

// A causal mask from index compares (JAX: key index at most the query index keeps the scaled
// score, the rest -3.4e38) becomes a causal attention.
// CHECK-LABEL: func.func @causal
// CHECK: "ipu.attention"(%arg0, %arg1, %arg2) {causal, scale = 1.250000e-01 : f32}
func.func private @eight() -> f32 {
  %c = arith.constant 8.0 : f32
  return %c : f32
}
func.func private @mask(%s: f32, %c: f32, %h: index, %i: index, %j: index) -> f32 {
  %low = arith.constant -3.40282347E+38 : f32
  %ii = arith.index_cast %i : index to i64
  %jj = arith.index_cast %j : index to i64
  %keep = arith.cmpi sge, %ii, %jj : i64
  %scaled = arith.divf %s, %c : f32
  %r = arith.select %keep, %scaled, %low : f32
  return %r : f32
}
func.func @causal(%q: tensor<2x8x64xf16>, %k: tensor<2x8x64xf16>, %v: tensor<2x8x64xf16>) -> tensor<2x8x64xf16> {
  %s = "ipu.matmul"(%q, %k) {transpose_rhs} : (tensor<2x8x64xf16>, tensor<2x8x64xf16>) -> tensor<2x8x8xf16>
  %c = "ipu.map"() {body = @eight} : () -> tensor<f16>
  %cb = "ipu.broadcast"(%c) : (tensor<f16>) -> tensor<2x8x8xf16>
  %masked = "ipu.map"(%s, %cb) {body = @mask} : (tensor<2x8x8xf16>, tensor<2x8x8xf16>) -> tensor<2x8x8xf16>
  %p = "ipu.softmax"(%masked) : (tensor<2x8x8xf16>) -> tensor<2x8x8xf16>
  %o = "ipu.matmul"(%p, %v) : (tensor<2x8x8xf16>, tensor<2x8x64xf16>) -> tensor<2x8x64xf16>
  return %o : tensor<2x8x64xf16>
}

// -----

// The mask the other way round (keys after the query kept) is not causal attention: kept.
// CHECK-LABEL: func.func @anti_causal
// CHECK-NOT: ipu.attention
// CHECK: ipu.softmax
func.func private @eight() -> f32 {
  %c = arith.constant 8.0 : f32
  return %c : f32
}
func.func private @mask(%s: f32, %c: f32, %h: index, %i: index, %j: index) -> f32 {
  %low = arith.constant -3.40282347E+38 : f32
  %ii = arith.index_cast %i : index to i64
  %jj = arith.index_cast %j : index to i64
  %keep = arith.cmpi sle, %ii, %jj : i64
  %scaled = arith.divf %s, %c : f32
  %r = arith.select %keep, %scaled, %low : f32
  return %r : f32
}
func.func @anti_causal(%q: tensor<2x8x64xf16>, %k: tensor<2x8x64xf16>, %v: tensor<2x8x64xf16>) -> tensor<2x8x64xf16> {
  %s = "ipu.matmul"(%q, %k) {transpose_rhs} : (tensor<2x8x64xf16>, tensor<2x8x64xf16>) -> tensor<2x8x8xf16>
  %c = "ipu.map"() {body = @eight} : () -> tensor<f16>
  %cb = "ipu.broadcast"(%c) : (tensor<f16>) -> tensor<2x8x8xf16>
  %masked = "ipu.map"(%s, %cb) {body = @mask} : (tensor<2x8x8xf16>, tensor<2x8x8xf16>) -> tensor<2x8x8xf16>
  %p = "ipu.softmax"(%masked) : (tensor<2x8x8xf16>) -> tensor<2x8x8xf16>
  %o = "ipu.matmul"(%p, %v) : (tensor<2x8x8xf16>, tensor<2x8x64xf16>) -> tensor<2x8x64xf16>
  return %o : tensor<2x8x64xf16>
}

// -----

// A softmax written op by op (maps, broadcasts and last-axis reductions from one input; here
// with PyTorch's guard for rows that are all -inf: a min reduction and a select) becomes
// ipu.softmax, checked by evaluating the cone.
// CHECK-LABEL: func.func @softmax_cone
// CHECK-NEXT: %[[S:.*]] = "ipu.softmax"(%arg0) : (tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: return %[[S]]
func.func private @exp_sub(%a: f32, %b: f32) -> f32 {
  %0 = arith.subf %a, %b : f32
  %1 = math.exp %0 : f32
  return %1 : f32
}
func.func private @is_low(%a: f32) -> f32 {
  %low = arith.constant -3.40282347E+38 : f32
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %c = arith.cmpf ole, %a, %low : f32
  %r = arith.select %c, %one, %zero : f32
  return %r : f32
}
func.func private @guarded_div(%guard: f32, %e: f32, %s: f32) -> f32 {
  %zero = arith.constant 0.0 : f32
  %q = arith.divf %e, %s : f32
  %c = arith.cmpf one, %guard, %zero : f32
  %r = arith.select %c, %zero, %q : f32
  return %r : f32
}
func.func @softmax_cone(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %m = "ipu.reduce"(%x) {combiner = "max"} : (tensor<2x8xf32>) -> tensor<2x1xf32>
  %mb = "ipu.broadcast"(%m) : (tensor<2x1xf32>) -> tensor<2x8xf32>
  %e = "ipu.map"(%x, %mb) {body = @exp_sub} : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %s = "ipu.reduce"(%e) {combiner = "add"} : (tensor<2x8xf32>) -> tensor<2x1xf32>
  %sb = "ipu.broadcast"(%s) : (tensor<2x1xf32>) -> tensor<2x8xf32>
  %low = "ipu.map"(%x) {body = @is_low} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %all = "ipu.reduce"(%low) {combiner = "min"} : (tensor<2x8xf32>) -> tensor<2x1xf32>
  %allb = "ipu.broadcast"(%all) : (tensor<2x1xf32>) -> tensor<2x8xf32>
  %y = "ipu.map"(%allb, %e, %sb) {body = @guarded_div} : (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// The same cone multiplying by the sum instead of dividing is no softmax: kept.
// CHECK-LABEL: func.func @not_softmax
// CHECK-NOT: ipu.softmax
// CHECK: ipu.reduce
func.func private @exp_sub(%a: f32, %b: f32) -> f32 {
  %0 = arith.subf %a, %b : f32
  %1 = math.exp %0 : f32
  return %1 : f32
}
func.func private @times(%a: f32, %b: f32) -> f32 {
  %0 = arith.mulf %a, %b : f32
  return %0 : f32
}
func.func @not_softmax(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %m = "ipu.reduce"(%x) {combiner = "max"} : (tensor<2x8xf32>) -> tensor<2x1xf32>
  %mb = "ipu.broadcast"(%m) : (tensor<2x1xf32>) -> tensor<2x8xf32>
  %e = "ipu.map"(%x, %mb) {body = @exp_sub} : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %s = "ipu.reduce"(%e) {combiner = "add"} : (tensor<2x8xf32>) -> tensor<2x1xf32>
  %sb = "ipu.broadcast"(%s) : (tensor<2x1xf32>) -> tensor<2x8xf32>
  %y = "ipu.map"(%e, %sb) {body = @times} : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// PyTorch's attention: q and k each scaled by a one-input map (by the square root of the
// score scale), the guarded softmax cone, then the products: one ipu.attention with the
// scales multiplied (0.5 * 0.5).
// CHECK-LABEL: func.func @torch_form
// CHECK: "ipu.attention"(%arg0, %arg1, %arg2) {scale = 2.500000e-01 : f32}
// CHECK-NOT: ipu.softmax
func.func private @half(%a: f32) -> f32 {
  %h = arith.constant 0.5 : f32
  %0 = arith.mulf %a, %h : f32
  return %0 : f32
}
func.func @torch_form(%q: tensor<4x16x16xf32>, %k: tensor<4x16x16xf32>, %v: tensor<4x16x16xf32>) -> tensor<4x16x16xf32> {
  %qs = "ipu.map"(%q) {body = @half} : (tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %kt = "ipu.rearrange"(%k) {permutation = array<i64: 0, 2, 1>} : (tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %ks = "ipu.map"(%kt) {body = @half} : (tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %s = "ipu.matmul"(%qs, %ks) : (tensor<4x16x16xf32>, tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %p = "ipu.softmax"(%s) : (tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %o = "ipu.matmul"(%p, %v) : (tensor<4x16x16xf32>, tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  return %o : tensor<4x16x16xf32>
}

// -----

// A layer norm written op by op (PyTorch's: the mean, the mean of squared deviations, rsqrt of
// it plus 1e-5, the gain and shift as constant vectors) becomes ipu.layer_norm with the
// epsilon, gain and shift read off the cone.
// CHECK-LABEL: func.func @layer_norm_cone
// CHECK-DAG: %[[G:.*]] = arith.constant dense<[5.000000e-01, 1.000000e+00, 1.500000e+00, 2.000000e+00]> : tensor<4xf32>
// CHECK-DAG: %[[B:.*]] = arith.constant dense<[0.000000e+00, 1.000000e-01, 2.000000e-01, 3.000000e-01]> : tensor<4xf32>
// CHECK: %[[N:.*]] = "ipu.layer_norm"(%arg0, %[[G]], %[[B]]) {epsilon = 9.99999974E-6 : f32} : (tensor<3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT: return %[[N]]
func.func private @mean(%a: f32) -> f32 {
  %c = arith.constant 4.0 : f32
  %0 = arith.divf %a, %c : f32
  return %0 : f32
}
func.func private @sub(%a: f32, %b: f32) -> f32 {
  %0 = arith.subf %a, %b : f32
  return %0 : f32
}
func.func private @square(%a: f32) -> f32 {
  %0 = arith.mulf %a, %a : f32
  return %0 : f32
}
func.func private @inv_std(%a: f32) -> f32 {
  %eps = arith.constant 9.99999974E-6 : f32
  %c = arith.constant 4.0 : f32
  %0 = arith.divf %a, %c : f32
  %1 = arith.addf %0, %eps : f32
  %2 = math.rsqrt %1 : f32
  return %2 : f32
}
func.func private @affine(%d: f32, %s: f32, %g: f32, %b: f32) -> f32 {
  %0 = arith.mulf %d, %s : f32
  %1 = arith.mulf %0, %g : f32
  %2 = arith.addf %1, %b : f32
  return %2 : f32
}
func.func @layer_norm_cone(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %gamma = arith.constant dense<[0.5, 1.0, 1.5, 2.0]> : tensor<4xf32>
  %beta = arith.constant dense<[0.0, 0.1, 0.2, 0.3]> : tensor<4xf32>
  %s = "ipu.reduce"(%x) {combiner = "add"} : (tensor<3x4xf32>) -> tensor<3x1xf32>
  %m = "ipu.map"(%s) {body = @mean} : (tensor<3x1xf32>) -> tensor<3x1xf32>
  %mb = "ipu.broadcast"(%m) : (tensor<3x1xf32>) -> tensor<3x4xf32>
  %d = "ipu.map"(%x, %mb) {body = @sub} : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %sq = "ipu.map"(%d) {body = @square} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %v = "ipu.reduce"(%sq) {combiner = "add"} : (tensor<3x4xf32>) -> tensor<3x1xf32>
  %r = "ipu.map"(%v) {body = @inv_std} : (tensor<3x1xf32>) -> tensor<3x1xf32>
  %rb = "ipu.broadcast"(%r) : (tensor<3x1xf32>) -> tensor<3x4xf32>
  %gb = "ipu.broadcast"(%gamma) : (tensor<4xf32>) -> tensor<3x4xf32>
  %bb = "ipu.broadcast"(%beta) : (tensor<4xf32>) -> tensor<3x4xf32>
  %y = "ipu.map"(%d, %rb, %gb, %bb) {body = @affine} : (tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

// -----

// The shift added by a separate ipu.add (TF's batch-norm form, Flax's LayerNorm) is part of the
// layer norm; the normalized value is computed from a residual sum (an ipu.add of two
// full-size values), which stays as it is and is the layer norm's input: of the values the
// cone's reductions read, the one computed first. A reshape inside the cone that keeps the
// rows is looked through (the input is reshaped to the result's shape).
// CHECK-LABEL: func.func @shift_added_after
// CHECK-DAG: %[[G:.*]] = arith.constant dense<[5.000000e-01, 1.000000e+00, 1.500000e+00, 2.000000e+00]> : tensor<4xf32>
// CHECK-DAG: %[[B:.*]] = arith.constant dense<[0.000000e+00, 1.000000e-01, 2.000000e-01, 3.000000e-01]> : tensor<4xf32>
// CHECK: %[[X:.*]] = "ipu.add"(%arg0, %arg1) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
// CHECK: %[[R:.*]] = "ipu.reshape"(%[[X]]) : (tensor<3x4xf32>) -> tensor<1x3x4xf32>
// CHECK: %[[N:.*]] = "ipu.layer_norm"(%[[R]], %[[G]], %[[B]]) {epsilon = 9.99999974E-6 : f32} : (tensor<1x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x3x4xf32>
// CHECK-NEXT: return %[[N]]
// CHECK-NOT: ipu.map
func.func private @mean(%a: f32) -> f32 {
  %c = arith.constant 4.0 : f32
  %0 = arith.divf %a, %c : f32
  return %0 : f32
}
func.func private @sub(%a: f32, %b: f32) -> f32 {
  %0 = arith.subf %a, %b : f32
  return %0 : f32
}
func.func private @square(%a: f32) -> f32 {
  %0 = arith.mulf %a, %a : f32
  return %0 : f32
}
func.func private @inv_std(%a: f32) -> f32 {
  %eps = arith.constant 9.99999974E-6 : f32
  %c = arith.constant 4.0 : f32
  %0 = arith.divf %a, %c : f32
  %1 = arith.addf %0, %eps : f32
  %2 = math.rsqrt %1 : f32
  return %2 : f32
}
func.func private @scale(%d: f32, %s: f32, %g: f32) -> f32 {
  %0 = arith.mulf %d, %s : f32
  %1 = arith.mulf %0, %g : f32
  return %1 : f32
}
func.func @shift_added_after(%a: tensor<3x4xf32>, %b: tensor<3x4xf32>) -> tensor<1x3x4xf32> {
  %gamma = arith.constant dense<[0.5, 1.0, 1.5, 2.0]> : tensor<4xf32>
  %beta = arith.constant dense<[0.0, 0.1, 0.2, 0.3]> : tensor<4xf32>
  %x = "ipu.add"(%a, %b) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %s = "ipu.reduce"(%x) {combiner = "add"} : (tensor<3x4xf32>) -> tensor<3x1xf32>
  %m = "ipu.map"(%s) {body = @mean} : (tensor<3x1xf32>) -> tensor<3x1xf32>
  %mb = "ipu.broadcast"(%m) : (tensor<3x1xf32>) -> tensor<3x4xf32>
  %d = "ipu.map"(%x, %mb) {body = @sub} : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %sq = "ipu.map"(%d) {body = @square} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %v = "ipu.reduce"(%sq) {combiner = "add"} : (tensor<3x4xf32>) -> tensor<3x1xf32>
  %r = "ipu.map"(%v) {body = @inv_std} : (tensor<3x1xf32>) -> tensor<3x1xf32>
  %rb = "ipu.broadcast"(%r) : (tensor<3x1xf32>) -> tensor<3x4xf32>
  %gb = "ipu.broadcast"(%gamma) : (tensor<4xf32>) -> tensor<3x4xf32>
  %n = "ipu.map"(%d, %rb, %gb) {body = @scale} : (tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %n3 = "ipu.reshape"(%n) : (tensor<3x4xf32>) -> tensor<1x3x4xf32>
  %y = "ipu.add"(%n3, %beta) : (tensor<1x3x4xf32>, tensor<4xf32>) -> tensor<1x3x4xf32>
  return %y : tensor<1x3x4xf32>
}

// -----

// Near miss: a shift that varies by row (an argument, not a constant vector over the columns)
// is no layer norm's; the normalization without it is one, and the add stays.
// CHECK-LABEL: func.func @row_varying_shift
// CHECK: %[[N:.*]] = "ipu.layer_norm"(%arg0, %{{.*}}, %{{.*}}) {epsilon = 9.99999974E-6 : f32}
// CHECK-NEXT: %[[Y:.*]] = "ipu.add"(%[[N]], %arg1) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT: return %[[Y]]
func.func private @mean(%a: f32) -> f32 {
  %c = arith.constant 4.0 : f32
  %0 = arith.divf %a, %c : f32
  return %0 : f32
}
func.func private @sub(%a: f32, %b: f32) -> f32 {
  %0 = arith.subf %a, %b : f32
  return %0 : f32
}
func.func private @square(%a: f32) -> f32 {
  %0 = arith.mulf %a, %a : f32
  return %0 : f32
}
func.func private @inv_std(%a: f32) -> f32 {
  %eps = arith.constant 9.99999974E-6 : f32
  %c = arith.constant 4.0 : f32
  %0 = arith.divf %a, %c : f32
  %1 = arith.addf %0, %eps : f32
  %2 = math.rsqrt %1 : f32
  return %2 : f32
}
func.func private @mul(%d: f32, %s: f32) -> f32 {
  %0 = arith.mulf %d, %s : f32
  return %0 : f32
}
func.func @row_varying_shift(%x: tensor<3x4xf32>, %t: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %s = "ipu.reduce"(%x) {combiner = "add"} : (tensor<3x4xf32>) -> tensor<3x1xf32>
  %m = "ipu.map"(%s) {body = @mean} : (tensor<3x1xf32>) -> tensor<3x1xf32>
  %mb = "ipu.broadcast"(%m) : (tensor<3x1xf32>) -> tensor<3x4xf32>
  %d = "ipu.map"(%x, %mb) {body = @sub} : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %sq = "ipu.map"(%d) {body = @square} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %v = "ipu.reduce"(%sq) {combiner = "add"} : (tensor<3x4xf32>) -> tensor<3x1xf32>
  %r = "ipu.map"(%v) {body = @inv_std} : (tensor<3x1xf32>) -> tensor<3x1xf32>
  %rb = "ipu.broadcast"(%r) : (tensor<3x1xf32>) -> tensor<3x4xf32>
  %n = "ipu.map"(%d, %rb) {body = @mul} : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %y = "ipu.add"(%n, %t) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

// -----

// The scale as a one-input map of the scores (a constant captured in its body: JAX's
// dot_product_attention) and q divided by a broadcast scalar an input-free map makes (Flax's
// 1/sqrt(d) on q): one attention, the scales multiplied (0.5 * 0.25).
// CHECK-LABEL: func.func @scales_in_maps
// CHECK: "ipu.attention"(%arg0, %arg1, %arg2) {scale = 1.250000e-01 : f32}
// CHECK-NOT: ipu.map
func.func private @half(%s: f32) -> f32 {
  %c = arith.constant 0.5 : f32
  %0 = arith.mulf %s, %c : f32
  return %0 : f32
}
func.func private @four() -> f32 {
  %c = arith.constant 4.0 : f32
  return %c : f32
}
func.func private @div(%a: f32, %b: f32) -> f32 {
  %0 = arith.divf %a, %b : f32
  return %0 : f32
}
func.func @scales_in_maps(%q: tensor<4x16x16xf32>, %k: tensor<4x16x16xf32>, %v: tensor<4x16x16xf32>) -> tensor<4x16x16xf32> {
  %c = "ipu.map"() {body = @four} : () -> tensor<f32>
  %cb = "ipu.broadcast"(%c) : (tensor<f32>) -> tensor<4x16x16xf32>
  %qs = "ipu.map"(%q, %cb) {body = @div} : (tensor<4x16x16xf32>, tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %s = "ipu.matmul"(%qs, %k) {transpose_rhs} : (tensor<4x16x16xf32>, tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %ss = "ipu.map"(%s) {body = @half} : (tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %p = "ipu.softmax"(%ss) : (tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %o = "ipu.matmul"(%p, %v) : (tensor<4x16x16xf32>, tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  return %o : tensor<4x16x16xf32>
}

// -----

// Masks between the scores and the softmax, composed with the scale and checked by evaluating
// the chain: an index-reading map after a scale map (JAX's causal dot_product_attention), a
// select against a constant mask (TFLite's), and an additive mask an input-free map makes
// from the indices, broadcast over the heads (PyTorch's).
// CHECK-LABEL: func.func @causal_chain
// CHECK: "ipu.attention"(%arg0, %arg1, %arg2) {causal, scale = 2.500000e-01 : f32}
// CHECK-NOT: ipu.map
func.func private @quarter(%s: f32) -> f32 {
  %c = arith.constant 0.25 : f32
  %0 = arith.mulf %s, %c : f32
  return %0 : f32
}
func.func private @lower(%s: f32, %b: index, %i: index, %j: index) -> f32 {
  %ninf = arith.constant -3.40282347E+38 : f32
  %0 = arith.index_cast %i : index to i64
  %1 = arith.index_cast %j : index to i64
  %2 = arith.cmpi sge, %0, %1 : i64
  %3 = arith.select %2, %s, %ninf : f32
  return %3 : f32
}
func.func @causal_chain(%q: tensor<4x16x16xf32>, %k: tensor<4x16x16xf32>, %v: tensor<4x16x16xf32>) -> tensor<4x16x16xf32> {
  %s = "ipu.matmul"(%q, %k) {transpose_rhs} : (tensor<4x16x16xf32>, tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %ss = "ipu.map"(%s) {body = @quarter} : (tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %m = "ipu.map"(%ss) {body = @lower} : (tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %p = "ipu.softmax"(%m) : (tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %o = "ipu.matmul"(%p, %v) : (tensor<4x16x16xf32>, tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  return %o : tensor<4x16x16xf32>
}

// -----

// CHECK-LABEL: func.func @constant_mask
// CHECK: "ipu.attention"(%arg0, %arg1, %arg2) {causal, scale = 5.000000e-01 : f32}
// CHECK-NOT: ipu.map
func.func private @masked_scale(%keep: f32, %s: f32, %c: f32, %low: f32) -> f32 {
  %zero = arith.constant 0.0 : f32
  %0 = arith.mulf %s, %c : f32
  %1 = arith.cmpf une, %keep, %zero : f32
  %2 = arith.select %1, %0, %low : f32
  return %2 : f32
}
func.func @constant_mask(%q: tensor<1x4x4xf32>, %k: tensor<1x4x4xf32>, %v: tensor<1x4x4xf32>) -> tensor<1x4x4xf32> {
  %mask = arith.constant dense<[[[1.0, 0.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0], [1.0, 1.0, 1.0, 0.0], [1.0, 1.0, 1.0, 1.0]]]> : tensor<1x4x4xf32>
  %c = arith.constant dense<0.5> : tensor<f32>
  %low = arith.constant dense<-3.40282347E+38> : tensor<f32>
  %cb = "ipu.broadcast"(%c) : (tensor<f32>) -> tensor<1x4x4xf32>
  %lb = "ipu.broadcast"(%low) : (tensor<f32>) -> tensor<1x4x4xf32>
  %s = "ipu.matmul"(%q, %k) {transpose_rhs} : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
  %m = "ipu.map"(%mask, %s, %cb, %lb) {body = @masked_scale} : (tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
  %p = "ipu.softmax"(%m) : (tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
  %o = "ipu.matmul"(%p, %v) : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
  return %o : tensor<1x4x4xf32>
}

// -----

// An additive mask of zeros (Hugging Face's attention with no mask given) is no mask; one
// that is -inf above the diagonal is causal.
// CHECK-LABEL: func.func @additive_masks
// CHECK: "ipu.attention"(%arg0, %arg1, %arg2) {scale = 1.000000e+00 : f32}
// CHECK: "ipu.attention"(%arg0, %arg1, %arg2) {causal, scale = 1.000000e+00 : f32}
// CHECK-NOT: ipu.add
func.func private @zeros(%i: index, %j: index, %k: index) -> f32 {
  %z = arith.constant 0.0 : f32
  return %z : f32
}
func.func private @upper(%i: index, %j: index, %k: index) -> f32 {
  %z = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %0 = arith.cmpi ugt, %k, %j : index
  %1 = arith.select %0, %ninf, %z : f32
  return %1 : f32
}
func.func @additive_masks(%q: tensor<2x8x8xf32>, %k: tensor<2x8x8xf32>, %v: tensor<2x8x8xf32>) -> (tensor<2x8x8xf32>, tensor<2x8x8xf32>) {
  %z = "ipu.map"() {body = @zeros} : () -> tensor<1x8x8xf32>
  %zb = "ipu.broadcast"(%z) : (tensor<1x8x8xf32>) -> tensor<2x8x8xf32>
  %s = "ipu.matmul"(%q, %k) {transpose_rhs} : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %m = "ipu.add"(%s, %zb) : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %p = "ipu.softmax"(%m) : (tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %o = "ipu.matmul"(%p, %v) : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %u = "ipu.map"() {body = @upper} : () -> tensor<1x8x8xf32>
  %ub = "ipu.broadcast"(%u) : (tensor<1x8x8xf32>) -> tensor<2x8x8xf32>
  %s2 = "ipu.matmul"(%q, %k) {transpose_rhs} : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %m2 = "ipu.add"(%s2, %ub) : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %p2 = "ipu.softmax"(%m2) : (tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %o2 = "ipu.matmul"(%p2, %v) : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  return %o, %o2 : tensor<2x8x8xf32>, tensor<2x8x8xf32>
}

// -----

// Near miss: a mask that also hides a key on the diagonal is neither none nor causal, and the
// chain stays.
// CHECK-LABEL: func.func @not_causal_mask
// CHECK-NOT: ipu.attention
// CHECK: ipu.softmax
func.func private @strict(%i: index, %j: index, %k: index) -> f32 {
  %z = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %0 = arith.cmpi uge, %k, %j : index
  %1 = arith.select %0, %ninf, %z : f32
  return %1 : f32
}
func.func @not_causal_mask(%q: tensor<2x8x8xf32>, %k: tensor<2x8x8xf32>, %v: tensor<2x8x8xf32>) -> tensor<2x8x8xf32> {
  %u = "ipu.map"() {body = @strict} : () -> tensor<1x8x8xf32>
  %ub = "ipu.broadcast"(%u) : (tensor<1x8x8xf32>) -> tensor<2x8x8xf32>
  %s = "ipu.matmul"(%q, %k) {transpose_rhs} : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %m = "ipu.add"(%s, %ub) : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %p = "ipu.softmax"(%m) : (tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %o = "ipu.matmul"(%p, %v) : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  return %o : tensor<2x8x8xf32>
}

// -----

// Near miss: a mask hiding one key in the middle of every row (a padded token at position
// 100 of 128) is neither none nor causal; every position of a score matrix this size is
// checked, so the chain stays.
// CHECK-LABEL: func.func @padding_mask
// CHECK-NOT: ipu.attention
// CHECK: ipu.softmax
func.func private @hide_key_100(%i: index, %j: index, %k: index) -> f32 {
  %z = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c100 = arith.constant 100 : index
  %0 = arith.cmpi eq, %k, %c100 : index
  %1 = arith.select %0, %ninf, %z : f32
  return %1 : f32
}
func.func @padding_mask(%q: tensor<1x128x16xf32>, %k: tensor<1x128x16xf32>, %v: tensor<1x128x16xf32>) -> tensor<1x128x16xf32> {
  %u = "ipu.map"() {body = @hide_key_100} : () -> tensor<1x128x128xf32>
  %s = "ipu.matmul"(%q, %k) {transpose_rhs} : (tensor<1x128x16xf32>, tensor<1x128x16xf32>) -> tensor<1x128x128xf32>
  %m = "ipu.add"(%s, %u) : (tensor<1x128x128xf32>, tensor<1x128x128xf32>) -> tensor<1x128x128xf32>
  %p = "ipu.softmax"(%m) : (tensor<1x128x128xf32>) -> tensor<1x128x128xf32>
  %o = "ipu.matmul"(%p, %v) : (tensor<1x128x128xf32>, tensor<1x128x16xf32>) -> tensor<1x128x16xf32>
  return %o : tensor<1x128x16xf32>
}
