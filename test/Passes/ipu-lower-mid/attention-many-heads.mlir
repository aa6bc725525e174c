// More batch-heads (128) than tiles (64): no attention grid gives each head its own grid row,
// so the lowering runs whole heads, two per tile, one after the other (waves reusing the
// tile's buffers, keys streamed with the online softmax), and ipu-lower-mid prices exactly
// that: attention_flash on grid [64, 1] (ceil(128 / 2) tiles, whole queries per tile).
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=64})' | FileCheck %s
// RUN: env RUST_LOG=info ipu-opt %s -p 'builtin.module(ipu-compile{tiles=64 compile-kernels=false})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOWER

// CHECK: "ipu.attention"{{.*}}plan = #ipu.plan<"attention_flash", {causal = false, grid = [64, 1], key_block = 16 : i64, precision = "f16", tiles = 64 : i64}>
// LOWER: scheduled operator-plan finalist finalist=0 {{.*}} refined_cycles=[[REFINED:[0-9]+]]
// LOWER: attention lowered with keys streamed in blocks (online softmax), one tile per batch-head query block op=0 tiles=64 query_rows=16 heads_per_tile=2 key_block=16 key_blocks=1
// LOWER: costed final placed program final_cycles=[[REFINED]]
func.func @many(%q: tensor<128x16x32xf16>, %k: tensor<128x16x32xf16>, %v: tensor<128x16x32xf16>) -> tensor<128x16x32xf16> {
  %0 = "ipu.attention"(%q, %k, %v) : (tensor<128x16x32xf16>, tensor<128x16x32xf16>, tensor<128x16x32xf16>) -> tensor<128x16x32xf16>
  return %0 : tensor<128x16x32xf16>
}
