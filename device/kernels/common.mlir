// Helpers shared by every device kernel, pulled in with `// ipu.include "common.mlir"`.
//
// Element precision codes (the `*_precision` parameters of the kernels):
//   0 = f32, 1 = f16, 2 = F143 (f8E4M3FNUZ, bias 8), 3 = F152 (f8E5M2FNUZ, bias 16).
// Tensors live in the tile's SRAM, passed as `memref<?xi8>`; a tensor is a byte offset into it.
// Every value is computed in f32. Loads widen exactly (FP8 codes are multiplied by 2^scale).
// Stores round to nearest, ties to even, and saturate: a finite f16 result beyond 65504 becomes
// +-65504 (infinities stay infinities); an FP8 result beyond the largest code (240 for F143,
// 57344 for F152) or infinite becomes +-largest, NaN becomes the single FNUZ NaN code 0x80, and
// a negative value that rounds to zero becomes +0 (FNUZ has no negative zero).

// 2^e as f32, exact for e in [-126, 127] (the runner keeps scale exponents in [-31, 31]).
func.func private @ipu_pow2(%e: i32) -> f32 {
  %c127 = arith.constant 127 : i32
  %c23 = arith.constant 23 : i32
  %biased = arith.addi %e, %c127 : i32
  %bits = arith.shli %biased, %c23 : i32
  %value = arith.bitcast %bits : i32 to f32
  return %value : f32
}

// Run-time argument `i` as an unsigned byte offset.
func.func private @ipu_arg_index(%args: memref<?xi32>, %i: index) -> index {
  %raw = memref.load %args[%i] : memref<?xi32>
  %offset = arith.index_castui %raw : i32 to index
  return %offset : index
}

// Run-time argument `i` as a signed i32 (scale exponents).
func.func private @ipu_arg_i32(%args: memref<?xi32>, %i: index) -> i32 {
  %raw = memref.load %args[%i] : memref<?xi32>
  return %raw : i32
}

// Bytes per element of a precision code.
func.func private @ipu_bytes(%precision: index) -> index {
  %bytes = scf.index_switch %precision -> index
  case 0 {
    %c4 = arith.constant 4 : index
    scf.yield %c4 : index
  }
  case 1 {
    %c2 = arith.constant 2 : index
    scf.yield %c2 : index
  }
  default {
    %c1 = arith.constant 1 : index
    scf.yield %c1 : index
  }
  return %bytes : index
}

// FNUZ FP8 code -> value * 2^scale. `mant` mantissa bits, exponent `bias`. Exact.
func.func private @ipu_f8_decode(%code: i8, %mant: i32, %bias: i32, %scale: i32) -> f32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c127 = arith.constant 127 : i32
  %c128 = arith.constant 128 : i32
  %u = arith.extui %code : i8 to i32
  %magnitude = arith.andi %u, %c127 : i32
  %exponent = arith.shrui %magnitude, %mant : i32
  %implicit = arith.shli %c1, %mant : i32
  %mant_mask = arith.subi %implicit, %c1 : i32
  %mant_bits = arith.andi %magnitude, %mant_mask : i32
  %is_subnormal = arith.cmpi eq, %exponent, %c0 : i32
  %normal_int = arith.ori %mant_bits, %implicit : i32
  %significand = arith.select %is_subnormal, %mant_bits, %normal_int : i32
  // Subnormals share the smallest normal exponent (1 - bias).
  %exp_clamped = arith.maxsi %exponent, %c1 : i32
  %e0 = arith.subi %exp_clamped, %bias : i32
  %e1 = arith.subi %e0, %mant : i32
  %e2 = arith.addi %e1, %scale : i32
  %sig_f = arith.sitofp %significand : i32 to f32
  %pow = func.call @ipu_pow2(%e2) : (i32) -> f32
  %value = arith.mulf %sig_f, %pow : f32
  %negated = arith.negf %value : f32
  %sign = arith.andi %u, %c128 : i32
  %is_negative = arith.cmpi ne, %sign, %c0 : i32
  %signed = arith.select %is_negative, %negated, %value : f32
  %is_nan = arith.cmpi eq, %u, %c128 : i32
  %nan = arith.constant 0x7FC00000 : f32
  %result = arith.select %is_nan, %nan, %signed : f32
  return %result : f32
}

