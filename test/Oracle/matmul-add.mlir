// RUN: ipu-oracle %s --input arg0=%S/Inputs/a.npy --input arg1=%S/Inputs/b.npy | FileCheck %s
// RUN: rm -rf %t && mkdir -p %t
// RUN: ipu-oracle %s --input 0=%S/Inputs/a.npy --input %%arg1=%S/Inputs/b.npy -o %t/r.npy
// RUN: ipu-oracle %S/Inputs/identity.mlir --input arg0=%t/r.npy | FileCheck %s --check-prefix=READBACK

// The oracle (MLIR's own lowering to LLVM and ExecutionEngine) on a hand-checkable function:
// [[1, 2], [3, 4]] @ [[5, 6], [7, 8]] + [[10, 20], [30, 40]] = [[29, 42], [73, 90]].
// The .npy written with -o reads back through --input unchanged.

// CHECK: result0: tensor<2x2xf32> min=29.000000 max=90.000000 mean=58.500000 first=[29.000000, 42.000000, 73.000000, 90.000000]
// READBACK: result0: tensor<2x2xf32> {{.*}} first=[29.000000, 42.000000, 73.000000, 90.000000]
func.func @mm(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %c = arith.constant dense<[[10.0, 20.0], [30.0, 40.0]]> : tensor<2x2xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  %m = linalg.matmul ins(%a, %b : tensor<2x2xf32>, tensor<2x2xf32>) outs(%f : tensor<2x2xf32>) -> tensor<2x2xf32>
  %r = linalg.add ins(%m, %c : tensor<2x2xf32>, tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}
