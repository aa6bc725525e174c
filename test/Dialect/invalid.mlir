// RUN: ipu-opt %s --split-input-file --verify-diagnostics

// One case per error of the ipu verifiers (dialects/src/ipu/verify.rs) and of the IRDL
// declaration (dialects/irdl/ipu.irdl.mlir); each message is checked in full.

// A transpose flag must be a unit or a bool attribute.
func.func @matmul_transpose_flag_not_unit(%a: tensor<4x16xf16>, %b: tensor<16x8xf16>) -> tensor<4x8xf16> {
  // expected-error@+1 {{'ipu.matmul' op attribute 'transpose_lhs' must be a unit or bool attribute, found 1 : i64}}
  %0 = "ipu.matmul"(%a, %b) {transpose_lhs = 1 : i64} : (tensor<4x16xf16>, tensor<16x8xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

// Same for the right-hand flag.
func.func @matmul_transpose_rhs_flag_not_unit(%a: tensor<4x16xf16>, %b: tensor<8x16xf16>) -> tensor<4x8xf16> {
  // expected-error@+1 {{'ipu.matmul' op attribute 'transpose_rhs' must be a unit or bool attribute, found "yes"}}
  %0 = "ipu.matmul"(%a, %b) {transpose_rhs = "yes"} : (tensor<4x16xf16>, tensor<8x16xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

// Both operands need at least two axes.
func.func @matmul_rank_one_operand(%a: tensor<16xf16>, %b: tensor<16x8xf16>) -> tensor<8xf16> {
  // expected-error@+1 {{'ipu.matmul' op operands must have rank >= 2, found lhs [16] and rhs [16, 8]}}
  %0 = "ipu.matmul"(%a, %b) : (tensor<16xf16>, tensor<16x8xf16>) -> tensor<8xf16>
  return %0 : tensor<8xf16>
}

// -----

// The contracted axes must have the same size.
func.func @matmul_contraction_mismatch(%a: tensor<4x16xf16>, %b: tensor<8x16xf16>) -> tensor<4x16xf16> {
  // expected-error@+1 {{'ipu.matmul' op contraction sizes differ: lhs [4, 16] contracts 16, rhs [8, 16] contracts 8}}
  %0 = "ipu.matmul"(%a, %b) : (tensor<4x16xf16>, tensor<8x16xf16>) -> tensor<4x16xf16>
  return %0 : tensor<4x16xf16>
}

// -----

// A transpose flag changes which axis is contracted, and the message says so.
func.func @matmul_contraction_mismatch_transposed(%a: tensor<4x16xf16>, %b: tensor<16x8xf16>) -> tensor<16x8xf16> {
  // expected-error@+1 {{'ipu.matmul' op contraction sizes differ: lhs [4, 16] (transposed) contracts 4, rhs [16, 8] contracts 16}}
  %0 = "ipu.matmul"(%a, %b) {transpose_lhs} : (tensor<4x16xf16>, tensor<16x8xf16>) -> tensor<16x8xf16>
  return %0 : tensor<16x8xf16>
}

// -----

// Batch axes broadcast like NumPy; 2 and 3 do not.
func.func @matmul_batch_not_broadcastable(%a: tensor<2x4x16xf16>, %b: tensor<3x16x8xf16>) -> tensor<3x4x8xf16> {
  // expected-error@+1 {{'ipu.matmul' op batch axes [2] and [3] do not broadcast}}
  %0 = "ipu.matmul"(%a, %b) : (tensor<2x4x16xf16>, tensor<3x16x8xf16>) -> tensor<3x4x8xf16>
  return %0 : tensor<3x4x8xf16>
}

// -----

// The result shape is the broadcast batch followed by [M, N].
func.func @matmul_result_shape(%a: tensor<4x16xf16>, %b: tensor<16x8xf16>) -> tensor<4x4xf16> {
  // expected-error@+1 {{'ipu.matmul' op result shape [4, 4] does not match the product shape [4, 8]}}
  %0 = "ipu.matmul"(%a, %b) : (tensor<4x16xf16>, tensor<16x8xf16>) -> tensor<4x4xf16>
  return %0 : tensor<4x4xf16>
}

// -----

// Operands must share an element type.
func.func @matmul_operand_elements_differ(%a: tensor<4x16xf16>, %b: tensor<16x8xf32>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'ipu.matmul' op operand element types differ: lhs f16 and rhs f32}}
  %0 = "ipu.matmul"(%a, %b) : (tensor<4x16xf16>, tensor<16x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// An f32 product cannot be narrowed to f16 by the matmul itself.
func.func @matmul_narrow_accumulator(%a: tensor<4x16xf32>, %b: tensor<16x8xf32>) -> tensor<4x8xf16> {
  // expected-error@+1 {{'ipu.matmul' op result element type f16 cannot hold a product of f32 operands}}
  %0 = "ipu.matmul"(%a, %b) : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

// FP8 products accumulate in f16 or f32, never in FP8.
func.func @matmul_fp8_accumulator(%a: tensor<4x16xf8E4M3FNUZ>, %b: tensor<16x8xf8E4M3FNUZ>) -> tensor<4x8xf8E5M2FNUZ> {
  // expected-error@+1 {{'ipu.matmul' op result element type f8E5M2FNUZ cannot hold a product of f8E4M3FNUZ operands}}
  %0 = "ipu.matmul"(%a, %b) : (tensor<4x16xf8E4M3FNUZ>, tensor<16x8xf8E4M3FNUZ>) -> tensor<4x8xf8E5M2FNUZ>
  return %0 : tensor<4x8xf8E5M2FNUZ>
}

// -----

// IRDL checks the operand count before our verifier runs.
func.func @matmul_one_operand(%a: tensor<4x16xf16>) -> tensor<4x8xf16> {
  // expected-error@+1 {{op expects exactly 2 operands, but got 1}}
  %0 = "ipu.matmul"(%a) : (tensor<4x16xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

// Add broadcasts like NumPy; trailing 3 and 4 do not.
func.func @add_not_broadcastable(%a: tensor<2x3xf16>, %b: tensor<4xf16>) -> tensor<2x4xf16> {
  // expected-error@+1 {{'ipu.add' op operand shapes [2, 3] and [4] do not broadcast}}
  %0 = "ipu.add"(%a, %b) : (tensor<2x3xf16>, tensor<4xf16>) -> tensor<2x4xf16>
  return %0 : tensor<2x4xf16>
}

// -----

// The result has the broadcast shape, not one operand's.
func.func @add_result_not_broadcast_shape(%a: tensor<2x1xf16>, %b: tensor<4xf16>) -> tensor<2x1xf16> {
  // expected-error@+1 {{'ipu.add' op result shape [2, 1] does not match the broadcast shape [2, 4]}}
  %0 = "ipu.add"(%a, %b) : (tensor<2x1xf16>, tensor<4xf16>) -> tensor<2x1xf16>
  return %0 : tensor<2x1xf16>
}

// -----

// Add never converts precision.
func.func @add_element_types_differ(%a: tensor<4xf16>, %b: tensor<4xf16>) -> tensor<4xf32> {
  // expected-error@+1 {{'ipu.add' op element types must agree: lhs f16, rhs f16, result f32}}
  %0 = "ipu.add"(%a, %b) : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// GeLU knows two forms.
func.func @gelu_unknown_approximation(%x: tensor<4xf16>) -> tensor<4xf16> {
  // expected-error@+1 {{'ipu.gelu' op attribute 'approximate' must be "erf" or "tanh", found "sigmoid"}}
  %0 = "ipu.gelu"(%x) {approximate = "sigmoid"} : (tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// The form is a string, not a flag.
func.func @gelu_approximation_not_string(%x: tensor<4xf16>) -> tensor<4xf16> {
  // expected-error@+1 {{'ipu.gelu' op attribute 'approximate' must be "erf" or "tanh", found unit}}
  %0 = "ipu.gelu"(%x) {approximate} : (tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// GeLU keeps shape and element type.
func.func @gelu_changes_type(%x: tensor<4xf16>) -> tensor<4xf32> {
  // expected-error@+1 {{'ipu.gelu' op result tensor<4xf32> must have the input's shape and element type tensor<4xf16>}}
  %0 = "ipu.gelu"(%x) : (tensor<4xf16>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Softmax keeps the shape.
func.func @softmax_changes_shape(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  // expected-error@+1 {{'ipu.softmax' op result tensor<8x4xf32> must have the input's shape and element type tensor<4x8xf32>}}
  %0 = "ipu.softmax"(%x) : (tensor<4x8xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// Softmax needs an axis to normalize over.
func.func @softmax_scalar(%x: tensor<f32>) -> tensor<f32> {
  // expected-error@+1 {{'ipu.softmax' op input must have rank >= 1}}
  %0 = "ipu.softmax"(%x) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Gamma has the size of the normalized (last) axis.
func.func @layer_norm_gamma_size(%x: tensor<4x8xf16>, %g: tensor<4xf16>, %b: tensor<8xf16>) -> tensor<4x8xf16> {
  // expected-error@+1 {{'ipu.layer_norm' op gamma must be 1-D of the normalized axis' size 8, found [4]}}
  %0 = "ipu.layer_norm"(%x, %g, %b) {epsilon = 1.0e-05 : f32} : (tensor<4x8xf16>, tensor<4xf16>, tensor<8xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

// Beta too, and it must be 1-D.
func.func @layer_norm_beta_rank(%x: tensor<4x8xf16>, %g: tensor<8xf16>, %b: tensor<1x8xf16>) -> tensor<4x8xf16> {
  // expected-error@+1 {{'ipu.layer_norm' op beta must be 1-D of the normalized axis' size 8, found [1, 8]}}
  %0 = "ipu.layer_norm"(%x, %g, %b) {epsilon = 1.0e-05 : f32} : (tensor<4x8xf16>, tensor<8xf16>, tensor<1x8xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

// Epsilon keeps the division defined: zero is rejected.
func.func @layer_norm_epsilon_zero(%x: tensor<4x8xf16>, %g: tensor<8xf16>) -> tensor<4x8xf16> {
  // expected-error@+1 {{'ipu.layer_norm' op epsilon must be positive and finite, found 0}}
  %0 = "ipu.layer_norm"(%x, %g, %g) {epsilon = 0.0 : f32} : (tensor<4x8xf16>, tensor<8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

// So is infinity.
func.func @layer_norm_epsilon_infinite(%x: tensor<4x8xf16>, %g: tensor<8xf16>) -> tensor<4x8xf16> {
  // expected-error@+1 {{'ipu.layer_norm' op epsilon must be positive and finite, found inf}}
  %0 = "ipu.layer_norm"(%x, %g, %g) {epsilon = 0x7F800000 : f32} : (tensor<4x8xf16>, tensor<8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

// Epsilon is required; IRDL reports its absence.
func.func @layer_norm_epsilon_missing(%x: tensor<4x8xf16>, %g: tensor<8xf16>) -> tensor<4x8xf16> {
  // expected-error@+1 {{'ipu.layer_norm' op attribute "epsilon" is expected but not provided}}
  %0 = "ipu.layer_norm"(%x, %g, %g) : (tensor<4x8xf16>, tensor<8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

// The causal flag is a unit or bool attribute.
func.func @attention_causal_not_flag(%q: tensor<4x8xf16>) -> tensor<4x8xf16> {
  // expected-error@+1 {{'ipu.attention' op attribute 'causal' must be a unit or bool attribute, found 1 : i32}}
  %0 = "ipu.attention"(%q, %q, %q) {causal = 1 : i32} : (tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

// Query, key and value need a sequence axis and a head axis.
func.func @attention_rank_one(%q: tensor<8xf16>, %k: tensor<4x8xf16>) -> tensor<8xf16> {
  // expected-error@+1 {{'ipu.attention' op query must have rank >= 2, found [8]}}
  %0 = "ipu.attention"(%q, %k, %k) : (tensor<8xf16>, tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<8xf16>
  return %0 : tensor<8xf16>
}

// -----

// All three have the same rank.
func.func @attention_ranks_differ(%q: tensor<2x4x8xf16>, %k: tensor<4x8xf16>) -> tensor<2x4x8xf16> {
  // expected-error@+1 {{'ipu.attention' op query, key and value must have the same rank, found [2, 4, 8], [4, 8] and [4, 8]}}
  %0 = "ipu.attention"(%q, %k, %k) : (tensor<2x4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<2x4x8xf16>
  return %0 : tensor<2x4x8xf16>
}

// -----

// Batch (head) axes are not broadcast.
func.func @attention_batch_differs(%q: tensor<2x4x8xf16>, %k: tensor<3x4x8xf16>) -> tensor<2x4x8xf16> {
  // expected-error@+1 {{'ipu.attention' op query, key and value must have the same batch axes}}
  %0 = "ipu.attention"(%q, %k, %k) : (tensor<2x4x8xf16>, tensor<3x4x8xf16>, tensor<3x4x8xf16>) -> tensor<2x4x8xf16>
  return %0 : tensor<2x4x8xf16>
}

// -----

// q k^T contracts the head axis.
func.func @attention_head_sizes_differ(%q: tensor<4x8xf16>, %k: tensor<4x16xf16>) -> tensor<4x16xf16> {
  // expected-error@+1 {{'ipu.attention' op query head size 8 differs from key head size 16}}
  %0 = "ipu.attention"(%q, %k, %k) : (tensor<4x8xf16>, tensor<4x16xf16>, tensor<4x16xf16>) -> tensor<4x16xf16>
  return %0 : tensor<4x16xf16>
}

// -----

// Every key has a value.
func.func @attention_key_value_lengths_differ(%q: tensor<4x8xf16>, %k: tensor<6x8xf16>, %v: tensor<5x8xf16>) -> tensor<4x8xf16> {
  // expected-error@+1 {{'ipu.attention' op key length 6 differs from value length 5}}
  %0 = "ipu.attention"(%q, %k, %v) : (tensor<4x8xf16>, tensor<6x8xf16>, tensor<5x8xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

// The causal mask is square.
func.func @attention_causal_lengths_differ(%q: tensor<4x8xf16>, %k: tensor<6x8xf16>) -> tensor<4x8xf16> {
  // expected-error@+1 {{'ipu.attention' op causal attention needs equal query and key lengths, found 4 and 6}}
  %0 = "ipu.attention"(%q, %k, %k) {causal} : (tensor<4x8xf16>, tensor<6x8xf16>, tensor<6x8xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

// The result is [..., S, E]: query length by value width.
func.func @attention_result_shape(%q: tensor<4x8xf16>, %k: tensor<6x8xf16>, %v: tensor<6x16xf16>) -> tensor<4x8xf16> {
  // expected-error@+1 {{'ipu.attention' op result shape [4, 8] does not match the attention shape [4, 16]}}
  %0 = "ipu.attention"(%q, %k, %v) : (tensor<4x8xf16>, tensor<6x8xf16>, tensor<6x16xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

// An explicit scale is positive.
func.func @attention_negative_scale(%q: tensor<4x8xf16>) -> tensor<4x8xf16> {
  // expected-error@+1 {{'ipu.attention' op scale must be positive and finite, found -0.125}}
  %0 = "ipu.attention"(%q, %q, %q) {scale = -0.125 : f32} : (tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

// Attention does not mix precisions.
func.func @attention_element_types_differ(%q: tensor<4x8xf16>, %k: tensor<4x8xf32>) -> tensor<4x8xf16> {
  // expected-error@+1 {{'ipu.attention' op query, key and value must have the same element type}}
  %0 = "ipu.attention"(%q, %k, %k) : (tensor<4x8xf16>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

// A cast converts precision, not shape.
func.func @cast_changes_shape(%x: tensor<4x8xf16>) -> tensor<32xf32> {
  // expected-error@+1 {{'ipu.cast' op result shape [32] must equal the input shape [4, 8]}}
  %0 = "ipu.cast"(%x) : (tensor<4x8xf16>) -> tensor<32xf32>
  return %0 : tensor<32xf32>
}

// -----

// The FP8 scale is a power-of-two exponent, an integer.
func.func @cast_scale_not_integer(%x: tensor<4xf16>) -> tensor<4xf8E4M3FNUZ> {
  // expected-error@+1 {{'ipu.cast' op attribute 'scale' must be an integer}}
  %0 = "ipu.cast"(%x) {scale = 0.5 : f32} : (tensor<4xf16>) -> tensor<4xf8E4M3FNUZ>
  return %0 : tensor<4xf8E4M3FNUZ>
}

// -----

// A scale needs an FP8 side to apply to.
func.func @cast_scale_without_fp8(%x: tensor<4xf16>) -> tensor<4xf32> {
  // expected-error@+1 {{'ipu.cast' op scale 3 needs an FP8 side, but the cast is f16 -> f32}}
  %0 = "ipu.cast"(%x) {scale = 3 : i32} : (tensor<4xf16>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// The scale exponent fits [-31, 31] (the device's range): 32 is one too many.
func.func @cast_scale_above_range(%x: tensor<4xf16>) -> tensor<4xf8E4M3FNUZ> {
  // expected-error@+1 {{'ipu.cast' op FP8 scale exponent 32 is outside [-31, 31]}}
  %0 = "ipu.cast"(%x) {scale = 32 : i32} : (tensor<4xf16>) -> tensor<4xf8E4M3FNUZ>
  return %0 : tensor<4xf8E4M3FNUZ>
}

// -----

// And -32 one too few (on the FP8 input side this time).
func.func @cast_scale_below_range(%x: tensor<4xf8E5M2FNUZ>) -> tensor<4xf32> {
  // expected-error@+1 {{'ipu.cast' op FP8 scale exponent -32 is outside [-31, 31]}}
  %0 = "ipu.cast"(%x) {scale = -32 : i32} : (tensor<4xf8E5M2FNUZ>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A reshape keeps the element count.
func.func @reshape_changes_element_count(%x: tensor<197x768xf16>) -> tensor<197x12x32xf16> {
  // expected-error@+1 {{'ipu.reshape' op [197, 768] has 151296 elements, [197, 12, 32] has 75648: a reshape keeps the element count}}
  %0 = "ipu.reshape"(%x) : (tensor<197x768xf16>) -> tensor<197x12x32xf16>
  return %0 : tensor<197x12x32xf16>
}

// -----

// ... and the element type; precision goes through ipu.cast.
func.func @reshape_changes_element_type(%x: tensor<4x8xf16>) -> tensor<32xf32> {
  // expected-error@+1 {{'ipu.reshape' op changes the element type from f16 to f32; use ipu.cast}}
  %0 = "ipu.reshape"(%x) : (tensor<4x8xf16>) -> tensor<32xf32>
  return %0 : tensor<32xf32>
}

// -----

// Rearrange changes layout only; precision goes through ipu.cast.
func.func @rearrange_changes_element_type(%x: tensor<4x8xf16>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'ipu.rearrange' op changes the element type from f16 to f32; use ipu.cast}}
  %0 = "ipu.rearrange"(%x) : (tensor<4x8xf16>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// The permutation is a dense i64 array.
func.func @rearrange_permutation_not_dense_array(%x: tensor<4x8xf16>) -> tensor<8x4xf16> {
  // expected-error@+1 {{'ipu.rearrange' op attribute 'permutation' must be array<i64: ...>, found [1, 0]}}
  %0 = "ipu.rearrange"(%x) {permutation = [1, 0]} : (tensor<4x8xf16>) -> tensor<8x4xf16>
  return %0 : tensor<8x4xf16>
}

// -----

// It has one entry per axis.
func.func @rearrange_permutation_too_short(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  // expected-error@+1 {{'ipu.rearrange' op permutation array<i64: 0> has 1 entries for an input of rank 2}}
  %0 = "ipu.rearrange"(%x) {permutation = array<i64: 0>} : (tensor<4x8xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

// Each axis appears once.
func.func @rearrange_permutation_repeats_axis(%x: tensor<4x8xf16>) -> tensor<4x4xf16> {
  // expected-error@+1 {{'ipu.rearrange' op array<i64: 0, 0> is not a permutation of 0..2}}
  %0 = "ipu.rearrange"(%x) {permutation = array<i64: 0, 0>} : (tensor<4x8xf16>) -> tensor<4x4xf16>
  return %0 : tensor<4x4xf16>
}

// -----

// Axes are in range.
func.func @rearrange_permutation_out_of_range(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  // expected-error@+1 {{'ipu.rearrange' op array<i64: 0, 2> is not a permutation of 0..2}}
  %0 = "ipu.rearrange"(%x) {permutation = array<i64: 0, 2>} : (tensor<4x8xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

// The result shape is the input's, permuted.
func.func @rearrange_result_not_permuted(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  // expected-error@+1 {{'ipu.rearrange' op result shape [4, 8] must be the (permuted) input shape [8, 4]}}
  %0 = "ipu.rearrange"(%x) {permutation = array<i64: 1, 0>} : (tensor<4x8xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

// Without a permutation, the shape is unchanged.
func.func @rearrange_reshapes(%x: tensor<4x8xf16>) -> tensor<32xf16> {
  // expected-error@+1 {{'ipu.rearrange' op result shape [32] must be the (permuted) input shape [4, 8]}}
  %0 = "ipu.rearrange"(%x) : (tensor<4x8xf16>) -> tensor<32xf16>
  return %0 : tensor<32xf16>
}

// -----

func.func private @repeat_body(%x: tensor<4xf16>) -> tensor<4xf16>

// A loop runs at least once.
func.func @repeat_count_zero(%x: tensor<4xf16>) -> tensor<4xf16> {
  // expected-error@+1 {{'ipu.repeat' op count must be at least 1, found 0}}
  %0 = "ipu.repeat"(%x) {body = @repeat_body, count = 0 : i64} : (tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

func.func private @repeat_body(%x: tensor<4xf16>) -> tensor<4xf16>

// The body is a flat symbol naming a function of this module.
func.func @repeat_nested_body_symbol(%x: tensor<4xf16>) -> tensor<4xf16> {
  // expected-error@+1 {{'ipu.repeat' op requires a symbol attribute 'body'}}
  %0 = "ipu.repeat"(%x) {body = @outer::@repeat_body, count = 2 : i64} : (tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// The body function must exist.
func.func @repeat_missing_body(%x: tensor<4xf16>) -> tensor<4xf16> {
  // expected-error@+1 {{'ipu.repeat' op body @nowhere is not a func.func in this module}}
  %0 = "ipu.repeat"(%x) {body = @nowhere, count = 2 : i64} : (tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

func.func private @repeat_body(%x: tensor<4xf16>) -> tensor<4xf16>

// The carried values are the body's inputs.
func.func @repeat_carried_not_body_inputs(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'ipu.repeat' op carried values (tensor<4xf32>) do not match the inputs of @repeat_body (tensor<4xf16>)}}
  %0 = "ipu.repeat"(%x) {body = @repeat_body, count = 2 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func private @repeat_widening_body(%x: tensor<4xf16>) -> tensor<4xf32>

// Carried types flow through the body unchanged, or the next iteration could not take them.
func.func @repeat_body_changes_carried_type(%x: tensor<4xf16>) -> tensor<4xf32> {
  // expected-error@+1 {{'ipu.repeat' op carried types must flow through @repeat_widening_body unchanged: inputs (tensor<4xf16>), body results (tensor<4xf32>), op results (tensor<4xf32>)}}
  %0 = "ipu.repeat"(%x) {body = @repeat_widening_body, count = 2 : i64} : (tensor<4xf16>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func private @repeat_pair_body(%x: tensor<4xf16>, %y: tensor<4xf16>) -> (tensor<4xf16>, tensor<4xf16>)

// The op results are the carried types too: one per carried value.
func.func @repeat_results_differ(%x: tensor<4xf16>, %y: tensor<4xf16>) -> tensor<4xf16> {
  // expected-error@+1 {{'ipu.repeat' op carried types must flow through @repeat_pair_body unchanged: inputs (tensor<4xf16>, tensor<4xf16>), body results (tensor<4xf16>, tensor<4xf16>), op results (tensor<4xf16>)}}
  %0 = "ipu.repeat"(%x, %y) {body = @repeat_pair_body, count = 2 : i64} : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// IRDL binds one type to the variadic operand constraint of ipu.repeat, so carried values of
// different types are rejected before our verifier runs (a limit of the IRDL declaration).
func.func @repeat_carried_types_differ(%x: tensor<4xf16>, %y: tensor<2xf32>) -> tensor<4xf16> {
  // expected-error@+1 {{expected 'tensor<4xf16>' but got 'tensor<2xf32>'}}
  %0:2 = "ipu.repeat"(%x, %y) {body = @nowhere, count = 2 : i64} : (tensor<4xf16>, tensor<2xf32>) -> (tensor<4xf16>, tensor<2xf32>)
  return %0#0 : tensor<4xf16>
}

// -----

func.func private @repeat_dynamic_body(%x: tensor<?xf16>) -> tensor<?xf16>

// Carried values are ipu tensors: static shapes.
func.func @repeat_dynamic_carried(%x: tensor<?xf16>) -> tensor<?xf16> {
  // expected-error@+1 {{'ipu.repeat' op carried value #0: dimension 0 of tensor<?xf16> is dynamic; ipu tensors have static shapes}}
  %0 = "ipu.repeat"(%x) {body = @repeat_dynamic_body, count = 2 : i64} : (tensor<?xf16>) -> tensor<?xf16>
  return %0 : tensor<?xf16>
}

// -----

// The count attribute is required; IRDL reports its absence.
func.func private @repeat_body(%x: tensor<4xf16>) -> tensor<4xf16>
func.func @repeat_count_missing(%x: tensor<4xf16>) -> tensor<4xf16> {
  // expected-error@+1 {{'ipu.repeat' op attribute "count" is expected but not provided}}
  %0 = "ipu.repeat"(%x) {body = @repeat_body} : (tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// ipu tensors are ranked; IRDL's base constraint already says so.
func.func @unranked_operand(%x: tensor<*xf16>) -> tensor<4xf16> {
  // expected-error@+1 {{expected base type 'builtin.tensor' but got 'builtin.unranked_tensor'}}
  %0 = "ipu.softmax"(%x) : (tensor<*xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// ipu tensors have static shapes.
func.func @dynamic_operand(%a: tensor<?x16xf16>, %b: tensor<16x8xf16>) -> tensor<4x8xf16> {
  // expected-error@+1 {{'ipu.matmul' op lhs: dimension 0 of tensor<?x16xf16> is dynamic; ipu tensors have static shapes}}
  %0 = "ipu.matmul"(%a, %b) : (tensor<?x16xf16>, tensor<16x8xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

// The result is checked too.
func.func @dynamic_result(%x: tensor<4xf16>) -> tensor<?xf16> {
  // expected-error@+1 {{'ipu.gelu' op result: dimension 0 of tensor<?xf16> is dynamic; ipu tensors have static shapes}}
  %0 = "ipu.gelu"(%x) : (tensor<4xf16>) -> tensor<?xf16>
  return %0 : tensor<?xf16>
}

// -----

// bf16 is not an IPU element type here.
func.func @bf16_operand(%a: tensor<4xbf16>, %b: tensor<4xbf16>) -> tensor<4xbf16> {
  // expected-error@+1 {{'ipu.add' op lhs: element type bf16 is not one of f32, f16, f8E4M3FNUZ, f8E5M2FNUZ}}
  %0 = "ipu.add"(%a, %b) : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

// Nor are integers.
func.func @integer_operands(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error@+1 {{'ipu.add' op lhs: element type i32 is not one of f32, f16, f8E4M3FNUZ, f8E5M2FNUZ}}
  %0 = "ipu.add"(%a, %b) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// Only the FNUZ FP8 encodings are IPU types; f8E4M3FN is not.
func.func @non_fnuz_fp8_result(%x: tensor<4xf16>) -> tensor<4xf8E4M3FN> {
  // expected-error@+1 {{'ipu.cast' op result: element type f8E4M3FN is not one of f32, f16, f8E4M3FNUZ, f8E5M2FNUZ}}
  %0 = "ipu.cast"(%x) : (tensor<4xf16>) -> tensor<4xf8E4M3FN>
  return %0 : tensor<4xf8E4M3FN>
}

// -----

// #ipu.format knows four element orders.
func.func @format_unknown_order(%x: tensor<4x8xf16>) -> tensor<4x8xf16, #ipu.format<"zigzag", [4, 8], [1, 1], [0, 0], "standard", 0>> {
  // expected-error@+1 {{'ipu.rearrange' op result: bad #ipu.format encoding: unknown element order "zigzag" (expected one of row_major, amp_left, amp_right, amp_output) at offset 20 in '#ipu.format<"zigzag", [4, 8], [1, 1], [0, 0], "standard", 0 : i64>'}}
  %0 = "ipu.rearrange"(%x) : (tensor<4x8xf16>) -> tensor<4x8xf16, #ipu.format<"zigzag", [4, 8], [1, 1], [0, 0], "standard", 0>>
  return %0 : tensor<4x8xf16, #ipu.format<"zigzag", [4, 8], [1, 1], [0, 0], "standard", 0>>
}

// -----

// and two memory classes.
func.func @format_unknown_memory(%x: tensor<4x8xf16>) -> tensor<4x8xf16, #ipu.format<"amp_left", [4, 8], [1, 1], [0, 0], "fast", 0>> {
  // expected-error@+1 {{'ipu.rearrange' op result: bad #ipu.format encoding: unknown memory class "fast" (expected standard or interleaved) at offset 54 in '#ipu.format<"amp_left", [4, 8], [1, 1], [0, 0], "fast", 0 : i64>'}}
  %0 = "ipu.rearrange"(%x) : (tensor<4x8xf16>) -> tensor<4x8xf16, #ipu.format<"amp_left", [4, 8], [1, 1], [0, 0], "fast", 0>>
  return %0 : tensor<4x8xf16, #ipu.format<"amp_left", [4, 8], [1, 1], [0, 0], "fast", 0>>
}

// -----

// An operator plan must be a plan of some strategy: its kind is one the planner has.
func.func @plan_unknown_kind(%a: tensor<4x16xf16>, %b: tensor<16x8xf16>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'ipu.matmul' op malformed plan: unknown plan kind "gemm" (known: gemm_output_stationary, gemm_k_split, gemm_waves, gemm_activation_stationary, gemm_general,}}
  %0 = "ipu.matmul"(%a, %b) {plan = #ipu.plan<"gemm", {}>} : (tensor<4x16xf16>, tensor<16x8xf16>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Every parameter of the kind is present, with its type and range.
func.func @plan_missing_parameter(%a: tensor<4x16xf16>, %b: tensor<16x8xf16>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'ipu.matmul' op malformed plan: plan "gemm_output_stationary": missing parameter 'k_block'}}
  %0 = "ipu.matmul"(%a, %b) {plan = #ipu.plan<"gemm_output_stationary", {grid = [1, 2, 2, 1], tiles = 4 : i64}>} : (tensor<4x16xf16>, tensor<16x8xf16>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// A grid of zero tiles is no grid.
func.func @plan_zero_grid(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  // expected-error@+1 {{'ipu.gelu' op malformed plan: plan "pointwise_gelu": parameter 'grid' = 0 is outside 1..2^32}}
  %0 = "ipu.gelu"(%x) {plan = #ipu.plan<"pointwise_gelu", {grid = [1, 0, 1], order = "row_major", precision = "f16", tiles = 0 : i64}>} : (tensor<4x8xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

// Parameters the kind does not have are refused, not ignored.
func.func @plan_unknown_parameter(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  // expected-error@+1 {{'ipu.gelu' op malformed plan: plan "pointwise_gelu": unknown parameter 'fast'}}
  %0 = "ipu.gelu"(%x) {plan = #ipu.plan<"pointwise_gelu", {fast, in_place, precision = "f16"}>} : (tensor<4x8xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

// A zero-sized dimension (here K = 0) is refused: every planner and kernel needs extents >= 1.
func.func @zero_contraction(%a: tensor<4x0xf16>, %b: tensor<0x8xf16>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'ipu.matmul' op lhs: dimension 1 of [4, 0] is 0; ipu ops need every dimension >= 1}}
  %0 = "ipu.matmul"(%a, %b) : (tensor<4x0xf16>, tensor<0x8xf16>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Sizes whose byte count overflows (or exceeds any device by far) are refused before any
// planner multiplies them.
func.func @huge(%a: tensor<4611686018427387904x16xf16>, %b: tensor<16x8xf16>) -> tensor<4611686018427387904x8xf32> {
  // expected-error@+1 {{'ipu.matmul' op lhs: [4611686018427387904, 16] of f16 is over the 1099511627776 bytes an ipu tensor may hold}}
  %0 = "ipu.matmul"(%a, %b) : (tensor<4611686018427387904x16xf16>, tensor<16x8xf16>) -> tensor<4611686018427387904x8xf32>
  return %0 : tensor<4611686018427387904x8xf32>
}

// -----

// An empty string attribute is read as the empty string, never a crash.
func.func @gelu_empty_form(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  // expected-error@+1 {{'ipu.gelu' op attribute 'approximate' must be "erf" or "tanh", found ""}}
  %0 = "ipu.gelu"(%x) {approximate = ""} : (tensor<4x8xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

// A repeat body that reaches its own repeat (here through a second body) would make every
// planner and the lowering recurse without end: refused at the repeat.
func.func @ping(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  // expected-error@+1 {{'ipu.repeat' op body @pong repeats itself (@pong -> @ping -> @pong): a repeat body may not reach its own repeat}}
  %0 = "ipu.repeat"(%x) {body = @pong, count = 2 : i64} : (tensor<4x8xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}
func.func @pong(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  // expected-error@+1 {{'ipu.repeat' op body @ping repeats itself (@ping -> @pong -> @ping): a repeat body may not reach its own repeat}}
  %0 = "ipu.repeat"(%x) {body = @ping, count = 2 : i64} : (tensor<4x8xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

// An attention scale that is not a float is refused, not ignored.
func.func @attention_scale_string(%q: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error@+1 {{'ipu.attention' op attribute 'scale' must be a float, found "x"}}
  %0 = "ipu.attention"(%q, %q, %q) {scale = "x"} : (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @attention_scale_integer(%q: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error@+1 {{'ipu.attention' op attribute 'scale' must be a float, found 3 : i64}}
  %0 = "ipu.attention"(%q, %q, %q) {scale = 3 : i64} : (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

// #ipu.format sizes are counts: a negative block size is refused.
func.func @format_negative_block(%x: tensor<4x8xf16>) -> tensor<4x8xf16, #ipu.format<"row_major", [-4, 8], [1, 1], [0, 0], "standard", 0>> {
  // expected-error@+1 {{bad #ipu.format encoding: block size -4 is outside 0..2^32 in [-4, 8]}}
  %0 = "ipu.rearrange"(%x) : (tensor<4x8xf16>) -> tensor<4x8xf16, #ipu.format<"row_major", [-4, 8], [1, 1], [0, 0], "standard", 0>>
  return %0 : tensor<4x8xf16, #ipu.format<"row_major", [-4, 8], [1, 1], [0, 0], "standard", 0>>
}

// -----

// A map's inputs have the result's shape: broadcasting is ipu.broadcast.
func.func private @add2(%a: f32, %b: f32) -> f32 {
  %s = arith.addf %a, %b : f32
  func.return %s : f32
}
func.func @map_input_not_result_shape(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x16xf32> {
  // expected-error@+1 {{'ipu.map' op input #0 has shape [4, 8], not the result's [4, 16]; broadcast it with ipu.broadcast}}
  %0 = "ipu.map"(%x, %y) {body = @add2} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// The body takes one float per input (then none or one index per result axis).
func.func private @one_arg(%a: f32) -> f32 {
  func.return %a : f32
}
func.func @map_body_arity(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'ipu.map' op body @one_arg has signature (f32) -> (f32); a map with 2 inputs and a rank-2 result needs 2 float arguments, then none or 2 index arguments, and one float result}}
  %0 = "ipu.map"(%x, %y) {body = @one_arg} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// The body must be a function of the module.
func.func @map_body_missing(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'ipu.map' op body @nowhere is not a func.func in this module}}
  %0 = "ipu.map"(%x) {body = @nowhere} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// A broadcast follows NumPy's rule.
func.func @broadcast_not_numpy(%x: tensor<3xf32>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'ipu.broadcast' op input shape [3] does not broadcast to the result shape [4, 8]}}
  %0 = "ipu.broadcast"(%x) : (tensor<3xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// A reduction keeps its last axis as 1.
func.func @reduce_drops_axis(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'ipu.reduce' op result shape [4] is not the input shape [4, 8] with its last axis 1}}
  %0 = "ipu.reduce"(%x) {combiner = "add"} : (tensor<4x8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// The combiner is one of four.
func.func @reduce_unknown_combiner(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  // expected-error@+1 {{'ipu.reduce' op combiner must be one of add, mul, max, min, found mean}}
  %0 = "ipu.reduce"(%x) {combiner = "mean"} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}

// -----

// A window must lie inside the input: 4 rows from 1 by 2 end at row 7 of 6.
func.func @slice_past_the_end(%x: tensor<6x8xf16>) -> tensor<4x8xf16> {
  // expected-error@+1 {{'ipu.slice' op axis 0: 4 elements from 1 by 2 end at 7, past the input's 6 ([6, 8])}}
  %0 = "ipu.slice"(%x) {offsets = array<i64: 1, 0>, strides = array<i64: 2, 1>} : (tensor<6x8xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

func.func @slice_zero_stride(%x: tensor<6x8xf16>) -> tensor<2x8xf16> {
  // expected-error@+1 {{'ipu.slice' op stride 0 on axis 0 must be at least 1}}
  %0 = "ipu.slice"(%x) {offsets = array<i64: 0, 0>, strides = array<i64: 0, 1>} : (tensor<6x8xf16>) -> tensor<2x8xf16>
  return %0 : tensor<2x8xf16>
}

// -----

func.func @slice_offsets_rank(%x: tensor<6x8xf16>) -> tensor<2x8xf16> {
  // expected-error@+1 {{'ipu.slice' op offsets array<i64: 0> has 1 entries for an input of rank 2}}
  %0 = "ipu.slice"(%x) {offsets = array<i64: 0>, strides = array<i64: 1, 1>} : (tensor<6x8xf16>) -> tensor<2x8xf16>
  return %0 : tensor<2x8xf16>
}

// -----

func.func @slice_rank(%x: tensor<6x8xf16>) -> tensor<8xf16> {
  // expected-error@+1 {{'ipu.slice' op result [8] must have the input's rank 2}}
  %0 = "ipu.slice"(%x) {offsets = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<6x8xf16>) -> tensor<8xf16>
  return %0 : tensor<8xf16>
}

// -----

// IRDL requires the attributes.
func.func @slice_without_strides(%x: tensor<6x8xf16>) -> tensor<2x8xf16> {
  // expected-error@+1 {{attribute "strides" is expected but not provided}}
  %0 = "ipu.slice"(%x) {offsets = array<i64: 0, 0>} : (tensor<6x8xf16>) -> tensor<2x8xf16>
  return %0 : tensor<2x8xf16>
}

// -----

// The parts agree on every axis but the joined one.
func.func @concat_parts_differ(%a: tensor<2x8xf16>, %b: tensor<3x4xf16>) -> tensor<5x8xf16> {
  // expected-error@+1 {{'ipu.concat' op [2, 8] and [3, 4] differ on an axis other than 0}}
  %0 = "ipu.concat"(%a, %b) {axis = 0 : i64} : (tensor<2x8xf16>, tensor<3x4xf16>) -> tensor<5x8xf16>
  return %0 : tensor<5x8xf16>
}

// -----

func.func @concat_result_shape(%a: tensor<2x8xf16>, %b: tensor<3x8xf16>) -> tensor<5x16xf16> {
  // expected-error@+1 {{'ipu.concat' op result shape [5, 16] must be [5, 8] ([2, 8] and [3, 8] joined on axis 0)}}
  %0 = "ipu.concat"(%a, %b) {axis = 0 : i64} : (tensor<2x8xf16>, tensor<3x8xf16>) -> tensor<5x16xf16>
  return %0 : tensor<5x16xf16>
}

// -----

func.func @concat_axis(%a: tensor<2x8xf16>, %b: tensor<3x8xf16>) -> tensor<5x8xf16> {
  // expected-error@+1 {{'ipu.concat' op axis 2 is not an axis of rank 2}}
  %0 = "ipu.concat"(%a, %b) {axis = 2 : i64} : (tensor<2x8xf16>, tensor<3x8xf16>) -> tensor<5x8xf16>
  return %0 : tensor<5x8xf16>
}

// -----

func.func private @scan_layer(%x: tensor<4x8xf16>, %w: tensor<8x8xf16>) -> tensor<4x8xf16>

// A stack's leading axis is the count: one slice per iteration.
func.func @scan_stack_count(%x: tensor<4x8xf16>, %ws: tensor<2x8x8xf16>) -> tensor<4x8xf16> {
  %s = "ipu.stack"(%ws) : (tensor<2x8x8xf16>) -> !ipu.stacked
  // expected-error@+1 {{'ipu.scan' op stack #1 has shape [2, 8, 8]: its leading axis must be the count, 3 (slice i is iteration i's)}}
  %0 = "ipu.scan"(%x, %s) {body = @scan_layer, count = 3 : i64} : (tensor<4x8xf16>, !ipu.stacked) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

func.func private @scan_layer(%x: tensor<4x8xf16>, %w: tensor<8x4xf16>) -> tensor<4x8xf16>

// The body takes the carried value, then one slice of each stack.
func.func @scan_body_inputs(%x: tensor<4x8xf16>, %ws: tensor<3x8x8xf16>) -> tensor<4x8xf16> {
  %s = "ipu.stack"(%ws) : (tensor<3x8x8xf16>) -> !ipu.stacked
  // expected-error@+1 {{'ipu.scan' op the carried value and the stacks' slices (tensor<4x8xf16>, tensor<8x8xf16>) do not match the inputs of @scan_layer (tensor<4x8xf16>, tensor<8x4xf16>)}}
  %0 = "ipu.scan"(%x, %s) {body = @scan_layer, count = 3 : i64} : (tensor<4x8xf16>, !ipu.stacked) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

func.func private @scan_layer(%x: tensor<4x8xf16>, %w: tensor<8x8xf16>) -> tensor<4x8xf32>

// The carried type flows through the body unchanged.
func.func @scan_body_result(%x: tensor<4x8xf16>, %ws: tensor<3x8x8xf16>) -> tensor<4x8xf16> {
  %s = "ipu.stack"(%ws) : (tensor<3x8x8xf16>) -> !ipu.stacked
  // expected-error@+1 {{'ipu.scan' op the carried type must flow through @scan_layer unchanged: carried tensor<4x8xf16>, body results (tensor<4x8xf32>), op result tensor<4x8xf16>}}
  %0 = "ipu.scan"(%x, %s) {body = @scan_layer, count = 3 : i64} : (tensor<4x8xf16>, !ipu.stacked) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

func.func private @scan_layer(%x: tensor<4x8xf16>, %w: tensor<8x8xf16>) -> tensor<4x8xf16>

// A stack is made by ipu.stack (its tensor gives the slices' type).
func.func @scan_stack_argument(%x: tensor<4x8xf16>, %s: !ipu.stacked) -> tensor<4x8xf16> {
  // expected-error@+1 {{'ipu.scan' op stack #1 is not made by an ipu.stack}}
  %0 = "ipu.scan"(%x, %s) {body = @scan_layer, count = 3 : i64} : (tensor<4x8xf16>, !ipu.stacked) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

func.func private @scan_layer(%x: tensor<4x8xf16>) -> tensor<4x8xf16>

// A scan runs at least once.
func.func @scan_count_zero(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  // expected-error@+1 {{'ipu.scan' op count must be at least 1, found 0}}
  %0 = "ipu.scan"(%x) {body = @scan_layer, count = 0 : i64} : (tensor<4x8xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

// A stack needs a leading axis.
func.func @stack_scalar(%x: tensor<f16>) -> !ipu.stacked {
  // expected-error@+1 {{'ipu.stack' op the stacked tensor needs a leading axis (its slices)}}
  %s = "ipu.stack"(%x) : (tensor<f16>) -> !ipu.stacked
  return %s : !ipu.stacked
}