// value * 2^-scale -> FNUZ FP8 code, round to nearest even, saturating (see the file comment).
func.func private @ipu_f8_encode(%x: f32, %mant: i32, %bias: i32, %largest: f32, %scale: i32) -> i8 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c23 = arith.constant 23 : i32
  %c127 = arith.constant 127 : i32
  %c128 = arith.constant 128 : i32
  %zero = arith.constant 0.0 : f32
  %neg_scale = arith.subi %c0, %scale : i32
  %unscale = func.call @ipu_pow2(%neg_scale) : (i32) -> f32
  %y = arith.mulf %x, %unscale : f32
  %is_nan = arith.cmpf uno, %y, %y : f32
  %abs0 = math.absf %y : f32
  %too_big = arith.cmpf ogt, %abs0, %largest : f32
  %abs1 = arith.select %too_big, %largest, %abs0 : f32
  // NaN is replaced by 0 here so nothing below ever converts a NaN to an integer.
  %abs = arith.select %is_nan, %zero, %abs1 : f32
  %bits = arith.bitcast %abs : f32 to i32
  %biased = arith.shrui %bits, %c23 : i32
  %exponent = arith.subi %biased, %c127 : i32
  %min_exponent = arith.subi %c1, %bias : i32
  %exp_clamped = arith.maxsi %exponent, %min_exponent : i32
  // Quantum of the FP8 grid at this magnitude is 2^(e - mant). Adding 2^(quantum + 23) moves
  // the value into the f32 binade whose ulp is that quantum, so the f32 adder's own
  // round-to-nearest-even does the rounding; subtracting it again is exact.
  %quantum = arith.subi %exp_clamped, %mant : i32
  %magic_exp = arith.addi %quantum, %c23 : i32
  %magic = func.call @ipu_pow2(%magic_exp) : (i32) -> f32
  %shifted = arith.addf %abs, %magic : f32
  %rounded = arith.subf %shifted, %magic : f32
  %rbits = arith.bitcast %rounded : f32 to i32
  %rbiased = arith.shrui %rbits, %c23 : i32
  %rexp = arith.subi %rbiased, %c127 : i32
  %is_normal = arith.cmpi sge, %rexp, %min_exponent : i32
  %code_exp = arith.addi %rexp, %bias : i32
  %code_exp_bits = arith.shli %code_exp, %mant : i32
  %mant_shift = arith.subi %c23, %mant : i32
  %mant_top = arith.shrui %rbits, %mant_shift : i32
  %implicit = arith.shli %c1, %mant : i32
  %mant_mask = arith.subi %implicit, %c1 : i32
  %mant_bits = arith.andi %mant_top, %mant_mask : i32
  %normal_code = arith.ori %code_exp_bits, %mant_bits : i32
  %sub_quantum = arith.subi %min_exponent, %mant : i32
  %neg_sub_quantum = arith.subi %c0, %sub_quantum : i32
  %to_units = func.call @ipu_pow2(%neg_sub_quantum) : (i32) -> f32
  %units = arith.mulf %rounded, %to_units : f32
  %subnormal_code = arith.fptosi %units : f32 to i32
  %code = arith.select %is_normal, %normal_code, %subnormal_code : i32
  %ybits = arith.bitcast %y : f32 to i32
  %is_negative = arith.cmpi slt, %ybits, %c0 : i32
  %nonzero = arith.cmpi ne, %code, %c0 : i32
  %set_sign = arith.andi %is_negative, %nonzero : i1
  %with_sign = arith.ori %code, %c128 : i32
  %signed = arith.select %set_sign, %with_sign, %code : i32
  %final = arith.select %is_nan, %c128, %signed : i32
  %byte = arith.trunci %final : i32 to i8
  return %byte : i8
}

// Element `i` of the tensor at byte offset `base`, widened to f32 (FP8 times 2^scale).
func.func private @ipu_load(%mem: memref<?xi8>, %base: index, %i: index, %precision: index, %scale: i32) -> f32 {
  %bytes = func.call @ipu_bytes(%precision) : (index) -> index
  %rel = arith.muli %i, %bytes : index
  %at = arith.addi %base, %rel : index
  %value = scf.index_switch %precision -> f32
  case 0 {
    %view = memref.view %mem[%at][] : memref<?xi8> to memref<f32>
    %x = memref.load %view[] : memref<f32>
    scf.yield %x : f32
  }
  case 1 {
    %view = memref.view %mem[%at][] : memref<?xi8> to memref<f16>
    %h = memref.load %view[] : memref<f16>
    %x = arith.extf %h : f16 to f32
    scf.yield %x : f32
  }
  case 2 {
    %code = memref.load %mem[%at] : memref<?xi8>
    %m = arith.constant 3 : i32
    %b = arith.constant 8 : i32
    %x = func.call @ipu_f8_decode(%code, %m, %b, %scale) : (i8, i32, i32, i32) -> f32
    scf.yield %x : f32
  }
  default {
    %code = memref.load %mem[%at] : memref<?xi8>
    %m = arith.constant 2 : i32
    %b = arith.constant 16 : i32
    %x = func.call @ipu_f8_decode(%code, %m, %b, %scale) : (i8, i32, i32, i32) -> f32
    scf.yield %x : f32
  }
  return %value : f32
}

