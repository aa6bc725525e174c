// GeLU, elementwise, f16 or f32, computed in f32 and rounded once (nearest even, saturating).
//   form 0 (erf):  0.5 * x * (1 + erf(x * 0.70710677))            -- libm erff
//   form 1 (tanh): 0.5 * x * (1 + tanh(0.7978846 * (x + 0.044715 * x^3)))  -- libm tanhf
// Operation order as written (x^3 = x * x * x). In place (src == dst) is allowed.
//
// Run-time args: [src_offset, dst_offset].

// ipu.include "common.mlir"

func.func private @body(%mem: memref<?xi8>, %args: memref<?xi32>, %variant: index) {
  %precision = arith.constant {ipu.param = "precision"} 1 : index
  %form = arith.constant {ipu.param = "form"} 0 : index
  %n = arith.constant {ipu.param = "elements"} 64 : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s0 = arith.constant 0 : i32
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %src = func.call @ipu_arg_index(%args, %c0) : (memref<?xi32>, index) -> index
  %dst = func.call @ipu_arg_index(%args, %c1) : (memref<?xi32>, index) -> index
  scf.for %i = %c0 to %n step %c1 {
    %x = func.call @ipu_load(%mem, %src, %i, %precision, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
    %t = scf.index_switch %form -> f32
    case 0 {
      %inv_sqrt2 = arith.constant 0.70710677 : f32
      %u = arith.mulf %x, %inv_sqrt2 : f32
      %e = math.erf %u : f32
      scf.yield %e : f32
    }
    default {
      %k0 = arith.constant 0.7978846 : f32
      %k1 = arith.constant 0.044715 : f32
      %x2 = arith.mulf %x, %x : f32
      %x3 = arith.mulf %x2, %x : f32
      %cub = arith.mulf %k1, %x3 : f32
      %inner = arith.addf %x, %cub : f32
      %u = arith.mulf %k0, %inner : f32
      %th = math.tanh %u : f32
      scf.yield %th : f32
    }
    %hx = arith.mulf %half, %x : f32
    %onep = arith.addf %one, %t : f32
    %y = arith.mulf %hx, %onep : f32
    func.call @ipu_store(%mem, %dst, %i, %precision, %s0, %y) : (memref<?xi8>, index, index, index, i32, f32) -> ()
  }
  return
}
