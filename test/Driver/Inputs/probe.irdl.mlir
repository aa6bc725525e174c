// A small extra dialect for irdl-file.mlir: one op taking and returning a tensor of the same
// type, with a required integer attribute.
irdl.dialect @probe {
  irdl.operation @scale {
    %tensor = irdl.base "!builtin.tensor"
    %factor = irdl.base "#builtin.integer"
    irdl.operands(input: %tensor)
    irdl.results(result: %tensor)
    irdl.attributes {"factor" = %factor}
  }
}
