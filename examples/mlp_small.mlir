// A small transformer MLP block (batch 2 x 48 tokens x 128 hidden -> 256, GeLU tanh, -> 128):
// the SigLIP MLP's structure at a size the GEMM lowering places on 64 tiles without K panels.
//   ipu compile examples/mlp_small.mlir --tiles 64 -o mlp.ipuexe && ipu run mlp.ipuexe
func.func @mlp(%x: tensor<2x48x128xf16>, %w1: tensor<128x256xf16>, %b1: tensor<256xf16>,
               %w2: tensor<256x128xf16>, %b2: tensor<128xf16>) -> tensor<2x48x128xf16> {
  %h = "ipu.matmul"(%x, %w1) : (tensor<2x48x128xf16>, tensor<128x256xf16>) -> tensor<2x48x256xf16>
  %hb = "ipu.add"(%h, %b1) : (tensor<2x48x256xf16>, tensor<256xf16>) -> tensor<2x48x256xf16>
  %g = "ipu.gelu"(%hb) {approximate = "tanh"} : (tensor<2x48x256xf16>) -> tensor<2x48x256xf16>
  %o = "ipu.matmul"(%g, %w2) : (tensor<2x48x256xf16>, tensor<256x128xf16>) -> tensor<2x48x128xf16>
  %ob = "ipu.add"(%o, %b2) : (tensor<2x48x128xf16>, tensor<128xf16>) -> tensor<2x48x128xf16>
  return %ob : tensor<2x48x128xf16>
}
