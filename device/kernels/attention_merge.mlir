// The cross-tile merge of flash attention whose keys are split over `splits` tiles: `rows`
// query rows of `width`. Split i left its output o[i] with its running maxima m[i] and sums
// l[i] (f32, [splits][rows]):
//   rows (panels false): o[i] f32 rows divided by its sums, [splits][rows][width];
//     w_i = l[i][j] * exp(m[i][j] - M), D = sum_i w_i;
//   panels (panels true): o[i] unnormalized, transposed in the 16-column panel order of
//     @ipu_panel_index (common.mlir) with `width` panel rows and `rows` columns, in the
//     partials precision, split i's at element i * width * rows;
//     w_i = exp(m[i][j] - M), D = sum_i w_i * l[i][j].
// Per row j, in f32: M = max_i m[i][j]; w_i is 0 when m[i][j] is -inf or l[i][j] is 0 (a
// split that saw no visible key of the row); out[j][e] = (sum_i w_i * o[i][j][e]) / D rounded
// once to `precision` (0 when D is 0); sums in order i = 0, 1, .... Separate multiplies and
// adds; exp is libm expf (as in attention_columns.mlir). dst must not overlap the inputs.
//
// Run-time args: [o_offset, m_offset, l_offset, dst_offset].

// ipu.include "common.mlir"

func.func private @body(%mem: memref<?xi8>, %args: memref<?xi32>, %variant: index) {
  %precision = arith.constant {ipu.param = "precision"} 1 : index
  %partials = arith.constant {ipu.param = "partials"} 1 : index
  %splits = arith.constant {ipu.param = "splits"} 2 : index
  %rows = arith.constant {ipu.param = "rows"} 16 : index
  %width = arith.constant {ipu.param = "width"} 64 : index
  %panels = arith.constant {ipu.param = "panels"} false
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  // m and l are f32 (precision code 0), and so are o's rows.
  %f32 = arith.constant 0 : index
  %s0 = arith.constant 0 : i32
  %zero = arith.constant 0.0 : f32
  %neg_inf = arith.constant 0xFF800000 : f32
  %o_off = func.call @ipu_arg_index(%args, %c0) : (memref<?xi32>, index) -> index
  %m_off = func.call @ipu_arg_index(%args, %c1) : (memref<?xi32>, index) -> index
  %l_off = func.call @ipu_arg_index(%args, %c2) : (memref<?xi32>, index) -> index
  %dst = func.call @ipu_arg_index(%args, %c3) : (memref<?xi32>, index) -> index
  %plane = arith.muli %rows, %width : index
  %o_precision = arith.select %panels, %partials, %f32 : index
  scf.for %j = %c0 to %rows step %c1 {
    %top = scf.for %i = %c0 to %splits step %c1 iter_args(%acc = %neg_inf) -> (f32) {
      %at = arith.muli %i, %rows : index
      %mi = arith.addi %at, %j : index
      %m = func.call @ipu_load(%mem, %m_off, %mi, %f32, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
      %mx = arith.maximumf %acc, %m : f32
      scf.yield %mx : f32
    }
    %total = scf.for %i = %c0 to %splits step %c1 iter_args(%acc = %zero) -> (f32) {
      %w = func.call @merge_weight(%mem, %m_off, %l_off, %i, %j, %rows, %top, %panels) : (memref<?xi8>, index, index, index, index, index, f32, i1) -> f32
      %at = arith.muli %i, %rows : index
      %li = arith.addi %at, %j : index
      %l = func.call @ipu_load(%mem, %l_off, %li, %f32, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
      %wl = arith.mulf %w, %l : f32
      %d = arith.select %panels, %wl, %w : f32
      %next = arith.addf %acc, %d : f32
      scf.yield %next : f32
    }
    %empty = arith.cmpf oeq, %total, %zero : f32
    %base = arith.muli %j, %width : index
    scf.for %e = %c0 to %width step %c1 {
      %row_e = arith.addi %base, %e : index
      %panel_e = func.call @ipu_panel_index(%e, %j, %width) : (index, index, index) -> index
      %within = arith.select %panels, %panel_e, %row_e : index
      %sum = scf.for %i = %c0 to %splits step %c1 iter_args(%acc = %zero) -> (f32) {
        %w = func.call @merge_weight(%mem, %m_off, %l_off, %i, %j, %rows, %top, %panels) : (memref<?xi8>, index, index, index, index, index, f32, i1) -> f32
        %at = arith.muli %i, %plane : index
        %oi = arith.addi %at, %within : index
        %o = func.call @ipu_load(%mem, %o_off, %oi, %o_precision, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
        %wo = arith.mulf %w, %o : f32
        %next = arith.addf %acc, %wo : f32
        scf.yield %next : f32
      }
      %q = arith.divf %sum, %total : f32
      %y = arith.select %empty, %zero, %q : f32
      func.call @ipu_store(%mem, %dst, %row_e, %precision, %s0, %y) : (memref<?xi8>, index, index, index, i32, f32) -> ()
    }
  }
  return
}

// w_i of row j: exp(m[i][j] - top), times l[i][j] unless `panels`; 0 when l[i][j] is 0 or
// m[i][j] is -inf.
func.func private @merge_weight(%mem: memref<?xi8>, %m_off: index, %l_off: index, %i: index, %j: index, %rows: index, %top: f32, %panels: i1) -> f32 {
  %f32 = arith.constant 0 : index
  %s0 = arith.constant 0 : i32
  %zero = arith.constant 0.0 : f32
  %neg_inf = arith.constant 0xFF800000 : f32
  %at = arith.muli %i, %rows : index
  %k = arith.addi %at, %j : index
  %m = func.call @ipu_load(%mem, %m_off, %k, %f32, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
  %l = func.call @ipu_load(%mem, %l_off, %k, %f32, %s0) : (memref<?xi8>, index, index, index, i32) -> f32
  %dm = arith.subf %m, %top : f32
  %ex = math.exp %dm : f32
  %lex = arith.mulf %l, %ex : f32
  %w = arith.select %panels, %ex, %lex : f32
  %hidden = arith.cmpf oeq, %m, %neg_inf : f32
  %none = arith.cmpf oeq, %l, %zero : f32
  %skip = arith.ori %hidden, %none : i1
  %r = arith.select %skip, %zero, %w : f32
  return %r : f32
}
