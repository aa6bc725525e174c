// Row layer norm over `cols`, row-major, f16 or f32, computed in f32:
//   mean = (sum_j x[j]) / cols;  var = (sum_j (x[j] - mean)^2) / cols   (sums in order j = 0..)
//   y[j] = (x[j] - mean) * (1 / sqrt(var + eps)) * gamma[j] + beta[j]
// eps = f32(epsilon_nano) * 1e-9. gamma and beta are `cols` vectors in the same precision.
// Each y is rounded once (nearest even, saturating). In place (src == dst) is allowed.
//
// Run-time args: [src_offset, gamma_offset, beta_offset, dst_offset].

// ipu.include "common.mlir"

func.func private @body(%mem: memref<?xi8>, %args: memref<?xi32>, %variant: index) {
  %precision = arith.constant {ipu.param = "precision"} 1 : index
  %rows = arith.constant {ipu.param = "rows"} 4 : index
  %cols = arith.constant {ipu.param = "cols"} 64 : index
  %epsilon_nano = arith.constant {ipu.param = "epsilon_nano"} 10000 : i32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %s0 = arith.constant 0 : i32
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %nano = arith.constant 1.0e-9 : f32
  %src = func.call @ipu_arg_index(%args, %c0) : (memref<?xi32>, index) -> index
  %gamma = func.call @ipu_arg_index(%args, %c1) : (memref<?xi32>, index) -> index
  %beta = func.call @ipu_arg_index(%args, %c2) : (memref<?xi32>, index) -> index
  %dst = func.call @ipu_arg_index(%args, %c3) : (memref<?xi32>, index) -> index
  %eps_units = arith.sitofp %epsilon_nano : i32 to f32
  %eps = arith.mulf %eps_units, %nano : f32
  %cols_i = arith.index_castui %cols : index to i32
  %n = arith.uitofp %cols_i : i32 to f32
  scf.for %r = %c0 to %rows step %c1 {
    %base = arith.muli %r, %cols : index
    %sum = scf.for %j = %c0 to %cols step %c1 iter_args(%acc = %zero) -> (f32) {
      %i = arith.addi %base, %j : index
      %x = func.call @ipu_load(%mem, %src, %i, %precision, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
      %a = arith.addf %acc, %x : f32
      scf.yield %a : f32
    }
    %mean = arith.divf %sum, %n : f32
    %sq = scf.for %j = %c0 to %cols step %c1 iter_args(%acc = %zero) -> (f32) {
      %i = arith.addi %base, %j : index
      %x = func.call @ipu_load(%mem, %src, %i, %precision, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
      %d = arith.subf %x, %mean : f32
      %d2 = arith.mulf %d, %d : f32
      %a = arith.addf %acc, %d2 : f32
      scf.yield %a : f32
    }
    %var = arith.divf %sq, %n : f32
    %ve = arith.addf %var, %eps : f32
    %sd = math.sqrt %ve : f32
    %inv = arith.divf %one, %sd : f32
    scf.for %j = %c0 to %cols step %c1 {
      %i = arith.addi %base, %j : index
      %x = func.call @ipu_load(%mem, %src, %i, %precision, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
      %g = func.call @ipu_load(%mem, %gamma, %j, %precision, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
      %b = func.call @ipu_load(%mem, %beta, %j, %precision, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
      %d = arith.subf %x, %mean : f32
      %xn = arith.mulf %d, %inv : f32
      %xg = arith.mulf %xn, %g : f32
      %y = arith.addf %xg, %b : f32
      func.call @ipu_store(%mem, %dst, %i, %precision, %s0, %y) : (memref<?xi8>, index, index, index, i32, f32) -> ()
    }
  }
  return
}
