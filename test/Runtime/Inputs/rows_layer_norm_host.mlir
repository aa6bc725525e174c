// A layer norm of a host input with argument scale and shift (test/Runtime/pointwise-plans.test).
func.func @ln(%x: tensor<64x256xf16>, %s: tensor<256xf16>, %t: tensor<256xf16>) -> tensor<64x256xf16> {
  %0 = "ipu.layer_norm"(%x, %s, %t) {epsilon = 1.0e-05 : f32} : (tensor<64x256xf16>, tensor<256xf16>, tensor<256xf16>) -> tensor<64x256xf16>
  return %0 : tensor<64x256xf16>
}
