// Rows that are all -inf (fully masked) are zeroed, as PyTorch's attention export does it: a
// boolean all-reduction (andi of i1 into a true fill) beside an unused i64 argmax-like result,
// read back by a select.
#id = affine_map<(d0, d1) -> (d0, d1)>
#kept = affine_map<(d0, d1) -> (d0, 0)>
func.func @main(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %true = arith.constant true
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : i64
  %mask = arith.constant dense<[[true], [false], [true], [false]]> : tensor<4x1xi1>
  %e = tensor.empty() : tensor<4x16xf32>
  %masked = linalg.generic {indexing_maps = [#kept, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%mask, %x : tensor<4x1xi1>, tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%m: i1, %in: f32, %out: f32):
    %s = arith.select %m, %ninf, %in : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  %eb = tensor.empty() : tensor<4x16xi1>
  %isinf = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%masked : tensor<4x16xf32>) outs(%eb : tensor<4x16xi1>) {
  ^bb0(%in: f32, %out: i1):
    %c = arith.cmpf oeq, %in, %ninf : f32
    linalg.yield %c : i1
  } -> tensor<4x16xi1>
  %e1 = tensor.empty() : tensor<4x1xi1>
  %t = linalg.fill ins(%true : i1) outs(%e1 : tensor<4x1xi1>) -> tensor<4x1xi1>
  %ei = tensor.empty() : tensor<4x1xi64>
  %i0 = linalg.fill ins(%c0 : i64) outs(%ei : tensor<4x1xi64>) -> tensor<4x1xi64>
  %all:2 = linalg.generic {indexing_maps = [#id, #kept, #kept], iterator_types = ["parallel", "reduction"]} ins(%isinf : tensor<4x16xi1>) outs(%t, %i0 : tensor<4x1xi1>, tensor<4x1xi64>) {
  ^bb0(%in: i1, %acc: i1, %idx: i64):
    %a = arith.andi %in, %acc : i1
    %j = linalg.index 1 : index
    %jj = arith.index_cast %j : index to i64
    %n = arith.select %in, %jj, %idx : i64
    linalg.yield %a, %n : i1, i64
  } -> (tensor<4x1xi1>, tensor<4x1xi64>)
  %r = linalg.generic {indexing_maps = [#kept, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%all#0, %masked : tensor<4x1xi1>, tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%a: i1, %in: f32, %out: f32):
    %s = arith.select %a, %zero, %in : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}
