module @jit__lambda {
  func.func @main(%arg0: tensor<1x16x4x16xf32>, %arg1: tensor<1x16x4x16xf32>, %arg2: tensor<1x16x4x16xf32>) -> tensor<1x16x4x16xf32> {
    %cst = arith.constant 0xFF800000 : f32
    %cst_0 = arith.constant 2.500000e-01 : f32
    %cst_1 = arith.constant 0.000000e+00 : f32
    %expanded = tensor.expand_shape %arg0 [[0], [1], [2], [3, 4]] output_shape [1, 16, 4, 1, 16] : tensor<1x16x4x16xf32> into tensor<1x16x4x1x16xf32>
    %0 = tensor.empty() : tensor<1x4x16x1x16xf32>
    %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%expanded : tensor<1x16x4x1x16xf32>) outs(%0 : tensor<1x4x16x1x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x4x16x1x16xf32>
    %2 = tensor.empty() : tensor<1x4x16x16xf32>
    %3 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg1 : tensor<1x16x4x16xf32>) outs(%2 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x4x16x16xf32>
    %collapsed = tensor.collapse_shape %1 [[0, 1], [2], [3, 4]] : tensor<1x4x16x1x16xf32> into tensor<4x16x16xf32>
    %collapsed_2 = tensor.collapse_shape %3 [[0, 1], [2], [3]] : tensor<1x4x16x16xf32> into tensor<4x16x16xf32>
    %4 = tensor.empty() : tensor<4x16x16xf32>
    %5 = linalg.fill ins(%cst_1 : f32) outs(%4 : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
    %6 = linalg.batch_matmul ins(%collapsed, %collapsed_2 : tensor<4x16x16xf32>, tensor<4x16x16xf32>) outs(%5 : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
    %expanded_3 = tensor.expand_shape %6 [[0, 1], [2], [3, 4]] output_shape [1, 4, 16, 1, 16] : tensor<4x16x16xf32> into tensor<1x4x16x1x16xf32>
    %7 = tensor.empty() : tensor<1x4x16x1x16xf32>
    %8 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%expanded_3 : tensor<1x4x16x1x16xf32>) outs(%7 : tensor<1x4x16x1x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %34 = arith.mulf %in, %cst_0 : f32
      linalg.yield %34 : f32
    } -> tensor<1x4x16x1x16xf32>
    %9 = tensor.empty() : tensor<1x4x16x1xf32>
    %10 = linalg.fill ins(%cst : f32) outs(%9 : tensor<1x4x16x1xf32>) -> tensor<1x4x16x1xf32>
    %11 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%8 : tensor<1x4x16x1x16xf32>) outs(%10 : tensor<1x4x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %34 = arith.maximumf %out, %in : f32
      linalg.yield %34 : f32
    } -> tensor<1x4x16x1xf32>
    %collapsed_4 = tensor.collapse_shape %11 [[0, 1, 2, 3]] : tensor<1x4x16x1xf32> into tensor<64xf32>
    %expanded_5 = tensor.expand_shape %collapsed_4 [[0, 1, 2, 3]] output_shape [1, 1, 4, 16] : tensor<64xf32> into tensor<1x1x4x16xf32>
    %collapsed_6 = tensor.collapse_shape %8 [[0, 1, 2, 3, 4]] : tensor<1x4x16x1x16xf32> into tensor<1024xf32>
    %expanded_7 = tensor.expand_shape %collapsed_6 [[0, 1, 2, 3, 4]] output_shape [1, 1, 4, 16, 16] : tensor<1024xf32> into tensor<1x1x4x16x16xf32>
    %12 = tensor.empty() : tensor<1x1x4x16x16xf32>
    %13 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%expanded_5 : tensor<1x1x4x16xf32>) outs(%12 : tensor<1x1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x1x4x16x16xf32>
    %14 = tensor.empty() : tensor<1x1x4x16x16xf32>
    %15 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%expanded_7, %13 : tensor<1x1x4x16x16xf32>, tensor<1x1x4x16x16xf32>) outs(%14 : tensor<1x1x4x16x16xf32>) {
    ^bb0(%in: f32, %in_12: f32, %out: f32):
      %34 = arith.subf %in, %in_12 : f32
      linalg.yield %34 : f32
    } -> tensor<1x1x4x16x16xf32>
    %16 = tensor.empty() : tensor<1x1x4x16x16xf32>
    %17 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%15 : tensor<1x1x4x16x16xf32>) outs(%16 : tensor<1x1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %34 = math.exp %in : f32
      linalg.yield %34 : f32
    } -> tensor<1x1x4x16x16xf32>
    %18 = tensor.empty() : tensor<1x1x4x16xf32>
    %19 = linalg.fill ins(%cst_1 : f32) outs(%18 : tensor<1x1x4x16xf32>) -> tensor<1x1x4x16xf32>
    %20 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%17 : tensor<1x1x4x16x16xf32>) outs(%19 : tensor<1x1x4x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %34 = arith.addf %out, %in : f32
      linalg.yield %34 : f32
    } -> tensor<1x1x4x16xf32>
    %21 = tensor.empty() : tensor<1x1x4x16x16xf32>
    %22 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%20 : tensor<1x1x4x16xf32>) outs(%21 : tensor<1x1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x1x4x16x16xf32>
    %23 = tensor.empty() : tensor<1x1x4x16x16xf32>
    %24 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%17, %22 : tensor<1x1x4x16x16xf32>, tensor<1x1x4x16x16xf32>) outs(%23 : tensor<1x1x4x16x16xf32>) {
    ^bb0(%in: f32, %in_12: f32, %out: f32):
      %34 = arith.divf %in, %in_12 : f32
      linalg.yield %34 : f32
    } -> tensor<1x1x4x16x16xf32>
    %25 = tensor.empty() : tensor<1x4x16x16xf32>
    %26 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg2 : tensor<1x16x4x16xf32>) outs(%25 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x4x16x16xf32>
    %27 = tensor.empty() : tensor<1x4x16x1x16xf32>
    %28 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d3, d0, d1, d4, d2)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%24 : tensor<1x1x4x16x16xf32>) outs(%27 : tensor<1x4x16x1x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x4x16x1x16xf32>
    %collapsed_8 = tensor.collapse_shape %26 [[0, 1], [2], [3]] : tensor<1x4x16x16xf32> into tensor<4x16x16xf32>
    %collapsed_9 = tensor.collapse_shape %28 [[0, 1], [2], [3, 4]] : tensor<1x4x16x1x16xf32> into tensor<4x16x16xf32>
    %29 = tensor.empty() : tensor<4x16x16xf32>
    %30 = linalg.fill ins(%cst_1 : f32) outs(%29 : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
    %31 = linalg.batch_matmul ins(%collapsed_8, %collapsed_9 : tensor<4x16x16xf32>, tensor<4x16x16xf32>) outs(%30 : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
    %expanded_10 = tensor.expand_shape %31 [[0, 1], [2], [3, 4]] output_shape [1, 4, 16, 1, 16] : tensor<4x16x16xf32> into tensor<1x4x16x1x16xf32>
    %32 = tensor.empty() : tensor<1x1x16x4x16xf32>
    %33 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d1, d3, d4, d0, d2)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%expanded_10 : tensor<1x4x16x1x16xf32>) outs(%32 : tensor<1x1x16x4x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x1x16x4x16xf32>
    %collapsed_11 = tensor.collapse_shape %33 [[0], [1, 2], [3], [4]] : tensor<1x1x16x4x16xf32> into tensor<1x16x4x16xf32>
    func.return %collapsed_11 : tensor<1x16x4x16xf32>
  }
}
