// RUN: ipu-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(convert-linalg-to-ipu))' | FileCheck %s
// RUN: ipu-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(convert-linalg-to-ipu))' | %mlir_opt --split-input-file --irdl-file=%irdl_ipu > /dev/null

// Static tensor.extract_slice, tensor.concat and tensor.insert_slice become ipu.slice and
// ipu.concat: a rank-reducing slice is reshaped to its result, a concat of three parts is a
// chain, inserts into a tensor.empty (how JAX writes a concatenation) fold to one join of the
// parts, an insert into a value joins the value's parts around the window.

// The fused q/k/v projection split, as PyTorch's MultiheadAttention writes it.
// CHECK-LABEL: func.func @qkv
// CHECK: %[[K:.*]] = "ipu.slice"(%arg0) {offsets = array<i64: 1, 0, 0>, strides = array<i64: 1, 1, 1>} : (tensor<3x16x64xf32>) -> tensor<1x16x64xf32>
// CHECK: "ipu.reshape"(%[[K]]) : (tensor<1x16x64xf32>) -> tensor<16x64xf32>
// CHECK: "ipu.slice"(%arg0) {offsets = array<i64: 0, 1, 8>, strides = array<i64: 2, 3, 4>} : (tensor<3x16x64xf32>) -> tensor<2x5x14xf32>
// CHECK-NOT: tensor.
func.func @qkv(%x: tensor<3x16x64xf32>) -> (tensor<16x64xf32>, tensor<2x5x14xf32>) {
  %k = tensor.extract_slice %x[1, 0, 0] [1, 16, 64] [1, 1, 1] : tensor<3x16x64xf32> to tensor<16x64xf32>
  %s = tensor.extract_slice %x[0, 1, 8] [2, 5, 14] [2, 3, 4] : tensor<3x16x64xf32> to tensor<2x5x14xf32>
  return %k, %s : tensor<16x64xf32>, tensor<2x5x14xf32>
}

// -----

// CHECK-LABEL: func.func @three_parts
// CHECK: %[[AB:.*]] = "ipu.concat"(%arg0, %arg1) {axis = 1 : i64} : (tensor<4x8xf32>, tensor<4x2xf32>) -> tensor<4x10xf32>
// CHECK: "ipu.concat"(%[[AB]], %arg2) {axis = 1 : i64} : (tensor<4x10xf32>, tensor<4x6xf32>) -> tensor<4x16xf32>
func.func @three_parts(%a: tensor<4x8xf32>, %b: tensor<4x2xf32>, %c: tensor<4x6xf32>) -> tensor<4x16xf32> {
  %0 = tensor.concat dim(1) %a, %b, %c : (tensor<4x8xf32>, tensor<4x2xf32>, tensor<4x6xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// A class token and 16 patches inserted into an empty [1, 17, 32]: one join, no zeros left.
// CHECK-LABEL: func.func @class_token
// CHECK-NOT: arith.constant
// CHECK: %[[T:.*]] = "ipu.concat"(%arg0, %arg1) {axis = 1 : i64} : (tensor<1x1x32xf32>, tensor<1x16x32xf32>) -> tensor<1x17x32xf32>
// CHECK-NEXT: return %[[T]]
func.func @class_token(%cls: tensor<1x1x32xf32>, %patches: tensor<1x16x32xf32>) -> tensor<1x17x32xf32> {
  %0 = tensor.empty() : tensor<1x17x32xf32>
  %1 = tensor.insert_slice %cls into %0[0, 0, 0] [1, 1, 32] [1, 1, 1] : tensor<1x1x32xf32> into tensor<1x17x32xf32>
  %2 = tensor.insert_slice %patches into %1[0, 1, 0] [1, 16, 32] [1, 1, 1] : tensor<1x16x32xf32> into tensor<1x17x32xf32>
  return %2 : tensor<1x17x32xf32>
}

// -----

// An update of rows 2..4, columns 4..12 of a value: the rows before and after kept, and in
// the updated rows the columns around the window (windows of windows composed).
// CHECK-LABEL: func.func @update
// CHECK-DAG: %[[LEFT:.*]] = "ipu.slice"(%arg0) {offsets = array<i64: 2, 0>, strides = array<i64: 1, 1>} : (tensor<8x16xf32>) -> tensor<2x4xf32>
// CHECK-DAG: %[[RIGHT:.*]] = "ipu.slice"(%arg0) {offsets = array<i64: 2, 12>, strides = array<i64: 1, 1>} : (tensor<8x16xf32>) -> tensor<2x4xf32>
// CHECK-DAG: %[[LW:.*]] = "ipu.concat"(%[[LEFT]], %arg1) {axis = 1 : i64}
// CHECK-DAG: %[[ROWS:.*]] = "ipu.concat"(%[[LW]], %[[RIGHT]]) {axis = 1 : i64} : (tensor<2x12xf32>, tensor<2x4xf32>) -> tensor<2x16xf32>
// CHECK-DAG: %[[TOP:.*]] = "ipu.slice"(%arg0) {offsets = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<8x16xf32>) -> tensor<2x16xf32>
// CHECK-DAG: %[[BOTTOM:.*]] = "ipu.slice"(%arg0) {offsets = array<i64: 4, 0>, strides = array<i64: 1, 1>} : (tensor<8x16xf32>) -> tensor<4x16xf32>
// CHECK-DAG: %[[UP:.*]] = "ipu.concat"(%[[TOP]], %[[ROWS]]) {axis = 0 : i64}
// CHECK-DAG: "ipu.concat"(%[[UP]], %[[BOTTOM]]) {axis = 0 : i64} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
func.func @update(%x: tensor<8x16xf32>, %w: tensor<2x8xf32>) -> tensor<8x16xf32> {
  %0 = tensor.insert_slice %w into %x[2, 4] [2, 8] [1, 1] : tensor<2x8xf32> into tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
