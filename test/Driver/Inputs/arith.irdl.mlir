// Checked by irdl-file.mlir: an IRDL file may not redeclare a dialect ipu-opt already has.
irdl.dialect @arith {
  irdl.operation @extra {
  }
}
