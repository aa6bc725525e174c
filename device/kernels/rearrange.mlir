// Reorders a matrix block between row-major and an AMP order, with zero padding.
//
// The AMP side is a `rows_padded x cols_padded` block in a 16-column panel order (see
// @ipu_panel_index in common.mlir: element (r, c) at ((c / 16) * rows_padded + r) * 16 + c % 16;
// cols_padded is a multiple of 16). amp_left groups the K columns of a left operand, amp_right
// the output columns of the weights (K-major inside a group), amp_output the output columns of
// the product: the index formula is the same, the role of the axes differs.
// The row-major side is a dense `rows x cols` block (row stride `cols`).
//   to_amp:   AMP row `offset + i` takes row-major row i (i < rows, columns < cols); every
//             other element of the AMP block (padding rows and columns) is written as zero.
//   from_amp: row-major row i takes AMP row `offset + i`, columns < cols; padding is dropped.
// Elements are moved as raw bytes (1, 2 or 4), so FP8 codes and NaNs move unchanged.
//
// Run-time args: [src_offset, dst_offset].

// ipu.include "common.mlir"

func.func private @body(%mem: memref<?xi8>, %args: memref<?xi32>, %variant: index) {
  %precision = arith.constant {ipu.param = "precision"} 1 : index
  %to_amp = arith.constant {ipu.param = "to_amp"} true
  %offset = arith.constant {ipu.param = "offset"} 0 : index
  %rows = arith.constant {ipu.param = "rows"} 31 : index
  %rows_padded = arith.constant {ipu.param = "rows_padded"} 32 : index
  %cols = arith.constant {ipu.param = "cols"} 32 : index
  %cols_padded = arith.constant {ipu.param = "cols_padded"} 32 : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %false = arith.constant false
  %true = arith.constant true
  %src = func.call @ipu_arg_index(%args, %c0) : (memref<?xi32>, index) -> index
  %dst = func.call @ipu_arg_index(%args, %c1) : (memref<?xi32>, index) -> index
  %bytes = func.call @ipu_bytes(%precision) : (index) -> index
  %row_end = arith.addi %offset, %rows : index
  scf.if %to_amp {
    scf.for %r = %c0 to %rows_padded step %c1 {
      %below = arith.cmpi uge, %r, %offset : index
      %above = arith.cmpi ult, %r, %row_end : index
      %in_rows = arith.andi %below, %above : i1
      %i = arith.subi %r, %offset : index
      %row_base = arith.muli %i, %cols : index
      scf.for %c = %c0 to %cols_padded step %c1 {
        %in_cols = arith.cmpi ult, %c, %cols : index
        %inside = arith.andi %in_rows, %in_cols : i1
        %pad = arith.xori %inside, %true : i1
        %src_index = arith.addi %row_base, %c : index
        %src_rel = arith.muli %src_index, %bytes : index
        %from = arith.addi %src, %src_rel : index
        %dst_index = func.call @ipu_panel_index(%r, %c, %rows_padded) : (index, index, index) -> index
        %dst_rel = arith.muli %dst_index, %bytes : index
        %to = arith.addi %dst, %dst_rel : index
        func.call @ipu_move(%mem, %from, %to, %bytes, %pad) : (memref<?xi8>, index, index, index, i1) -> ()
      }
    }
  } else {
    scf.for %i = %c0 to %rows step %c1 {
      %r = arith.addi %i, %offset : index
      %row_base = arith.muli %i, %cols : index
      scf.for %c = %c0 to %cols step %c1 {
        %src_index = func.call @ipu_panel_index(%r, %c, %rows_padded) : (index, index, index) -> index
        %src_rel = arith.muli %src_index, %bytes : index
        %from = arith.addi %src, %src_rel : index
        %dst_index = arith.addi %row_base, %c : index
        %dst_rel = arith.muli %dst_index, %bytes : index
        %to = arith.addi %dst, %dst_rel : index
        func.call @ipu_move(%mem, %from, %to, %bytes, %false) : (memref<?xi8>, index, index, index, i1) -> ()
      }
    }
  }
  return
}
