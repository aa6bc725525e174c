module @jit__lambda {
  func.func @main(%arg0: tensor<1x16x32xf32>, %arg1: tensor<32xf32>, %arg2: tensor<32xf32>, %arg3: tensor<32x32xf32>, %arg4: tensor<32x32xf32>, %arg5: tensor<32x32xf32>, %arg6: tensor<32x32xf32>, %arg7: tensor<32xf32>, %arg8: tensor<32xf32>, %arg9: tensor<32xf32>, %arg10: tensor<32x128xf32>, %arg11: tensor<128xf32>, %arg12: tensor<128x32xf32>, %arg13: tensor<32xf32>) -> tensor<1x16x32xf32> {
    %cst = arith.constant 4.000000e+00 : f32
    %cst_0 = arith.constant 1.12837911 : f32
    %cst_1 = arith.constant -0.37612626 : f32
    %cst_2 = arith.constant 0.112835854 : f32
    %cst_3 = arith.constant -0.0268538129 : f32
    %cst_4 = arith.constant 0.00518832775 : f32
    %cst_5 = arith.constant -8.0101937E-4 : f32
    %cst_6 = arith.constant 7.85386146E-5 : f32
    %cst_7 = arith.constant -88.7228394 : f32
    %cst_8 = arith.constant 0.564189494 : f32
    %cst_9 = arith.constant -0.282076746 : f32
    %cst_10 = arith.constant 0.42184633 : f32
    %cst_11 = arith.constant -1.01526523 : f32
    %cst_12 = arith.constant 2.92101908 : f32
    %cst_13 = arith.constant -7.49551868 : f32
    %cst_14 = arith.constant 1.297720e+01 : f32
    %cst_15 = arith.constant -10.477664 : f32
    %cst_16 = arith.constant 0.563825965 : f32
    %cst_17 = arith.constant -0.274112701 : f32
    %cst_18 = arith.constant 3.404880e-01 : f32
    %cst_19 = arith.constant -0.494451523 : f32
    %cst_20 = arith.constant 0.621000468 : f32
    %cst_21 = arith.constant -0.582473278 : f32
    %cst_22 = arith.constant 0.368742466 : f32
    %cst_23 = arith.constant -0.138703942 : f32
    %cst_24 = arith.constant 2.326820e-02 : f32
    %cst_25 = arith.constant 2.000000e+00 : f32
    %cst_26 = arith.constant 1.000000e+00 : f32
    %cst_27 = arith.constant 0.707106769 : f32
    %cst_28 = arith.constant 5.000000e-01 : f32
    %cst_29 = arith.constant 0xFF800000 : f32
    %cst_30 = arith.constant 9.99999974E-6 : f32
    %cst_31 = arith.constant 3.200000e+01 : f32
    %cst_32 = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<1x16xf32>
    %1 = linalg.fill ins(%cst_32 : f32) outs(%0 : tensor<1x16xf32>) -> tensor<1x16xf32>
    %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0 : tensor<1x16x32xf32>) outs(%1 : tensor<1x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.addf %out, %in : f32
      linalg.yield %270 : f32
    } -> tensor<1x16xf32>
    %expanded = tensor.expand_shape %2 [[0], [1, 2]] output_shape [1, 16, 1] : tensor<1x16xf32> into tensor<1x16x1xf32>
    %3 = tensor.empty() : tensor<1x16x1xf32>
    %4 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded : tensor<1x16x1xf32>) outs(%3 : tensor<1x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.divf %in, %cst_31 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x1xf32>
    %5 = tensor.empty() : tensor<1x16x32xf32>
    %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%4 : tensor<1x16x1xf32>) outs(%5 : tensor<1x16x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x16x32xf32>
    %7 = tensor.empty() : tensor<1x16x32xf32>
    %8 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0, %6 : tensor<1x16x32xf32>, tensor<1x16x32xf32>) outs(%7 : tensor<1x16x32xf32>) {
    ^bb0(%in: f32, %in_49: f32, %out: f32):
      %270 = arith.subf %in, %in_49 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x32xf32>
    %9 = tensor.empty() : tensor<1x16x32xf32>
    %10 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%8 : tensor<1x16x32xf32>) outs(%9 : tensor<1x16x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.mulf %in, %in : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x32xf32>
    %11 = tensor.empty() : tensor<1x16xf32>
    %12 = linalg.fill ins(%cst_32 : f32) outs(%11 : tensor<1x16xf32>) -> tensor<1x16xf32>
    %13 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%10 : tensor<1x16x32xf32>) outs(%12 : tensor<1x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.addf %out, %in : f32
      linalg.yield %270 : f32
    } -> tensor<1x16xf32>
    %expanded_33 = tensor.expand_shape %13 [[0], [1, 2]] output_shape [1, 16, 1] : tensor<1x16xf32> into tensor<1x16x1xf32>
    %14 = tensor.empty() : tensor<1x16x1xf32>
    %15 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_33 : tensor<1x16x1xf32>) outs(%14 : tensor<1x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.divf %in, %cst_31 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x1xf32>
    %16 = tensor.empty() : tensor<1x16x1xf32>
    %17 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%15 : tensor<1x16x1xf32>) outs(%16 : tensor<1x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.addf %in, %cst_30 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x1xf32>
    %18 = tensor.empty() : tensor<1x16x1xf32>
    %19 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%17 : tensor<1x16x1xf32>) outs(%18 : tensor<1x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = math.rsqrt %in : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x1xf32>
    %20 = tensor.empty() : tensor<1x16x32xf32>
    %21 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%19 : tensor<1x16x1xf32>) outs(%20 : tensor<1x16x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x16x32xf32>
    %22 = tensor.empty() : tensor<1x16x32xf32>
    %23 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%8, %21 : tensor<1x16x32xf32>, tensor<1x16x32xf32>) outs(%22 : tensor<1x16x32xf32>) {
    ^bb0(%in: f32, %in_49: f32, %out: f32):
      %270 = arith.mulf %in, %in_49 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x32xf32>
    %24 = tensor.empty() : tensor<1x16x32xf32>
    %25 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg1 : tensor<32xf32>) outs(%24 : tensor<1x16x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x16x32xf32>
    %26 = tensor.empty() : tensor<1x16x32xf32>
    %27 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%23, %25 : tensor<1x16x32xf32>, tensor<1x16x32xf32>) outs(%26 : tensor<1x16x32xf32>) {
    ^bb0(%in: f32, %in_49: f32, %out: f32):
      %270 = arith.mulf %in, %in_49 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x32xf32>
    %28 = tensor.empty() : tensor<1x16x32xf32>
    %29 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg2 : tensor<32xf32>) outs(%28 : tensor<1x16x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x16x32xf32>
    %30 = tensor.empty() : tensor<1x16x32xf32>
    %31 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%27, %29 : tensor<1x16x32xf32>, tensor<1x16x32xf32>) outs(%30 : tensor<1x16x32xf32>) {
    ^bb0(%in: f32, %in_49: f32, %out: f32):
      %270 = arith.addf %in, %in_49 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x32xf32>
    %collapsed = tensor.collapse_shape %31 [[0, 1], [2]] : tensor<1x16x32xf32> into tensor<16x32xf32>
    %32 = tensor.empty() : tensor<16x32xf32>
    %33 = linalg.fill ins(%cst_32 : f32) outs(%32 : tensor<16x32xf32>) -> tensor<16x32xf32>
    %34 = linalg.matmul ins(%collapsed, %arg3 : tensor<16x32xf32>, tensor<32x32xf32>) outs(%33 : tensor<16x32xf32>) -> tensor<16x32xf32>
    %35 = tensor.empty() : tensor<16x32xf32>
    %36 = linalg.fill ins(%cst_32 : f32) outs(%35 : tensor<16x32xf32>) -> tensor<16x32xf32>
    %37 = linalg.matmul ins(%collapsed, %arg4 : tensor<16x32xf32>, tensor<32x32xf32>) outs(%36 : tensor<16x32xf32>) -> tensor<16x32xf32>
    %38 = tensor.empty() : tensor<16x32xf32>
    %39 = linalg.fill ins(%cst_32 : f32) outs(%38 : tensor<16x32xf32>) -> tensor<16x32xf32>
    %40 = linalg.matmul ins(%collapsed, %arg5 : tensor<16x32xf32>, tensor<32x32xf32>) outs(%39 : tensor<16x32xf32>) -> tensor<16x32xf32>
    %expanded_34 = tensor.expand_shape %34 [[0, 1], [2, 3]] output_shape [1, 16, 2, 16] : tensor<16x32xf32> into tensor<1x16x2x16xf32>
    %41 = tensor.empty() : tensor<1x2x16x16xf32>
    %42 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_34 : tensor<1x16x2x16xf32>) outs(%41 : tensor<1x2x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x2x16x16xf32>
    %expanded_35 = tensor.expand_shape %37 [[0, 1], [2, 3]] output_shape [1, 16, 2, 16] : tensor<16x32xf32> into tensor<1x16x2x16xf32>
    %43 = tensor.empty() : tensor<1x2x16x16xf32>
    %44 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_35 : tensor<1x16x2x16xf32>) outs(%43 : tensor<1x2x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x2x16x16xf32>
    %expanded_36 = tensor.expand_shape %40 [[0, 1], [2, 3]] output_shape [1, 16, 2, 16] : tensor<16x32xf32> into tensor<1x16x2x16xf32>
    %45 = tensor.empty() : tensor<1x2x16x16xf32>
    %46 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_36 : tensor<1x16x2x16xf32>) outs(%45 : tensor<1x2x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x2x16x16xf32>
    %47 = tensor.empty() : tensor<1x2x16x16xf32>
    %48 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%44 : tensor<1x2x16x16xf32>) outs(%47 : tensor<1x2x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x2x16x16xf32>
    %collapsed_37 = tensor.collapse_shape %42 [[0, 1], [2], [3]] : tensor<1x2x16x16xf32> into tensor<2x16x16xf32>
    %collapsed_38 = tensor.collapse_shape %48 [[0, 1], [2], [3]] : tensor<1x2x16x16xf32> into tensor<2x16x16xf32>
    %49 = tensor.empty() : tensor<2x16x16xf32>
    %50 = linalg.fill ins(%cst_32 : f32) outs(%49 : tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
    %51 = linalg.batch_matmul ins(%collapsed_37, %collapsed_38 : tensor<2x16x16xf32>, tensor<2x16x16xf32>) outs(%50 : tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
    %52 = tensor.empty() : tensor<1x2x16x16xf32>
    %53 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%51 : tensor<2x16x16xf32>) outs(%52 : tensor<1x2x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x2x16x16xf32>
    %54 = tensor.empty() : tensor<f32>
    %55 = linalg.generic {indexing_maps = [affine_map<() -> ()>], iterator_types = []} outs(%54 : tensor<f32>) {
    ^bb0(%out: f32):
      linalg.yield %cst : f32
    } -> tensor<f32>
    %56 = tensor.empty() : tensor<1x2x16x16xf32>
    %57 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> ()>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%55 : tensor<f32>) outs(%56 : tensor<1x2x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x2x16x16xf32>
    %58 = tensor.empty() : tensor<1x2x16x16xf32>
    %59 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%53, %57 : tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32>) outs(%58 : tensor<1x2x16x16xf32>) {
    ^bb0(%in: f32, %in_49: f32, %out: f32):
      %270 = arith.divf %in, %in_49 : f32
      linalg.yield %270 : f32
    } -> tensor<1x2x16x16xf32>
    %60 = tensor.empty() : tensor<1x2x16xf32>
    %61 = linalg.fill ins(%cst_29 : f32) outs(%60 : tensor<1x2x16xf32>) -> tensor<1x2x16xf32>
    %62 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%59 : tensor<1x2x16x16xf32>) outs(%61 : tensor<1x2x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.maximumf %out, %in : f32
      linalg.yield %270 : f32
    } -> tensor<1x2x16xf32>
    %63 = tensor.empty() : tensor<1x2x16x16xf32>
    %64 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%62 : tensor<1x2x16xf32>) outs(%63 : tensor<1x2x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x2x16x16xf32>
    %65 = tensor.empty() : tensor<1x2x16x16xf32>
    %66 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%59, %64 : tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32>) outs(%65 : tensor<1x2x16x16xf32>) {
    ^bb0(%in: f32, %in_49: f32, %out: f32):
      %270 = arith.subf %in, %in_49 : f32
      linalg.yield %270 : f32
    } -> tensor<1x2x16x16xf32>
    %67 = tensor.empty() : tensor<1x2x16x16xf32>
    %68 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%66 : tensor<1x2x16x16xf32>) outs(%67 : tensor<1x2x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = math.exp %in : f32
      linalg.yield %270 : f32
    } -> tensor<1x2x16x16xf32>
    %69 = tensor.empty() : tensor<1x2x16xf32>
    %70 = linalg.fill ins(%cst_32 : f32) outs(%69 : tensor<1x2x16xf32>) -> tensor<1x2x16xf32>
    %71 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%68 : tensor<1x2x16x16xf32>) outs(%70 : tensor<1x2x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.addf %out, %in : f32
      linalg.yield %270 : f32
    } -> tensor<1x2x16xf32>
    %72 = tensor.empty() : tensor<1x2x16x16xf32>
    %73 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%71 : tensor<1x2x16xf32>) outs(%72 : tensor<1x2x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x2x16x16xf32>
    %74 = tensor.empty() : tensor<1x2x16x16xf32>
    %75 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%68, %73 : tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32>) outs(%74 : tensor<1x2x16x16xf32>) {
    ^bb0(%in: f32, %in_49: f32, %out: f32):
      %270 = arith.divf %in, %in_49 : f32
      linalg.yield %270 : f32
    } -> tensor<1x2x16x16xf32>
    %collapsed_39 = tensor.collapse_shape %75 [[0, 1], [2], [3]] : tensor<1x2x16x16xf32> into tensor<2x16x16xf32>
    %collapsed_40 = tensor.collapse_shape %46 [[0, 1], [2], [3]] : tensor<1x2x16x16xf32> into tensor<2x16x16xf32>
    %76 = tensor.empty() : tensor<2x16x16xf32>
    %77 = linalg.fill ins(%cst_32 : f32) outs(%76 : tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
    %78 = linalg.batch_matmul ins(%collapsed_39, %collapsed_40 : tensor<2x16x16xf32>, tensor<2x16x16xf32>) outs(%77 : tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
    %79 = tensor.empty() : tensor<1x2x16x16xf32>
    %80 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%78 : tensor<2x16x16xf32>) outs(%79 : tensor<1x2x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x2x16x16xf32>
    %81 = tensor.empty() : tensor<1x16x2x16xf32>
    %82 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%80 : tensor<1x2x16x16xf32>) outs(%81 : tensor<1x16x2x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x16x2x16xf32>
    %collapsed_41 = tensor.collapse_shape %82 [[0, 1], [2, 3]] : tensor<1x16x2x16xf32> into tensor<16x32xf32>
    %83 = tensor.empty() : tensor<16x32xf32>
    %84 = linalg.fill ins(%cst_32 : f32) outs(%83 : tensor<16x32xf32>) -> tensor<16x32xf32>
    %85 = linalg.matmul ins(%collapsed_41, %arg6 : tensor<16x32xf32>, tensor<32x32xf32>) outs(%84 : tensor<16x32xf32>) -> tensor<16x32xf32>
    %expanded_42 = tensor.expand_shape %85 [[0, 1], [2]] output_shape [1, 16, 32] : tensor<16x32xf32> into tensor<1x16x32xf32>
    %86 = tensor.empty() : tensor<1x16x32xf32>
    %87 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0, %expanded_42 : tensor<1x16x32xf32>, tensor<1x16x32xf32>) outs(%86 : tensor<1x16x32xf32>) {
    ^bb0(%in: f32, %in_49: f32, %out: f32):
      %270 = arith.addf %in, %in_49 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x32xf32>
    %88 = tensor.empty() : tensor<1x16x32xf32>
    %89 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg7 : tensor<32xf32>) outs(%88 : tensor<1x16x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x16x32xf32>
    %90 = tensor.empty() : tensor<1x16x32xf32>
    %91 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%87, %89 : tensor<1x16x32xf32>, tensor<1x16x32xf32>) outs(%90 : tensor<1x16x32xf32>) {
    ^bb0(%in: f32, %in_49: f32, %out: f32):
      %270 = arith.addf %in, %in_49 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x32xf32>
    %92 = tensor.empty() : tensor<1x16xf32>
    %93 = linalg.fill ins(%cst_32 : f32) outs(%92 : tensor<1x16xf32>) -> tensor<1x16xf32>
    %94 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%91 : tensor<1x16x32xf32>) outs(%93 : tensor<1x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.addf %out, %in : f32
      linalg.yield %270 : f32
    } -> tensor<1x16xf32>
    %expanded_43 = tensor.expand_shape %94 [[0], [1, 2]] output_shape [1, 16, 1] : tensor<1x16xf32> into tensor<1x16x1xf32>
    %95 = tensor.empty() : tensor<1x16x1xf32>
    %96 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_43 : tensor<1x16x1xf32>) outs(%95 : tensor<1x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.divf %in, %cst_31 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x1xf32>
    %97 = tensor.empty() : tensor<1x16x32xf32>
    %98 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%96 : tensor<1x16x1xf32>) outs(%97 : tensor<1x16x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x16x32xf32>
    %99 = tensor.empty() : tensor<1x16x32xf32>
    %100 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%91, %98 : tensor<1x16x32xf32>, tensor<1x16x32xf32>) outs(%99 : tensor<1x16x32xf32>) {
    ^bb0(%in: f32, %in_49: f32, %out: f32):
      %270 = arith.subf %in, %in_49 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x32xf32>
    %101 = tensor.empty() : tensor<1x16x32xf32>
    %102 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%100 : tensor<1x16x32xf32>) outs(%101 : tensor<1x16x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.mulf %in, %in : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x32xf32>
    %103 = tensor.empty() : tensor<1x16xf32>
    %104 = linalg.fill ins(%cst_32 : f32) outs(%103 : tensor<1x16xf32>) -> tensor<1x16xf32>
    %105 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%102 : tensor<1x16x32xf32>) outs(%104 : tensor<1x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.addf %out, %in : f32
      linalg.yield %270 : f32
    } -> tensor<1x16xf32>
    %expanded_44 = tensor.expand_shape %105 [[0], [1, 2]] output_shape [1, 16, 1] : tensor<1x16xf32> into tensor<1x16x1xf32>
    %106 = tensor.empty() : tensor<1x16x1xf32>
    %107 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_44 : tensor<1x16x1xf32>) outs(%106 : tensor<1x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.divf %in, %cst_31 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x1xf32>
    %108 = tensor.empty() : tensor<1x16x1xf32>
    %109 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%107 : tensor<1x16x1xf32>) outs(%108 : tensor<1x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.addf %in, %cst_30 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x1xf32>
    %110 = tensor.empty() : tensor<1x16x1xf32>
    %111 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%109 : tensor<1x16x1xf32>) outs(%110 : tensor<1x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = math.rsqrt %in : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x1xf32>
    %112 = tensor.empty() : tensor<1x16x32xf32>
    %113 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%111 : tensor<1x16x1xf32>) outs(%112 : tensor<1x16x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x16x32xf32>
    %114 = tensor.empty() : tensor<1x16x32xf32>
    %115 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%100, %113 : tensor<1x16x32xf32>, tensor<1x16x32xf32>) outs(%114 : tensor<1x16x32xf32>) {
    ^bb0(%in: f32, %in_49: f32, %out: f32):
      %270 = arith.mulf %in, %in_49 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x32xf32>
    %116 = tensor.empty() : tensor<1x16x32xf32>
    %117 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg8 : tensor<32xf32>) outs(%116 : tensor<1x16x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x16x32xf32>
    %118 = tensor.empty() : tensor<1x16x32xf32>
    %119 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%115, %117 : tensor<1x16x32xf32>, tensor<1x16x32xf32>) outs(%118 : tensor<1x16x32xf32>) {
    ^bb0(%in: f32, %in_49: f32, %out: f32):
      %270 = arith.mulf %in, %in_49 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x32xf32>
    %120 = tensor.empty() : tensor<1x16x32xf32>
    %121 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg9 : tensor<32xf32>) outs(%120 : tensor<1x16x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x16x32xf32>
    %122 = tensor.empty() : tensor<1x16x32xf32>
    %123 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%119, %121 : tensor<1x16x32xf32>, tensor<1x16x32xf32>) outs(%122 : tensor<1x16x32xf32>) {
    ^bb0(%in: f32, %in_49: f32, %out: f32):
      %270 = arith.addf %in, %in_49 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x32xf32>
    %collapsed_45 = tensor.collapse_shape %123 [[0, 1], [2]] : tensor<1x16x32xf32> into tensor<16x32xf32>
    %124 = tensor.empty() : tensor<16x128xf32>
    %125 = linalg.fill ins(%cst_32 : f32) outs(%124 : tensor<16x128xf32>) -> tensor<16x128xf32>
    %126 = linalg.matmul ins(%collapsed_45, %arg10 : tensor<16x32xf32>, tensor<32x128xf32>) outs(%125 : tensor<16x128xf32>) -> tensor<16x128xf32>
    %expanded_46 = tensor.expand_shape %126 [[0, 1], [2]] output_shape [1, 16, 128] : tensor<16x128xf32> into tensor<1x16x128xf32>
    %127 = tensor.empty() : tensor<1x16x128xf32>
    %128 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg11 : tensor<128xf32>) outs(%127 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x16x128xf32>
    %129 = tensor.empty() : tensor<1x16x128xf32>
    %130 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_46, %128 : tensor<1x16x128xf32>, tensor<1x16x128xf32>) outs(%129 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %in_49: f32, %out: f32):
      %270 = arith.addf %in, %in_49 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %131 = tensor.empty() : tensor<1x16x128xf32>
    %132 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%130 : tensor<1x16x128xf32>) outs(%131 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.mulf %in, %cst_28 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %133 = tensor.empty() : tensor<1x16x128xf32>
    %134 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%130 : tensor<1x16x128xf32>) outs(%133 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.negf %in : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %135 = tensor.empty() : tensor<1x16x128xf32>
    %136 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%134 : tensor<1x16x128xf32>) outs(%135 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.mulf %in, %cst_27 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %137 = tensor.empty() : tensor<1x16x128xf32>
    %138 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%136 : tensor<1x16x128xf32>) outs(%137 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.mulf %in, %in : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %139 = tensor.empty() : tensor<1x16x128xf32>
    %140 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%138 : tensor<1x16x128xf32>) outs(%139 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.negf %in : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %141 = tensor.empty() : tensor<1x16x128xf32>
    %142 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%136 : tensor<1x16x128xf32>) outs(%141 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = math.absf %in : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %143 = tensor.empty() : tensor<1x16x128xf32>
    %144 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%138 : tensor<1x16x128xf32>) outs(%143 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.divf %cst_26, %in : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %145 = tensor.empty() : tensor<1x16x128xf32>
    %146 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%140 : tensor<1x16x128xf32>) outs(%145 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = math.exp %in : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %147 = tensor.empty() : tensor<1x16x128xf32>
    %148 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%142 : tensor<1x16x128xf32>) outs(%147 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.divf %cst_26, %in : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %149 = tensor.empty() : tensor<1x16x128xf32>
    %150 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%146, %148 : tensor<1x16x128xf32>, tensor<1x16x128xf32>) outs(%149 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %in_49: f32, %out: f32):
      %270 = arith.mulf %in, %in_49 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %151 = tensor.empty() : tensor<1x16x128xi1>
    %152 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%142 : tensor<1x16x128xf32>) outs(%151 : tensor<1x16x128xi1>) {
    ^bb0(%in: f32, %out: i1):
      %270 = arith.cmpf olt, %in, %cst_25 : f32
      linalg.yield %270 : i1
    } -> tensor<1x16x128xi1>
    %153 = tensor.empty() : tensor<1x16x128xf32>
    %154 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%144 : tensor<1x16x128xf32>) outs(%153 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.mulf %in, %cst_24 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %155 = tensor.empty() : tensor<1x16x128xf32>
    %156 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%154 : tensor<1x16x128xf32>) outs(%155 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.addf %in, %cst_23 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %157 = tensor.empty() : tensor<1x16x128xf32>
    %158 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%156, %144 : tensor<1x16x128xf32>, tensor<1x16x128xf32>) outs(%157 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %in_49: f32, %out: f32):
      %270 = arith.mulf %in, %in_49 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %159 = tensor.empty() : tensor<1x16x128xf32>
    %160 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%158 : tensor<1x16x128xf32>) outs(%159 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.addf %in, %cst_22 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %161 = tensor.empty() : tensor<1x16x128xf32>
    %162 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%160, %144 : tensor<1x16x128xf32>, tensor<1x16x128xf32>) outs(%161 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %in_49: f32, %out: f32):
      %270 = arith.mulf %in, %in_49 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %163 = tensor.empty() : tensor<1x16x128xf32>
    %164 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%162 : tensor<1x16x128xf32>) outs(%163 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.addf %in, %cst_21 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %165 = tensor.empty() : tensor<1x16x128xf32>
    %166 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%164, %144 : tensor<1x16x128xf32>, tensor<1x16x128xf32>) outs(%165 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %in_49: f32, %out: f32):
      %270 = arith.mulf %in, %in_49 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %167 = tensor.empty() : tensor<1x16x128xf32>
    %168 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%166 : tensor<1x16x128xf32>) outs(%167 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.addf %in, %cst_20 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %169 = tensor.empty() : tensor<1x16x128xf32>
    %170 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%168, %144 : tensor<1x16x128xf32>, tensor<1x16x128xf32>) outs(%169 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %in_49: f32, %out: f32):
      %270 = arith.mulf %in, %in_49 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %171 = tensor.empty() : tensor<1x16x128xf32>
    %172 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%170 : tensor<1x16x128xf32>) outs(%171 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.addf %in, %cst_19 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %173 = tensor.empty() : tensor<1x16x128xf32>
    %174 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%172, %144 : tensor<1x16x128xf32>, tensor<1x16x128xf32>) outs(%173 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %in_49: f32, %out: f32):
      %270 = arith.mulf %in, %in_49 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %175 = tensor.empty() : tensor<1x16x128xf32>
    %176 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%174 : tensor<1x16x128xf32>) outs(%175 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.addf %in, %cst_18 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %177 = tensor.empty() : tensor<1x16x128xf32>
    %178 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%176, %144 : tensor<1x16x128xf32>, tensor<1x16x128xf32>) outs(%177 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %in_49: f32, %out: f32):
      %270 = arith.mulf %in, %in_49 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %179 = tensor.empty() : tensor<1x16x128xf32>
    %180 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%178 : tensor<1x16x128xf32>) outs(%179 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.addf %in, %cst_17 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %181 = tensor.empty() : tensor<1x16x128xf32>
    %182 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%180, %144 : tensor<1x16x128xf32>, tensor<1x16x128xf32>) outs(%181 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %in_49: f32, %out: f32):
      %270 = arith.mulf %in, %in_49 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %183 = tensor.empty() : tensor<1x16x128xf32>
    %184 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%182 : tensor<1x16x128xf32>) outs(%183 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.addf %in, %cst_16 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %185 = tensor.empty() : tensor<1x16x128xf32>
    %186 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%144 : tensor<1x16x128xf32>) outs(%185 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.mulf %in, %cst_15 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %187 = tensor.empty() : tensor<1x16x128xf32>
    %188 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%186 : tensor<1x16x128xf32>) outs(%187 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.addf %in, %cst_14 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %189 = tensor.empty() : tensor<1x16x128xf32>
    %190 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%188, %144 : tensor<1x16x128xf32>, tensor<1x16x128xf32>) outs(%189 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %in_49: f32, %out: f32):
      %270 = arith.mulf %in, %in_49 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %191 = tensor.empty() : tensor<1x16x128xf32>
    %192 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%190 : tensor<1x16x128xf32>) outs(%191 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.addf %in, %cst_13 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %193 = tensor.empty() : tensor<1x16x128xf32>
    %194 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%192, %144 : tensor<1x16x128xf32>, tensor<1x16x128xf32>) outs(%193 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %in_49: f32, %out: f32):
      %270 = arith.mulf %in, %in_49 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %195 = tensor.empty() : tensor<1x16x128xf32>
    %196 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%194 : tensor<1x16x128xf32>) outs(%195 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.addf %in, %cst_12 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %197 = tensor.empty() : tensor<1x16x128xf32>
    %198 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%196, %144 : tensor<1x16x128xf32>, tensor<1x16x128xf32>) outs(%197 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %in_49: f32, %out: f32):
      %270 = arith.mulf %in, %in_49 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %199 = tensor.empty() : tensor<1x16x128xf32>
    %200 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%198 : tensor<1x16x128xf32>) outs(%199 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.addf %in, %cst_11 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %201 = tensor.empty() : tensor<1x16x128xf32>
    %202 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%200, %144 : tensor<1x16x128xf32>, tensor<1x16x128xf32>) outs(%201 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %in_49: f32, %out: f32):
      %270 = arith.mulf %in, %in_49 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %203 = tensor.empty() : tensor<1x16x128xf32>
    %204 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%202 : tensor<1x16x128xf32>) outs(%203 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.addf %in, %cst_10 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %205 = tensor.empty() : tensor<1x16x128xf32>
    %206 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%204, %144 : tensor<1x16x128xf32>, tensor<1x16x128xf32>) outs(%205 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %in_49: f32, %out: f32):
      %270 = arith.mulf %in, %in_49 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %207 = tensor.empty() : tensor<1x16x128xf32>
    %208 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%206 : tensor<1x16x128xf32>) outs(%207 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.addf %in, %cst_9 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %209 = tensor.empty() : tensor<1x16x128xf32>
    %210 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%208, %144 : tensor<1x16x128xf32>, tensor<1x16x128xf32>) outs(%209 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %in_49: f32, %out: f32):
      %270 = arith.mulf %in, %in_49 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %211 = tensor.empty() : tensor<1x16x128xf32>
    %212 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%210 : tensor<1x16x128xf32>) outs(%211 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.addf %in, %cst_8 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %213 = tensor.empty() : tensor<1x16x128xf32>
    %214 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%152, %184, %212 : tensor<1x16x128xi1>, tensor<1x16x128xf32>, tensor<1x16x128xf32>) outs(%213 : tensor<1x16x128xf32>) {
    ^bb0(%in: i1, %in_49: f32, %in_50: f32, %out: f32):
      %270 = arith.select %in, %in_49, %in_50 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %215 = tensor.empty() : tensor<1x16x128xf32>
    %216 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%150, %214 : tensor<1x16x128xf32>, tensor<1x16x128xf32>) outs(%215 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %in_49: f32, %out: f32):
      %270 = arith.mulf %in, %in_49 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %217 = tensor.empty() : tensor<1x16x128xi1>
    %218 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%140 : tensor<1x16x128xf32>) outs(%217 : tensor<1x16x128xi1>) {
    ^bb0(%in: f32, %out: i1):
      %270 = arith.cmpf olt, %in, %cst_7 : f32
      linalg.yield %270 : i1
    } -> tensor<1x16x128xi1>
    %219 = tensor.empty() : tensor<1x16x128xf32>
    %220 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%218, %216 : tensor<1x16x128xi1>, tensor<1x16x128xf32>) outs(%219 : tensor<1x16x128xf32>) {
    ^bb0(%in: i1, %in_49: f32, %out: f32):
      %270 = arith.select %in, %cst_32, %in_49 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %221 = tensor.empty() : tensor<1x16x128xi1>
    %222 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%136 : tensor<1x16x128xf32>) outs(%221 : tensor<1x16x128xi1>) {
    ^bb0(%in: f32, %out: i1):
      %270 = arith.cmpf olt, %in, %cst_32 : f32
      linalg.yield %270 : i1
    } -> tensor<1x16x128xi1>
    %223 = tensor.empty() : tensor<1x16x128xf32>
    %224 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%220 : tensor<1x16x128xf32>) outs(%223 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.subf %cst_25, %in : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %225 = tensor.empty() : tensor<1x16x128xf32>
    %226 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%222, %224, %220 : tensor<1x16x128xi1>, tensor<1x16x128xf32>, tensor<1x16x128xf32>) outs(%225 : tensor<1x16x128xf32>) {
    ^bb0(%in: i1, %in_49: f32, %in_50: f32, %out: f32):
      %270 = arith.select %in, %in_49, %in_50 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %227 = tensor.empty() : tensor<1x16x128xf32>
    %228 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%138 : tensor<1x16x128xf32>) outs(%227 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.mulf %in, %cst_6 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %229 = tensor.empty() : tensor<1x16x128xf32>
    %230 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%228 : tensor<1x16x128xf32>) outs(%229 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.addf %in, %cst_5 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %231 = tensor.empty() : tensor<1x16x128xf32>
    %232 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%230, %138 : tensor<1x16x128xf32>, tensor<1x16x128xf32>) outs(%231 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %in_49: f32, %out: f32):
      %270 = arith.mulf %in, %in_49 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %233 = tensor.empty() : tensor<1x16x128xf32>
    %234 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%232 : tensor<1x16x128xf32>) outs(%233 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.addf %in, %cst_4 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %235 = tensor.empty() : tensor<1x16x128xf32>
    %236 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%234, %138 : tensor<1x16x128xf32>, tensor<1x16x128xf32>) outs(%235 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %in_49: f32, %out: f32):
      %270 = arith.mulf %in, %in_49 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %237 = tensor.empty() : tensor<1x16x128xf32>
    %238 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%236 : tensor<1x16x128xf32>) outs(%237 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.addf %in, %cst_3 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %239 = tensor.empty() : tensor<1x16x128xf32>
    %240 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%238, %138 : tensor<1x16x128xf32>, tensor<1x16x128xf32>) outs(%239 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %in_49: f32, %out: f32):
      %270 = arith.mulf %in, %in_49 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %241 = tensor.empty() : tensor<1x16x128xf32>
    %242 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%240 : tensor<1x16x128xf32>) outs(%241 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.addf %in, %cst_2 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %243 = tensor.empty() : tensor<1x16x128xf32>
    %244 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%242, %138 : tensor<1x16x128xf32>, tensor<1x16x128xf32>) outs(%243 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %in_49: f32, %out: f32):
      %270 = arith.mulf %in, %in_49 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %245 = tensor.empty() : tensor<1x16x128xf32>
    %246 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%244 : tensor<1x16x128xf32>) outs(%245 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.addf %in, %cst_1 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %247 = tensor.empty() : tensor<1x16x128xf32>
    %248 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%246, %138 : tensor<1x16x128xf32>, tensor<1x16x128xf32>) outs(%247 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %in_49: f32, %out: f32):
      %270 = arith.mulf %in, %in_49 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %249 = tensor.empty() : tensor<1x16x128xf32>
    %250 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%248 : tensor<1x16x128xf32>) outs(%249 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.addf %in, %cst_0 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %251 = tensor.empty() : tensor<1x16x128xf32>
    %252 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%136, %250 : tensor<1x16x128xf32>, tensor<1x16x128xf32>) outs(%251 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %in_49: f32, %out: f32):
      %270 = arith.mulf %in, %in_49 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %253 = tensor.empty() : tensor<1x16x128xf32>
    %254 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%252 : tensor<1x16x128xf32>) outs(%253 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %270 = arith.subf %cst_26, %in : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %255 = tensor.empty() : tensor<1x16x128xi1>
    %256 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%142 : tensor<1x16x128xf32>) outs(%255 : tensor<1x16x128xi1>) {
    ^bb0(%in: f32, %out: i1):
      %270 = arith.cmpf olt, %in, %cst_26 : f32
      linalg.yield %270 : i1
    } -> tensor<1x16x128xi1>
    %257 = tensor.empty() : tensor<1x16x128xf32>
    %258 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%256, %254, %226 : tensor<1x16x128xi1>, tensor<1x16x128xf32>, tensor<1x16x128xf32>) outs(%257 : tensor<1x16x128xf32>) {
    ^bb0(%in: i1, %in_49: f32, %in_50: f32, %out: f32):
      %270 = arith.select %in, %in_49, %in_50 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %259 = tensor.empty() : tensor<1x16x128xf32>
    %260 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%132, %258 : tensor<1x16x128xf32>, tensor<1x16x128xf32>) outs(%259 : tensor<1x16x128xf32>) {
    ^bb0(%in: f32, %in_49: f32, %out: f32):
      %270 = arith.mulf %in, %in_49 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x128xf32>
    %collapsed_47 = tensor.collapse_shape %260 [[0, 1], [2]] : tensor<1x16x128xf32> into tensor<16x128xf32>
    %261 = tensor.empty() : tensor<16x32xf32>
    %262 = linalg.fill ins(%cst_32 : f32) outs(%261 : tensor<16x32xf32>) -> tensor<16x32xf32>
    %263 = linalg.matmul ins(%collapsed_47, %arg12 : tensor<16x128xf32>, tensor<128x32xf32>) outs(%262 : tensor<16x32xf32>) -> tensor<16x32xf32>
    %expanded_48 = tensor.expand_shape %263 [[0, 1], [2]] output_shape [1, 16, 32] : tensor<16x32xf32> into tensor<1x16x32xf32>
    %264 = tensor.empty() : tensor<1x16x32xf32>
    %265 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg13 : tensor<32xf32>) outs(%264 : tensor<1x16x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x16x32xf32>
    %266 = tensor.empty() : tensor<1x16x32xf32>
    %267 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_48, %265 : tensor<1x16x32xf32>, tensor<1x16x32xf32>) outs(%266 : tensor<1x16x32xf32>) {
    ^bb0(%in: f32, %in_49: f32, %out: f32):
      %270 = arith.addf %in, %in_49 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x32xf32>
    %268 = tensor.empty() : tensor<1x16x32xf32>
    %269 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%91, %267 : tensor<1x16x32xf32>, tensor<1x16x32xf32>) outs(%268 : tensor<1x16x32xf32>) {
    ^bb0(%in: f32, %in_49: f32, %out: f32):
      %270 = arith.addf %in, %in_49 : f32
      linalg.yield %270 : f32
    } -> tensor<1x16x32xf32>
    func.return %269 : tensor<1x16x32xf32>
  }
}
