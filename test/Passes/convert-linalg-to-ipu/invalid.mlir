// RUN: ipu-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(convert-linalg-to-ipu))'

// linalg ops without an ipu form are reported, naming the op and why; the pass then fails
// without rewriting anything.

func.func @matmul_into_empty(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %empty = tensor.empty() : tensor<4x16xf32>
  // expected-error@+1 {{'linalg.matmul' op cannot be converted to ipu: it accumulates into an uninitialized tensor.empty (fill it with zero first, or set empty-init-is-zero)}}
  %0 = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%empty : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @fill_alone(%x: f32) -> tensor<4x16xf32> {
  %c = arith.constant 2.0 : f32
  %empty = tensor.empty() : tensor<4x16xf32>
  // expected-error@+1 {{'linalg.fill' op cannot be converted to ipu: only fill as the init of a matmul, batch_matmul or reduction is supported}}
  %0 = linalg.fill ins(%c : f32) outs(%empty : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @matmul_transposed_maps(%a: tensor<4x8xf32>, %b: tensor<16x8xf32>, %acc: tensor<4x16xf32>) -> tensor<4x16xf32> {
  // expected-error@+1 {{'linalg.matmul' op cannot be converted to ipu: indexing maps}}
  %0 = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%a, %b : tensor<4x8xf32>, tensor<16x8xf32>) outs(%acc : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @exp_alone(%x: tensor<4xf32>) -> tensor<4xf32> {
  %empty = tensor.empty() : tensor<4xf32>
  // expected-error@+1 {{'linalg.exp' op cannot be converted to ipu: ipu has no elementwise exp; only exp (softmax) inside a recognized decomposition is supported}}
  %0 = linalg.exp ins(%x : tensor<4xf32>) outs(%empty : tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @integer_add(%x: tensor<4xi32>) -> tensor<4xi32> {
  %empty = tensor.empty() : tensor<4xi32>
  // expected-error@+1 {{'linalg.add' op cannot be converted to ipu: the result element type i32 is not one of ipu's}}
  %0 = linalg.add ins(%x, %x : tensor<4xi32>, tensor<4xi32>) outs(%empty : tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @copy(%x: tensor<4xf32>) -> tensor<4xf32> {
  %empty = tensor.empty() : tensor<4xf32>
  // expected-error@+1 {{'linalg.copy' op cannot be converted to ipu: no ipu equivalent (supported: linalg.matmul, linalg.batch_matmul, linalg.add, linalg.transpose, linalg.softmax, linalg.broadcast of a constant, linalg.generic adds; fill only as an init; elementwise ops and reductions inside layer-norm, softmax, GeLU and attention decompositions)}}
  %0 = linalg.copy ins(%x : tensor<4xf32>) outs(%empty : tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @broadcast_of_a_value(%x: tensor<4xf32>) -> tensor<2x4xf32> {
  %empty = tensor.empty() : tensor<2x4xf32>
  // expected-error@+1 {{'linalg.broadcast' op cannot be converted to ipu: ipu has no broadcast op: only a broadcast of a constant, or one inside a recognized layer-norm or softmax decomposition, is supported}}
  %0 = linalg.broadcast ins(%x : tensor<4xf32>) outs(%empty : tensor<2x4xf32>) dimensions = [0]
  return %0 : tensor<2x4xf32>
}

// -----

func.func @generic_multiply(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %empty = tensor.empty() : tensor<4xf32>
  // expected-error@+1 {{'linalg.generic' op cannot be converted to ipu: this linalg.generic is not part of a recognized layer-norm, softmax, GeLU or attention decomposition, nor an add with NumPy-style broadcasting maps}}
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x, %y : tensor<4xf32>, tensor<4xf32>) outs(%empty : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @softmax_first_axis(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %empty = tensor.empty() : tensor<4x8xf32>
  // expected-error@+1 {{'linalg.softmax' op cannot be converted to ipu: softmax over dimension 0; ipu.softmax normalizes the last axis (1)}}
  %0 = linalg.softmax dimension(0) ins(%x : tensor<4x8xf32>) outs(%empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
