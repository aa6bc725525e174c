module {
  func.func @main(%arg0: tensor<1x16x32xf32>) -> tensor<1x16x32xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 9.99999974E-6 : f32
    %cst_1 = arith.constant dense_resource<torch_tensor_32_torch.float32_1> : tensor<32xf32>
    %cst_2 = arith.constant dense_resource<torch_tensor_32_torch.float32> : tensor<32xf32>
    %cst_3 = arith.constant 3.200000e+01 : f32
    %0 = tensor.empty() : tensor<1x16x1xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x16x1xf32>) -> tensor<1x16x1xf32>
    %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0 : tensor<1x16x32xf32>) outs(%1 : tensor<1x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %16 = arith.addf %in, %out : f32
      linalg.yield %16 : f32
    } -> tensor<1x16x1xf32>
    %3 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%2 : tensor<1x16x1xf32>) outs(%0 : tensor<1x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %16 = arith.divf %in, %cst_3 : f32
      linalg.yield %16 : f32
    } -> tensor<1x16x1xf32>
    %4 = tensor.empty() : tensor<1x16x32xf32>
    %collapsed = tensor.collapse_shape %3 [[0], [1, 2]] : tensor<1x16x1xf32> into tensor<1x16xf32>
    %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%collapsed : tensor<1x16xf32>) outs(%4 : tensor<1x16x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x16x32xf32>
    %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0, %5 : tensor<1x16x32xf32>, tensor<1x16x32xf32>) outs(%4 : tensor<1x16x32xf32>) {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %16 = arith.subf %in, %in_5 : f32
      linalg.yield %16 : f32
    } -> tensor<1x16x32xf32>
    %7 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%6, %6 : tensor<1x16x32xf32>, tensor<1x16x32xf32>) outs(%4 : tensor<1x16x32xf32>) {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %16 = arith.mulf %in, %in_5 : f32
      linalg.yield %16 : f32
    } -> tensor<1x16x32xf32>
    %8 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%7 : tensor<1x16x32xf32>) outs(%1 : tensor<1x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %16 = arith.addf %in, %out : f32
      linalg.yield %16 : f32
    } -> tensor<1x16x1xf32>
    %9 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%8 : tensor<1x16x1xf32>) outs(%0 : tensor<1x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %16 = arith.divf %in, %cst_3 : f32
      linalg.yield %16 : f32
    } -> tensor<1x16x1xf32>
    %10 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%9 : tensor<1x16x1xf32>) outs(%0 : tensor<1x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %16 = arith.addf %in, %cst_0 : f32
      linalg.yield %16 : f32
    } -> tensor<1x16x1xf32>
    %11 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%10 : tensor<1x16x1xf32>) outs(%0 : tensor<1x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %16 = math.rsqrt %in : f32
      linalg.yield %16 : f32
    } -> tensor<1x16x1xf32>
    %collapsed_4 = tensor.collapse_shape %11 [[0], [1, 2]] : tensor<1x16x1xf32> into tensor<1x16xf32>
    %12 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%collapsed_4 : tensor<1x16xf32>) outs(%4 : tensor<1x16x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<1x16x32xf32>
    %13 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%6, %12 : tensor<1x16x32xf32>, tensor<1x16x32xf32>) outs(%4 : tensor<1x16x32xf32>) {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %16 = arith.mulf %in, %in_5 : f32
      linalg.yield %16 : f32
    } -> tensor<1x16x32xf32>
    %14 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%13, %cst_2 : tensor<1x16x32xf32>, tensor<32xf32>) outs(%4 : tensor<1x16x32xf32>) {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %16 = arith.mulf %in, %in_5 : f32
      linalg.yield %16 : f32
    } -> tensor<1x16x32xf32>
    %15 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%14, %cst_1 : tensor<1x16x32xf32>, tensor<32xf32>) outs(%4 : tensor<1x16x32xf32>) {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %16 = arith.addf %in, %in_5 : f32
      linalg.yield %16 : f32
    } -> tensor<1x16x32xf32>
    func.return %15 : tensor<1x16x32xf32>
  }
}
{-#
  dialect_resources: {
    builtin: {
      torch_tensor_32_torch.float32_1: "0x040000003FD80C3E7AD785BC54D8123E403B4A3DA8EB7CBCA92F943B1365C93DE6EFD63D9A5DC23D462C74BE4AA98C3C7F9E0A3D48256ABD439D21BC2BBC50BC402DE03DF038E83C34B1193EF257023ED81A18BE4356073ED6E9D8BCA64690BD0020FC3B9CAE80BDED9E08BD9193CF3D259D39BE7FC484BDA7C9F23DE274BF3D89B5D6BD",
      torch_tensor_32_torch.float32: "0x040000009864463BFAC82E3E4E2936BEEAFF583D8E9B073E354DBE3D93A82C3DC37BAE3DA61266BE4024E3BD43DE4FBBEBF0273E5EB6AC3D2F2924BEA92C9BBD690BB23C88D2913D340A8BBDF735013E7DCA67BCA2E27E3D9E460BBD6640923CCA4E1EBEAC547DBBB1B88EBD1482BEBC6C0CD23D5816B2BDB1654CBD3C4F6CBC464916BD"
    }
  }
#-}