// Stores `value` as element `i` of the tensor at byte offset `base` (rounding and saturation
// as in the file comment; FP8 stores value * 2^-scale).
func.func private @ipu_store(%mem: memref<?xi8>, %base: index, %i: index, %precision: index, %scale: i32, %value: f32) {
  %bytes = func.call @ipu_bytes(%precision) : (index) -> index
  %rel = arith.muli %i, %bytes : index
  %at = arith.addi %base, %rel : index
  scf.index_switch %precision
  case 0 {
    %view = memref.view %mem[%at][] : memref<?xi8> to memref<f32>
    memref.store %value, %view[] : memref<f32>
    scf.yield
  }
  case 1 {
    %largest = arith.constant 65504.0 : f32
    %inf = arith.constant 0x7F800000 : f32
    %abs = math.absf %value : f32
    %over = arith.cmpf ogt, %abs, %largest : f32
    %finite = arith.cmpf one, %abs, %inf : f32
    %saturate = arith.andi %over, %finite : i1
    %clamped = math.copysign %largest, %value : f32
    %x = arith.select %saturate, %clamped, %value : f32
    %h = arith.truncf %x : f32 to f16
    %view = memref.view %mem[%at][] : memref<?xi8> to memref<f16>
    memref.store %h, %view[] : memref<f16>
    scf.yield
  }
  case 2 {
    %m = arith.constant 3 : i32
    %b = arith.constant 8 : i32
    %largest = arith.constant 240.0 : f32
    %code = func.call @ipu_f8_encode(%value, %m, %b, %largest, %scale) : (f32, i32, i32, f32, i32) -> i8
    memref.store %code, %mem[%at] : memref<?xi8>
    scf.yield
  }
  default {
    %m = arith.constant 2 : i32
    %b = arith.constant 16 : i32
    %largest = arith.constant 57344.0 : f32
    %code = func.call @ipu_f8_encode(%value, %m, %b, %largest, %scale) : (f32, i32, i32, f32, i32) -> i8
    memref.store %code, %mem[%at] : memref<?xi8>
    scf.yield
  }
  return
}

// Copies one element's bytes (1, 2 or 4) without interpreting them; `zero` stores +0 instead.
func.func private @ipu_move(%mem: memref<?xi8>, %from: index, %to: index, %bytes: index, %zero: i1) {
  scf.index_switch %bytes
  case 4 {
    %src = memref.view %mem[%from][] : memref<?xi8> to memref<i32>
    %dst = memref.view %mem[%to][] : memref<?xi8> to memref<i32>
    %z = arith.constant 0 : i32
    %x = scf.if %zero -> i32 {
      scf.yield %z : i32
    } else {
      %v = memref.load %src[] : memref<i32>
      scf.yield %v : i32
    }
    memref.store %x, %dst[] : memref<i32>
    scf.yield
  }
  case 2 {
    %src = memref.view %mem[%from][] : memref<?xi8> to memref<i16>
    %dst = memref.view %mem[%to][] : memref<?xi8> to memref<i16>
    %z = arith.constant 0 : i16
    %x = scf.if %zero -> i16 {
      scf.yield %z : i16
    } else {
      %v = memref.load %src[] : memref<i16>
      scf.yield %v : i16
    }
    memref.store %x, %dst[] : memref<i16>
    scf.yield
  }
  default {
    %z = arith.constant 0 : i8
    %x = scf.if %zero -> i8 {
      scf.yield %z : i8
    } else {
      %v = memref.load %mem[%from] : memref<?xi8>
      scf.yield %v : i8
    }
    memref.store %x, %mem[%to] : memref<?xi8>
    scf.yield
  }
  return
}

// Index of element (r, c) in a 16-column panel order: columns are grouped 16 at a time; a
// group is `panel_rows` rows of 16 contiguous elements; groups follow each other.
func.func private @ipu_panel_index(%r: index, %c: index, %panel_rows: index) -> index {
  %c16 = arith.constant 16 : index
  %group = arith.divui %c, %c16 : index
  %lane = arith.remui %c, %c16 : index
  %g_rows = arith.muli %group, %panel_rows : index
  %row = arith.addi %g_rows, %r : index
  %row16 = arith.muli %row, %c16 : index
  %index = arith.addi %row16, %lane : index
  return %index : index
}
