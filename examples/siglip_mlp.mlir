// The SigLIP vision MLP block (batch 4 x 729 tokens x 1152 hidden -> 4304 -> 1152, GeLU tanh),
// the workload ipu-stack measured at 1.269 ms on a C600. The weights are function arguments:
// the host streams them with the input in every `run` call (a constant weight would be
// written once, at `initialize`).
func.func @siglip_mlp(%x: tensor<4x729x1152xf16>, %w1: tensor<1152x4304xf16>, %b1: tensor<4304xf16>,
                      %w2: tensor<4304x1152xf16>, %b2: tensor<1152xf16>) -> tensor<4x729x1152xf16> {
  %h = "ipu.matmul"(%x, %w1) : (tensor<4x729x1152xf16>, tensor<1152x4304xf16>) -> tensor<4x729x4304xf16>
  %hb = "ipu.add"(%h, %b1) : (tensor<4x729x4304xf16>, tensor<4304xf16>) -> tensor<4x729x4304xf16>
  %g = "ipu.gelu"(%hb) {approximate = "tanh"} : (tensor<4x729x4304xf16>) -> tensor<4x729x4304xf16>
  %o = "ipu.matmul"(%g, %w2) : (tensor<4x729x4304xf16>, tensor<4304x1152xf16>) -> tensor<4x729x1152xf16>
  %ob = "ipu.add"(%o, %b2) : (tensor<4x729x1152xf16>, tensor<1152xf16>) -> tensor<4x729x1152xf16>
  return %ob : tensor<4x729x1152xf16>
}
