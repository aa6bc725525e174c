// ipu-select-finalist needs ipu-lower-mid's finalists.
// RUN: ipu-opt %s -p 'builtin.module(ipu-select-finalist)' --verify-diagnostics -o /dev/null

// expected-error@below {{ipu-select-finalist: the module has no 'ipu.finalists' attribute; run ipu-lower-mid first}}
module {
  func.func @gelu(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
    %0 = "ipu.gelu"(%x) : (tensor<4x8xf16>) -> tensor<4x8xf16>
    return %0 : tensor<4x8xf16>
  }
}
