// Transposes a dense row-major `rows x cols` block into a dense row-major `cols x rows` block:
// out[c, r] = in[r, c], i.e. source element r * cols + c goes to destination element
// c * rows + r. Elements are moved as raw bytes (1, 2 or 4, from `precision`), so FP8 codes,
// f16/f32 NaN payloads and negative zeros move unchanged; nothing is rounded.
// The source is read in order and the destination written with stride `rows`; the two ranges
// must not overlap (an in-place transpose of a non-square block would overwrite unread input).
//
// Run-time args: [src_offset, dst_offset].

// ipu.include "common.mlir"

func.func private @body(%mem: memref<?xi8>, %args: memref<?xi32>, %variant: index) {
  %precision = arith.constant {ipu.param = "precision"} 1 : index
  %rows = arith.constant {ipu.param = "rows"} 16 : index
  %cols = arith.constant {ipu.param = "cols"} 32 : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %false = arith.constant false
  %src = func.call @ipu_arg_index(%args, %c0) : (memref<?xi32>, index) -> index
  %dst = func.call @ipu_arg_index(%args, %c1) : (memref<?xi32>, index) -> index
  %bytes = func.call @ipu_bytes(%precision) : (index) -> index
  scf.for %r = %c0 to %rows step %c1 {
    %row_base = arith.muli %r, %cols : index
    scf.for %c = %c0 to %cols step %c1 {
      %src_index = arith.addi %row_base, %c : index
      %src_rel = arith.muli %src_index, %bytes : index
      %from = arith.addi %src, %src_rel : index
      %col_base = arith.muli %c, %rows : index
      %dst_index = arith.addi %col_base, %r : index
      %dst_rel = arith.muli %dst_index, %bytes : index
      %to = arith.addi %dst, %dst_rel : index
      func.call @ipu_move(%mem, %from, %to, %bytes, %false) : (memref<?xi8>, index, index, index, i1) -> ()
    }
  }
  return
}
