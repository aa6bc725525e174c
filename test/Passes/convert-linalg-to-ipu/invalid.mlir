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

func.func @matmul_transposed_maps(%a: tensor<4x8xf32>, %b: tensor<16x8xf32>, %acc: tensor<4x16xf32>) -> tensor<4x16xf32> {
  // expected-error@+1 {{'linalg.matmul' op cannot be converted to ipu: indexing maps}}
  %0 = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%a, %b : tensor<4x8xf32>, tensor<16x8xf32>) outs(%acc : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @integer_add(%x: tensor<4xi32>) -> tensor<4xi32> {
  %empty = tensor.empty() : tensor<4xi32>
  // expected-error@+1 {{'linalg.add' op cannot be converted to ipu: the result element type i32 is not one of ipu's}}
  %0 = linalg.add ins(%x, %x : tensor<4xi32>, tensor<4xi32>) outs(%empty : tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @softmax_first_axis(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %empty = tensor.empty() : tensor<4x8xf32>
  // expected-error@+1 {{'linalg.softmax' op cannot be converted to ipu: softmax over dimension 0; ipu.softmax normalizes the last axis (1)}}
  %0 = linalg.softmax dimension(0) ins(%x : tensor<4x8xf32>) outs(%empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// A body op no map kernel computes is reported with the op.
func.func @body_with_atan(%x: tensor<4xf32>) -> tensor<4xf32> {
  %empty = tensor.empty() : tensor<4xf32>
  // expected-error@+1 {{'linalg.generic' op cannot be converted to ipu: its body: 'math.atan' is not an op an elementwise body can compute (arith and math ops on scalars) (at 'math.atan')}}
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%empty : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.atan %a : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Reading index 0 of an axis longer than 1 is a slice, not a broadcast.
func.func @constant_index_slice(%x: tensor<4x3xf32>) -> tensor<4xf32> {
  %empty = tensor.empty() : tensor<4xf32>
  // expected-error@+1 {{'linalg.generic' op cannot be converted to ipu: an input of shape [4, 3] is read at constant index 0 of axis 1 (size 3): a slice, not a broadcast}}
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0, 0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4x3xf32>) outs(%empty : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A reduction over two loops at once.
func.func @reduction_over_two_loops(%x: tensor<4x3xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<f32>) -> tensor<f32>
  // expected-error@+1 {{'linalg.generic' op cannot be converted to ipu: a reduction over loops [0, 1]; the import converts reductions over one loop}}
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%x : tensor<4x3xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// A slice with a dynamic offset is not converted.
func.func @dynamic_slice(%x: tensor<8x16xf32>, %i: index) -> tensor<2x16xf32> {
  // expected-error@+1 {{'tensor.extract_slice' op cannot be converted to ipu: it has dynamic offsets, sizes or strides; only static slices are converted}}
  %0 = tensor.extract_slice %x[%i, 0] [2, 16] [1, 1] : tensor<8x16xf32> to tensor<2x16xf32>
  return %0 : tensor<2x16xf32>
}

// -----

// A strided insert is not converted.
func.func @strided_insert(%x: tensor<8x16xf32>, %w: tensor<2x16xf32>) -> tensor<8x16xf32> {
  // expected-error@+1 {{'tensor.insert_slice' op cannot be converted to ipu: strides [2, 1]: only unit-stride inserts are converted}}
  %0 = tensor.insert_slice %w into %x[0, 0] [2, 16] [2, 1] : tensor<2x16xf32> into tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// Only 2-D convolutions are converted.
func.func @conv_1d(%x: tensor<1x8x2xf32>, %w: tensor<3x2x4xf32>, %init: tensor<1x6x4xf32>) -> tensor<1x6x4xf32> {
  // expected-error@+1 {{'linalg.conv_1d_nwc_wcf' op cannot be converted to ipu: no ipu conversion}}
  %0 = linalg.conv_1d_nwc_wcf {dilations = dense<1> : tensor<1xi64>, strides = dense<1> : tensor<1xi64>} ins(%x, %w : tensor<1x8x2xf32>, tensor<3x2x4xf32>) outs(%init : tensor<1x6x4xf32>) -> tensor<1x6x4xf32>
  return %0 : tensor<1x6x4xf32>
}
