// Budget options of ipu-select-finalist: how many finalists, mappings screened.
// RUN: env RUST_LOG=info ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=64}, ipu-select-finalist{finalists=1 mappings=1})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=ONE
// RUN: env RUST_LOG=info ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=64}, ipu-select-finalist{finalists=2 mappings=3 candidates-per-op=4})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=TWO
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=64}, ipu-select-finalist{finalists=1 mappings=1})' | FileCheck %s --check-prefix=GRID

// With one mapping only the grid order is screened: nothing is mapped, baseline = candidate.
// ONE: screened tile mappings by exchange resource load finalist=0 candidates=1 baseline_cycles=[[C:[0-9]+]] candidate_cycles=[[C]] baseline_pressure=[[P:[0-9]+]] candidate_pressure=[[P]] mapping=grid
// ONE: scheduled operator-plan finalist finalist=0 mapped=false
// ONE-NOT: finalist=1
// ONE: selected physically scheduled operator-plan finalist selected=0 mapped=false

// TWO: screened tile mappings by exchange resource load finalist=0 candidates=3
// TWO: screened tile mappings by exchange resource load finalist=1 candidates=3
// TWO-NOT: finalist=2
// TWO: selected physically scheduled operator-plan finalist selected={{[01]}}

// GRID: ipu.selected_finalist = 0 : i64, ipu.tile_mapping = "grid"
// GRID-NOT: ipu.tile_mapping_tiles
func.func @mlp(%x: tensor<128x256xf16>) -> tensor<128x512xf16> {
  %w1 = arith.constant dense<0.5> : tensor<256x512xf16>
  %h = "ipu.matmul"(%x, %w1) : (tensor<128x256xf16>, tensor<256x512xf16>) -> tensor<128x512xf16>
  %g = "ipu.gelu"(%h) {approximate = "tanh"} : (tensor<128x512xf16>) -> tensor<128x512xf16>
  return %g : tensor<128x512xf16>
}
