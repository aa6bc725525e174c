// RUN: env RUST_LOG=ipu_passes=info ipu-opt %s -p 'builtin.module(func.func(ipu-eqsat))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEFAULT
// RUN: env RUST_LOG=ipu_passes=info ipu-opt %s -p 'builtin.module(func.func(ipu-eqsat{iterations=1}))' 2>&1 | FileCheck %s --check-prefix=ITERATIONS
// RUN: env RUST_LOG=ipu_passes=info ipu-opt %s -p 'builtin.module(func.func(ipu-eqsat{nodes=3}))' 2>&1 | FileCheck %s --check-prefix=NODES
// RUN: env RUST_LOG=ipu_passes=info ipu-opt %s -p 'builtin.module(func.func(ipu-eqsat{time-limit-ms=0}))' 2>&1 | FileCheck %s --check-prefix=TIME
// RUN: env RUST_LOG=ipu_passes=info ipu-opt %s -p 'builtin.module(func.func(ipu-eqsat{tiles=1}))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=TILES
// RUN: ipu-opt %s -p 'builtin.module(func.func(ipu-eqsat{iterations=1}))' --mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATISTICS

// The budgets of ipu-eqsat (iterations, nodes, time-limit-ms) are hard: the run reports which
// one stopped it, and extraction uses whatever the e-graph holds by then. tiles sets the tile
// count the cycle model spreads each op over.

// With the default budgets the chain saturates after two iterations.
// DEFAULT: eqsat finished stop_reason=saturated iterations=2 nodes=7 cost_before=1426 cost_after=12 function=wide_middle_goes_right

// One iteration suffices for one reassociation.
// ITERATIONS: eqsat finished stop_reason=iterations iterations=1 nodes=7 cost_before=1426 cost_after=12
// ITERATIONS: "ipu.matmul"(%{{.*}}) : (tensor<16x2048xf16>, tensor<2048x16xf16>) -> tensor<16x16xf16>

// A node budget below what the first iteration adds stops it with the input unchanged.
// NODES: eqsat finished stop_reason=nodes iterations=1 nodes=5 cost_before=1426 cost_after=1426
// NODES: "ipu.matmul"(%{{.*}}) : (tensor<2048x16xf16>, tensor<16x2048xf16>) -> tensor<2048x2048xf16>

// No time at all: stopped before anything is learned, the input is kept.
// TIME: eqsat finished stop_reason=time iterations=1 nodes=5 cost_before=1426 cost_after=1426
// TIME: "ipu.matmul"(%{{.*}}) : (tensor<2048x16xf16>, tensor<16x2048xf16>) -> tensor<2048x2048xf16>

// On one tile every op costs the whole of its work.
// TILES: eqsat finished stop_reason=saturated iterations=2 nodes=7 cost_before=2097152 cost_after=16384

// STATISTICS: IpuEqsat
// STATISTICS-NEXT: (S) 1414 cycles-saved - Estimated cycles saved
// STATISTICS-NEXT: (S) 2 ops-created - Ops built for extracted programs
// STATISTICS-NEXT: (S) 2 ops-erased - Input ops erased as dead
// STATISTICS-NEXT: (S) 1 rewritten - Blocks replaced by a cheaper extracted program
// STATISTICS-NEXT: (S) 1 stopped-by-iterations - Blocks stopped by the iterations budget
func.func @wide_middle_goes_right(%a: tensor<2048x16xf16>, %b: tensor<16x2048xf16>, %c: tensor<2048x16xf16>) -> tensor<2048x16xf16> {
  %ab = "ipu.matmul"(%a, %b) : (tensor<2048x16xf16>, tensor<16x2048xf16>) -> tensor<2048x2048xf16>
  %abc = "ipu.matmul"(%ab, %c) : (tensor<2048x2048xf16>, tensor<2048x16xf16>) -> tensor<2048x16xf16>
  return %abc : tensor<2048x16xf16>
}
