func.func @integer(%x: tensor<4xi32>) -> tensor<4xi32> {
  return %x : tensor<4xi32>
}
func.func @dynamic(%x: tensor<?xf32>) -> tensor<?xf32> {
  return %x : tensor<?xf32>
}
// tosa.custom has no upstream lowering: the pipeline fails at it.
func.func @lowering(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tosa.custom %x {domain_name = "acme", implementation_attrs = "", operator_name = "frobnicate"} : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
