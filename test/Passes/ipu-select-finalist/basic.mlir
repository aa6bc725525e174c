// ipu-select-finalist models, schedules and selects among ipu-lower-mid's finalists; the
// function records the refined estimate (refined cycles, scheduled exchange cycles, peaks),
// the selected finalist and the tile mapping.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=64}, ipu-select-finalist)' | FileCheck %s
// Stock mlir-opt reads the planned module with our IRDL file.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=64}, ipu-select-finalist)' | %mlir_opt --irdl-file=%irdl_ipu | FileCheck %s --check-prefix=STOCK
// RUN: env RUST_LOG=info ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=64}, ipu-select-finalist)' -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOG

// The finalists are consumed: the module attribute is gone.
// CHECK-NOT: ipu.finalists
// CHECK-LABEL: func.func @mlp
// CHECK-SAME: ipu.estimate = #ipu.estimate<{{[0-9]+}} : i64
// CHECK-SAME: ipu.refined_estimate = #ipu.estimate<{{[0-9]+}} : i64, {{[0-9]+}} : i64
// CHECK-SAME: ipu.selected_finalist = {{[0-3]}} : i64
// CHECK-SAME: ipu.tile_mapping = "{{[a-z_0-9]+}}"
// CHECK: "ipu.matmul"{{.*}}plan = #ipu.plan<"gemm_
// CHECK: "ipu.gelu"{{.*}}plan = #ipu.plan<"pointwise_gelu"
// CHECK: "ipu.matmul"{{.*}}plan = #ipu.plan<"gemm_

// STOCK: "ipu.matmul"{{.*}}plan = #ipu.plan<"gemm_

// Every field of the seed's lines, for each finalist, then the selection.
// LOG: retained operator-plan finalist finalist=0
// LOG: screened tile mappings by exchange resource load finalist=0 candidates=10 baseline_cycles=[[BASE:[0-9]+]] candidate_cycles={{[0-9]+}} baseline_pressure={{[0-9]+}} candidate_pressure={{[0-9]+}} mapping={{[a-z_0-9]+}}
// LOG: modelled expanded operator plan finalist=0 modelled_cycles={{[0-9]+}} estimated_cycles=[[EST:[0-9]+]] estimated_exchange_cycles=[[BASE]]
// LOG: scheduled operator-plan finalist finalist=0 mapped={{true|false}} analytical_cycles=[[EST]] analytical_exchange_cycles=[[BASE]] scheduled_exchange_cycles={{[0-9]+}} refined_cycles={{[0-9]+}}
// LOG: scheduled operator-plan finalist finalist=1
// LOG: selected physically scheduled operator-plan finalist selected={{[0-3]}} mapped={{true|false}}
func.func @mlp(%x: tensor<128x256xf16>) -> tensor<128x256xf16> {
  %w1 = arith.constant dense<0.5> : tensor<256x512xf16>
  %w2 = arith.constant dense<0.25> : tensor<512x256xf16>
  %h = "ipu.matmul"(%x, %w1) : (tensor<128x256xf16>, tensor<256x512xf16>) -> tensor<128x512xf16>
  %g = "ipu.gelu"(%h) {approximate = "tanh"} : (tensor<128x512xf16>) -> tensor<128x512xf16>
  %y = "ipu.matmul"(%g, %w2) : (tensor<128x512xf16>, tensor<512x256xf16>) -> tensor<128x256xf16>
  return %y : tensor<128x256xf16>
}
