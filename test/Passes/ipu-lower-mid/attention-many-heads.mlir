// More batch-heads (128) than tiles (64): no attention grid can give each head its own grid
// row, so ipu-lower-mid plans tiles that share heads (grid [heads/8, 4] here), and the
// lowering, which runs one head per grid row, refuses it with a message naming the counts
// at the function (not a panic, not a generic failure).
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=64})' | FileCheck %s
// RUN: not ipu-opt %s -p 'builtin.module(ipu-compile{tiles=64 compile-kernels=false})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOWER

// CHECK: "ipu.attention"{{.*}}plan = #ipu.plan<"attention_blocked", {causal = false, grid = [16, 4], precision = "f16", tiles = 64 : i64}>
// LOWER: error: 'func.func' op ipu-lower-to-tiles: ipu.attention: op 0: 128 batch-heads do not fit on 64 tiles
func.func @many(%q: tensor<128x16x32xf16>, %k: tensor<128x16x32xf16>, %v: tensor<128x16x32xf16>) -> tensor<128x16x32xf16> {
  %0 = "ipu.attention"(%q, %k, %v) : (tensor<128x16x32xf16>, tensor<128x16x32xf16>, tensor<128x16x32xf16>) -> tensor<128x16x32xf16>
  return %0 : tensor<128x16x32xf16>
}
