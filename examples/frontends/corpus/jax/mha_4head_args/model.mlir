module @jit__lambda {
  func.func @main(%arg0: tensor<1x16x64xf32>, %arg1: tensor<64x64xf32>, %arg2: tensor<64x64xf32>, %arg3: tensor<64x64xf32>, %arg4: tensor<64x64xf32>) -> tensor<1x16x64xf32> {
    %cst = arith.constant 4.000000e+00 : f32
    %cst_0 = arith.constant 0xFF800000 : f32
    %cst_1 = arith.constant 0.000000e+00 : f32
    %collapsed = tensor.collapse_shape %arg0 [[0, 1], [2]] : tensor<1x16x64xf32> into tensor<16x64xf32>
    %0 = tensor.empty() : tensor<16x64xf32>
    %1 = linalg.fill ins(%cst_1 : f32) outs(%0 : tensor<16x64xf32>) -> tensor<16x64xf32>
    %2 = linalg.matmul ins(%collapsed, %arg1 : tensor<16x64xf32>, tensor<64x64xf32>) outs(%1 : tensor<16x64xf32>) -> tensor<16x64xf32>
    %3 = tensor.empty() : tensor<16x64xf32>
    %4 = linalg.fill ins(%cst_1 : f32) outs(%3 : tensor<16x64xf32>) -> tensor<16x64xf32>
    %5 = linalg.matmul ins(%collapsed, %arg2 : tensor<16x64xf32>, tensor<64x64xf32>) outs(%4 : tensor<16x64xf32>) -> tensor<16x64xf32>
    %6 = tensor.empty() : tensor<16x64xf32>
    %7 = linalg.fill ins(%cst_1 : f32) outs(%6 : tensor<16x64xf32>) -> tensor<16x64xf32>
    %8 = linalg.matmul ins(%collapsed, %arg3 : tensor<16x64xf32>, tensor<64x64xf32>) outs(%7 : tensor<16x64xf32>) -> tensor<16x64xf32>
    %expanded = tensor.expand_shape %2 [[0, 1], [2, 3]] output_shape [1, 16, 4, 16] : tensor<16x64xf32> into tensor<1x16x4x16xf32>
    %9 = tensor.empty() : tensor<1x4x16x16xf32>
    %10 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded : tensor<1x16x4x16xf32>) outs(%9 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x4x16x16xf32>
    %expanded_2 = tensor.expand_shape %5 [[0, 1], [2, 3]] output_shape [1, 16, 4, 16] : tensor<16x64xf32> into tensor<1x16x4x16xf32>
    %11 = tensor.empty() : tensor<1x4x16x16xf32>
    %12 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_2 : tensor<1x16x4x16xf32>) outs(%11 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x4x16x16xf32>
    %expanded_3 = tensor.expand_shape %8 [[0, 1], [2, 3]] output_shape [1, 16, 4, 16] : tensor<16x64xf32> into tensor<1x16x4x16xf32>
    %13 = tensor.empty() : tensor<1x4x16x16xf32>
    %14 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_3 : tensor<1x16x4x16xf32>) outs(%13 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x4x16x16xf32>
    %15 = tensor.empty() : tensor<1x4x16x16xf32>
    %16 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%12 : tensor<1x4x16x16xf32>) outs(%15 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x4x16x16xf32>
    %collapsed_4 = tensor.collapse_shape %10 [[0, 1], [2], [3]] : tensor<1x4x16x16xf32> into tensor<4x16x16xf32>
    %collapsed_5 = tensor.collapse_shape %16 [[0, 1], [2], [3]] : tensor<1x4x16x16xf32> into tensor<4x16x16xf32>
    %17 = tensor.empty() : tensor<4x16x16xf32>
    %18 = linalg.fill ins(%cst_1 : f32) outs(%17 : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
    %19 = linalg.batch_matmul ins(%collapsed_4, %collapsed_5 : tensor<4x16x16xf32>, tensor<4x16x16xf32>) outs(%18 : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
    %20 = tensor.empty() : tensor<1x4x16x16xf32>
    %21 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%19 : tensor<4x16x16xf32>) outs(%20 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x4x16x16xf32>
    %22 = tensor.empty() : tensor<f32>
    %23 = linalg.generic {indexing_maps = [affine_map<() -> ()>], iterator_types = []} outs(%22 : tensor<f32>) {
    ^bb0(%out: f32):
      linalg.yield %cst : f32
    } -> tensor<f32>
    %24 = tensor.empty() : tensor<1x4x16x16xf32>
    %25 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> ()>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%23 : tensor<f32>) outs(%24 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x4x16x16xf32>
    %26 = tensor.empty() : tensor<1x4x16x16xf32>
    %27 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%21, %25 : tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>) outs(%26 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %in_10: f32, %out: f32):
      %54 = arith.divf %in, %in_10 : f32
      linalg.yield %54 : f32
    } -> tensor<1x4x16x16xf32>
    %28 = tensor.empty() : tensor<1x4x16xf32>
    %29 = linalg.fill ins(%cst_0 : f32) outs(%28 : tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
    %30 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%27 : tensor<1x4x16x16xf32>) outs(%29 : tensor<1x4x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %54 = arith.maximumf %out, %in : f32
      linalg.yield %54 : f32
    } -> tensor<1x4x16xf32>
    %31 = tensor.empty() : tensor<1x4x16x16xf32>
    %32 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%30 : tensor<1x4x16xf32>) outs(%31 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x4x16x16xf32>
    %33 = tensor.empty() : tensor<1x4x16x16xf32>
    %34 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%27, %32 : tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>) outs(%33 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %in_10: f32, %out: f32):
      %54 = arith.subf %in, %in_10 : f32
      linalg.yield %54 : f32
    } -> tensor<1x4x16x16xf32>
    %35 = tensor.empty() : tensor<1x4x16x16xf32>
    %36 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%34 : tensor<1x4x16x16xf32>) outs(%35 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %54 = math.exp %in : f32
      linalg.yield %54 : f32
    } -> tensor<1x4x16x16xf32>
    %37 = tensor.empty() : tensor<1x4x16xf32>
    %38 = linalg.fill ins(%cst_1 : f32) outs(%37 : tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
    %39 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%36 : tensor<1x4x16x16xf32>) outs(%38 : tensor<1x4x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %54 = arith.addf %out, %in : f32
      linalg.yield %54 : f32
    } -> tensor<1x4x16xf32>
    %40 = tensor.empty() : tensor<1x4x16x16xf32>
    %41 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%39 : tensor<1x4x16xf32>) outs(%40 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x4x16x16xf32>
    %42 = tensor.empty() : tensor<1x4x16x16xf32>
    %43 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%36, %41 : tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>) outs(%42 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %in_10: f32, %out: f32):
      %54 = arith.divf %in, %in_10 : f32
      linalg.yield %54 : f32
    } -> tensor<1x4x16x16xf32>
    %collapsed_6 = tensor.collapse_shape %43 [[0, 1], [2], [3]] : tensor<1x4x16x16xf32> into tensor<4x16x16xf32>
    %collapsed_7 = tensor.collapse_shape %14 [[0, 1], [2], [3]] : tensor<1x4x16x16xf32> into tensor<4x16x16xf32>
    %44 = tensor.empty() : tensor<4x16x16xf32>
    %45 = linalg.fill ins(%cst_1 : f32) outs(%44 : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
    %46 = linalg.batch_matmul ins(%collapsed_6, %collapsed_7 : tensor<4x16x16xf32>, tensor<4x16x16xf32>) outs(%45 : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
    %47 = tensor.empty() : tensor<1x4x16x16xf32>
    %48 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%46 : tensor<4x16x16xf32>) outs(%47 : tensor<1x4x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x4x16x16xf32>
    %49 = tensor.empty() : tensor<1x16x4x16xf32>
    %50 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%48 : tensor<1x4x16x16xf32>) outs(%49 : tensor<1x16x4x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x16x4x16xf32>
    %collapsed_8 = tensor.collapse_shape %50 [[0, 1], [2, 3]] : tensor<1x16x4x16xf32> into tensor<16x64xf32>
    %51 = tensor.empty() : tensor<16x64xf32>
    %52 = linalg.fill ins(%cst_1 : f32) outs(%51 : tensor<16x64xf32>) -> tensor<16x64xf32>
    %53 = linalg.matmul ins(%collapsed_8, %arg4 : tensor<16x64xf32>, tensor<64x64xf32>) outs(%52 : tensor<16x64xf32>) -> tensor<16x64xf32>
    %expanded_9 = tensor.expand_shape %53 [[0, 1], [2]] output_shape [1, 16, 64] : tensor<16x64xf32> into tensor<1x16x64xf32>
    func.return %expanded_9 : tensor<1x16x64xf32>
  }
}
