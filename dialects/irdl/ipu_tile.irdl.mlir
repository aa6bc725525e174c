// The `ipu_tile` dialect: the low level of a design, after `ipu-lower-to-tiles`. Declared in
// IRDL so that stock `mlir-opt-22 --irdl-file=` reads and verifies it too.
//
// A tile program lives in a nested `builtin.module` marked `ipu_tile.tiles = N : i64` (the
// device's tile count) and `ipu_tile.function = "name"` (the graph function it implements).
// Its ops carry no SSA values: buffers are named by `id`, steps run in block order within
// their `program` ("initialize" or "run"). Large tables are dense arrays whose row layouts
// are documented per op below. IRDL checks that the listed attributes exist with the right
// kinds (each attribute gets its own constraint variable: IRDL unifies the uses of one);
// ids, tile numbers, row layouts and address ranges are verified in Rust when a pass reads
// the program (typed views: dialects/src/tile.rs; the reader: passes/src/lower/ir/read.rs).
irdl.dialect @ipu_tile {
  // A kernel specialization: `index` (what runs refer to), its seed-style `name`
  // (gemm_f8_interleaved_k32_c64_r32_r34) and its full parameters `spec` (the device's
  // KernelSpec, JSON).
  irdl.operation @kernel {
    %index = irdl.base "#builtin.integer"
    %name = irdl.base "#builtin.string"
    %spec = irdl.base "#builtin.string"
    irdl.attributes {"index" = %index, "name" = %name, "spec" = %spec}
  }

  // A logical buffer: `bytes` bytes of memory `class` ("standard" / "interleaved") on each of
  // `tiles` (array<i32>, ascending), all at one address; `live` = array<i64: first, last>
  // step of the run program. Storage placement adds `address = N : i64` (absolute).
  irdl.operation @buffer {
    %id = irdl.base "#builtin.integer"
    %name = irdl.base "#builtin.string"
    %class = irdl.base "#builtin.string"
    %bytes = irdl.base "#builtin.integer"
    %tiles = irdl.base "#builtin.dense_array"
    %live = irdl.base "#builtin.dense_array"
    irdl.attributes {"id" = %id, "name" = %name, "class" = %class, "bytes" = %bytes, "tiles" = %tiles, "live" = %live}
  }

  // A host stream of a model tensor: `role` "input" / "weight" / "output", the host
  // `precision` and `shape`, and its `pieces`. A piece is `bytes` contiguous bytes of a
  // buffer on a tile, a row (tile, buffer, byte offset in the buffer, byte offset in the
  // C-order tensor, bytes); a strided piece adds (runs, stride): `runs` equal runs of
  // bytes / runs device bytes, run r from tensor byte offset + r * stride (the host gathers
  // an operand straight into a tile's AMP order); a padded piece adds (runs, stride, pad):
  // the last `pad` bytes of every run are zeros, not tensor bytes (a padded 16-element
  // group). When every piece is contiguous, `pieces` is one dense array of rows of 5;
  // otherwise an array with one dense array per piece, of 5, 7 or 8 entries. Weights carry
  // their `value` (a dense elements attribute of the tensor).
  // An FP8 stream (the host encodes the tensor's values in FP8 E4M3 while streaming) may
  // carry an optional `scale_exp` (i64 in -31..=31, value = code * 2^scale_exp; absent: 0),
  // checked by the Rust reader (IRDL lists only the required attributes). An input stream
  // may carry an optional `iterations` (i64, the tensor's leading axis): a repeat's
  // per-iteration stack, its pieces placing one slice and its write, in the repeat's body,
  // streaming slice e on its e-th execution.
  irdl.operation @stream {
    %name = irdl.base "#builtin.string"
    %role = irdl.base "#builtin.string"
    %precision = irdl.base "#builtin.string"
    %shape = irdl.base "#builtin.dense_array"
    %rows = irdl.base "#builtin.dense_array"
    %row_list = irdl.base "#builtin.array"
    %pieces = irdl.any_of(%rows, %row_list)
    irdl.attributes {"name" = %name, "role" = %role, "precision" = %precision, "shape" = %shape, "pieces" = %pieces}
  }

  // Host writes the stream's bytes into tile memory (a step of `program`).
  irdl.operation @host_write {
    %program = irdl.base "#builtin.string"
    %stream = irdl.base "#builtin.string"
    irdl.attributes {"program" = %program, "stream" = %stream}
  }

  // Tile memory of the stream is read back to the host.
  irdl.operation @host_read {
    %program = irdl.base "#builtin.string"
    %stream = irdl.base "#builtin.string"
    irdl.attributes {"program" = %program, "stream" = %stream}
  }

  // A compute step: kernel runs of every tile, for the op named by `provenance`. `runs` is
  // a sequence of records (tile, kernel index, argument count, then per argument a pair:
  // (buffer, byte offset) for an address, (-1, value) for a plain value).
  irdl.operation @compute {
    %program = irdl.base "#builtin.string"
    %provenance = irdl.base "#builtin.string"
    %runs = irdl.base "#builtin.dense_array"
    irdl.attributes {"program" = %program, "provenance" = %provenance, "runs" = %runs}
  }

  // An exchange phase (with the sync before it). `moves` is a sequence of records (source
  // tile, source buffer, source offset, destination buffer, destination offset, bytes,
  // destination count, destination tiles...). `ipu-lower-exchanges` adds `schedule` rows of 4
  // (move, byte offset, bytes, cycle slot), `schedule_key` (hash of the moves' tiles and
  // sizes: what the schedule depends on) and `cycles` (the phase's scheduled cycles).
  irdl.operation @exchange {
    %program = irdl.base "#builtin.string"
    %phase = irdl.base "#builtin.integer"
    %moves = irdl.base "#builtin.dense_array"
    irdl.attributes {"program" = %program, "phase" = %phase, "moves" = %moves}
  }

  // A global sync with no exchange.
  irdl.operation @sync {
    %program = irdl.base "#builtin.string"
    irdl.attributes {"program" = %program}
  }

  // A structured repeat: the `steps` step ops that follow (nested repeats and their bodies
  // counted) run `count` times. The body is one copy of the steps, not unrolled.
  irdl.operation @repeat {
    %program = irdl.base "#builtin.string"
    %count = irdl.base "#builtin.integer"
    %steps = irdl.base "#builtin.integer"
    irdl.attributes {"program" = %program, "count" = %count, "steps" = %steps}
  }

  // A planned graph op for the profile plan: provenance, op name and the planner's cycles.
  irdl.operation @op {
    %provenance = irdl.base "#builtin.string"
    %op = irdl.base "#builtin.string"
    %estimate = irdl.base "#builtin.integer"
    irdl.attributes {"provenance" = %provenance, "op" = %op, "estimate" = %estimate}
  }

  // Package support memory of every tile (`ipu-place-storage`): the seed's fields, and the
  // address ranges [start, end) left for planned data per class (array<i64> of pairs).
  irdl.operation @support {
    %linked_end = irdl.base "#builtin.integer"
    %profile_bytes = irdl.base "#builtin.integer"
    %exchange_table_bytes = irdl.base "#builtin.integer"
    %host_code_bytes = irdl.base "#builtin.integer"
    %generated_code_bytes = irdl.base "#builtin.integer"
    %code_address = irdl.base "#builtin.integer"
    %standard_ranges = irdl.base "#builtin.dense_array"
    %interleaved_ranges = irdl.base "#builtin.dense_array"
    irdl.attributes {"linked_end" = %linked_end, "profile_bytes" = %profile_bytes, "exchange_table_bytes" = %exchange_table_bytes, "host_code_bytes" = %host_code_bytes, "generated_code_bytes" = %generated_code_bytes, "code_address" = %code_address, "standard_ranges" = %standard_ranges, "interleaved_ranges" = %interleaved_ranges}
  }

  // Emitted tile code (`ipu-emit-tile-code`): the tiles that run code, the costed cycles of
  // the placed program and its scheduled exchange cycles.
  irdl.operation @code {
    %tiles = irdl.base "#builtin.dense_array"
    %final_cycles = irdl.base "#builtin.integer"
    %final_exchange = irdl.base "#builtin.integer"
    irdl.attributes {"tiles" = %tiles, "final_cycles" = %final_cycles, "final_exchange" = %final_exchange}
  }
}
