// A 3x3 convolution, stride 2, NCHW with the filter and bias as arguments (PyTorch's layout),
// the bias broadcast into the init.
func.func @main(%x: tensor<1x3x9x9xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %0 = tensor.empty() : tensor<1x4x4x4xf32>
  %1 = linalg.broadcast ins(%b : tensor<4xf32>) outs(%0 : tensor<1x4x4x4xf32>) dimensions = [0, 2, 3]
  %2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%x, %w : tensor<1x3x9x9xf32>, tensor<4x3x3x3xf32>) outs(%1 : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %2 : tensor<1x4x4x4xf32>
}
