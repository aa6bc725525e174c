// examples/mlp_small.mlir (a transformer MLP block: matmul, bias add, GeLU tanh, matmul, bias
// add on 2 x 48 tokens, hidden 256, output 128) with an input width of 120 instead of 128:
// x is 2x48x120 and w1 120x256. K = 120 is not a multiple of 16: the split GEMM takes the
// first matmul only beside the other strategies (the host pads K; its result is read on the
// device), and would win by cost, as it would the second (a row-major left operand). Tests
// pin the first to the output-stationary GEMM (host_order false: K padded and, under FP8,
// cast on the device) and the second to the general matmul (mlp_small_k120-general.json) to
// keep the row-major chain (the second GEMM fetching row blocks of the first's result, bias
// broadcast phases, AMP packs on the device, and under FP8 device casts) covered end to end,
// in F16 and under FP8.
func.func @mlp(%x: tensor<2x48x120xf16>, %w1: tensor<120x256xf16>, %b1: tensor<256xf16>,
               %w2: tensor<256x128xf16>, %b2: tensor<128xf16>) -> tensor<2x48x128xf16> {
  %h = "ipu.matmul"(%x, %w1) : (tensor<2x48x120xf16>, tensor<120x256xf16>) -> tensor<2x48x256xf16>
  %hb = "ipu.add"(%h, %b1) : (tensor<2x48x256xf16>, tensor<256xf16>) -> tensor<2x48x256xf16>
  %g = "ipu.gelu"(%hb) {approximate = "tanh"} : (tensor<2x48x256xf16>) -> tensor<2x48x256xf16>
  %o = "ipu.matmul"(%g, %w2) : (tensor<2x48x256xf16>, tensor<256x128xf16>) -> tensor<2x48x128xf16>
  %ob = "ipu.add"(%o, %b2) : (tensor<2x48x128xf16>, tensor<128xf16>) -> tensor<2x48x128xf16>
  return %ob : tensor<2x48x128xf16>
}
