module attributes {tfl.description = "MLIR Converted.", tfl.metadata = {CONVERSION_METADATA = "\10\00\00\00\00\00\00\00\08\00\0E\00\08\00\04\00\08\00\00\00\10\00\00\00$\00\00\00\00\00\06\00\08\00\04\00\06\00\00\00\04\00\00\00\00\00\00\00\0C\00\18\00\14\00\10\00\0C\00\04\00\0C\00\00\00;\86\ADZ*U\03i\03\00\00\00\02\00\00\00\04\00\00\00\06\00\00\002.21.0\00\00", min_runtime_version = "1.13.1\00\00\00\00\00\00\00\00\00\00"}, tfl.schema_version = 3 : i32} {
  func.func @main(%arg0: tensor<1x16x32xf32>) -> tensor<1x16x32xf32> attributes {tf.entry_function = {inputs = "x", outputs = "Identity"}} {
    %0 = "tosa.const"() <{values = dense<9.99999974E-6> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
    %1 = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf32>}> : () -> tensor<1xf32>
    %2 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
    %3 = "tosa.const"() <{values = dense<3.125000e-02> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
    %4 = "tosa.const"() <{values = dense<[[[0.0308023263, 0.030943539, -0.0281229634, -5.10236714E-4, 0.230961666, -0.0283510666, 0.0414953269, -0.0859695226, 0.0531315058, -0.162426978, 0.0675011873, 0.121588714, -0.121125311, 0.0881298482, -0.0593086518, 0.020336736, -0.172430351, -8.275640e-02, -0.0828663781, 0.0646202564, -0.00749857118, -0.0886716172, 7.278120e-02, -0.202741086, -0.00673415558, 0.037536107, -0.155506462, -0.0253957789, 0.023407748, 0.0312052593, -0.128212333, -0.0108160181]]]> : tensor<1x1x32xf32>}> : () -> tensor<1x1x32xf32>
    %5 = "tosa.const"() <{values = dense<[[[0.999841928, 0.907738268, 1.14100814, 0.983928382, 0.96252644, 1.07154047, 0.9316805, 1.01125956, 0.986156225, 0.998495697, 0.98443979, 0.857528567, 1.09834111, 0.960144996, 1.03728878, 8.436350e-01, 1.00307417, 0.979632556, 0.873265266, 1.02825785, 1.00278771, 1.0494293, 0.933257281, 0.946462094, 1.00069571, 0.958958685, 1.04197752, 0.89506942, 1.09746039, 1.05024171, 0.965866684, 1.09553218]]]> : tensor<1x1x32xf32>}> : () -> tensor<1x1x32xf32>
    %6 = tosa.reduce_sum %arg0 {axis = 2 : i32} : (tensor<1x16x32xf32>) -> tensor<1x16x1xf32>
    %7 = tosa.mul %6, %3, %2 : (tensor<1x16x1xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<1x16x1xf32>
    %8 = tosa.negate %7, %1, %1 : (tensor<1x16x1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x16x1xf32>
    %9 = tosa.sub %arg0, %7 : (tensor<1x16x32xf32>, tensor<1x16x1xf32>) -> tensor<1x16x32xf32>
    %10 = tosa.mul %9, %9, %2 : (tensor<1x16x32xf32>, tensor<1x16x32xf32>, tensor<1xi8>) -> tensor<1x16x32xf32>
    %11 = tosa.reduce_sum %10 {axis = 2 : i32} : (tensor<1x16x32xf32>) -> tensor<1x16x1xf32>
    %12 = tosa.mul %11, %3, %2 : (tensor<1x16x1xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<1x16x1xf32>
    %13 = tosa.add %12, %0 : (tensor<1x16x1xf32>, tensor<1x1x1xf32>) -> tensor<1x16x1xf32>
    %14 = tosa.rsqrt %13 : (tensor<1x16x1xf32>) -> tensor<1x16x1xf32>
    %15 = tosa.mul %14, %5, %2 : (tensor<1x16x1xf32>, tensor<1x1x32xf32>, tensor<1xi8>) -> tensor<1x16x32xf32>
    %16 = tosa.mul %8, %15, %2 : (tensor<1x16x1xf32>, tensor<1x16x32xf32>, tensor<1xi8>) -> tensor<1x16x32xf32>
    %17 = tosa.add %16, %4 : (tensor<1x16x32xf32>, tensor<1x1x32xf32>) -> tensor<1x16x32xf32>
    %18 = tosa.mul %arg0, %15, %2 : (tensor<1x16x32xf32>, tensor<1x16x32xf32>, tensor<1xi8>) -> tensor<1x16x32xf32>
    %19 = tosa.add %18, %17 : (tensor<1x16x32xf32>, tensor<1x16x32xf32>) -> tensor<1x16x32xf32>
    return %19 : tensor<1x16x32xf32>
  }
}
