// The checks ipu_tile programs get when a pass reads them (passes/src/lower/ir.rs): each
// error names the op and its location and is reported at the tile module by the pass.
// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-emit-tile-code)' --verify-diagnostics -o /dev/null
// The same checks run for every lowering pass that reads the program.
// RUN: not ipu-opt %s --split-input-file -p 'builtin.module(ipu-lower-exchanges)' -o /dev/null 2>&1 | FileCheck %s
// CHECK: error: 'builtin.module' op ipu-lower-exchanges: ipu_tile.buffer at loc({{.*}}): tile 4 is outside 0..4

// A buffer on a tile >= ipu_tile.tiles.
module {
  // expected-error-re@below {{ipu-emit-tile-code: ipu_tile.buffer at {{.*}}: tile 4 is outside 0..4}}
  module @t.tiles attributes {ipu_tile.function = "t", ipu_tile.target = "c600", ipu_tile.tiles = 4 : i64} {
    "ipu_tile.buffer"() {address = 360448 : i64, bytes = 1024 : i64, class = "standard", id = 0 : i64, live = array<i64: 0, 0>, name = "x", tiles = array<i32: 0, 4>} : () -> ()
  }
}

// -----

// Buffer tiles must be strictly ascending.
module {
  // expected-error-re@below {{ipu-emit-tile-code: ipu_tile.buffer at {{.*}}: tiles must be strictly ascending}}
  module @t.tiles attributes {ipu_tile.function = "t", ipu_tile.target = "c600", ipu_tile.tiles = 4 : i64} {
    "ipu_tile.buffer"() {address = 360448 : i64, bytes = 1024 : i64, class = "standard", id = 0 : i64, live = array<i64: 0, 0>, name = "x", tiles = array<i32: 2, 0>} : () -> ()
  }
}

// -----

// An address range outside the tile's SRAM.
module {
  // expected-error-re@below {{ipu-emit-tile-code: ipu_tile.buffer at {{.*}}: address range 0x10..0x410 is outside tile SRAM 0x{{[0-9a-f]+}}..0x{{[0-9a-f]+}}}}
  module @t.tiles attributes {ipu_tile.function = "t", ipu_tile.target = "c600", ipu_tile.tiles = 4 : i64} {
    "ipu_tile.buffer"() {address = 16 : i64, bytes = 1024 : i64, class = "standard", id = 0 : i64, live = array<i64: 0, 0>, name = "x", tiles = array<i32: 0, 2>} : () -> ()
  }
}

// -----

// An address range running past the end of SRAM.
module {
  // expected-error-re@below {{ipu-emit-tile-code: ipu_tile.buffer at {{.*}}: address range 0xffffc..0x1003fc is outside tile SRAM 0x{{[0-9a-f]+}}..0x{{[0-9a-f]+}}}}
  module @t.tiles attributes {ipu_tile.function = "t", ipu_tile.target = "c600", ipu_tile.tiles = 4 : i64} {
    "ipu_tile.buffer"() {address = 1048572 : i64, bytes = 1024 : i64, class = "standard", id = 0 : i64, live = array<i64: 0, 0>, name = "x", tiles = array<i32: 0, 2>} : () -> ()
  }
}

// -----

// Buffer ids must count up from 0.
module {
  // expected-error-re@below {{ipu-emit-tile-code: ipu_tile.buffer at {{.*}}: buffer id 1, expected 0}}
  module @t.tiles attributes {ipu_tile.function = "t", ipu_tile.target = "c600", ipu_tile.tiles = 4 : i64} {
    "ipu_tile.buffer"() {address = 360448 : i64, bytes = 1024 : i64, class = "standard", id = 1 : i64, live = array<i64: 0, 0>, name = "x", tiles = array<i32: 0, 2>} : () -> ()
  }
}

// -----

// A move naming a buffer that does not exist.
module {
  // expected-error-re@below {{ipu-emit-tile-code: ipu_tile.exchange at {{.*}}: buffer 5 is outside 0..1}}
  module @t.tiles attributes {ipu_tile.function = "t", ipu_tile.target = "c600", ipu_tile.tiles = 4 : i64} {
    "ipu_tile.buffer"() {address = 360448 : i64, bytes = 1024 : i64, class = "standard", id = 0 : i64, live = array<i64: 0, 0>, name = "x", tiles = array<i32: 0, 2>} : () -> ()
    "ipu_tile.support"() {code_address = 318128 : i64, exchange_table_bytes = 16 : i64, generated_code_bytes = 8 : i64, host_code_bytes = 436 : i64, interleaved_ranges = array<i64: 524288, 949168>, linked_end = 317624 : i64, profile_bytes = 32 : i64, standard_ranges = array<i64: 360448, 524288>} : () -> ()
    "ipu_tile.exchange"() {moves = array<i64: 0, 0, 0, 5, 0, 1024, 1, 2>, phase = 0 : i64, program = "run"} : () -> ()
  }
}

// -----

// A move whose destination buffer is not on the destination tile.
module {
  // expected-error-re@below {{ipu-emit-tile-code: ipu_tile.exchange at {{.*}}: buffer 0 (x) is not on tile 3}}
  module @t.tiles attributes {ipu_tile.function = "t", ipu_tile.target = "c600", ipu_tile.tiles = 4 : i64} {
    "ipu_tile.buffer"() {address = 360448 : i64, bytes = 1024 : i64, class = "standard", id = 0 : i64, live = array<i64: 0, 0>, name = "x", tiles = array<i32: 0, 2>} : () -> ()
    "ipu_tile.support"() {code_address = 318128 : i64, exchange_table_bytes = 16 : i64, generated_code_bytes = 8 : i64, host_code_bytes = 436 : i64, interleaved_ranges = array<i64: 524288, 949168>, linked_end = 317624 : i64, profile_bytes = 32 : i64, standard_ranges = array<i64: 360448, 524288>} : () -> ()
    "ipu_tile.exchange"() {moves = array<i64: 0, 0, 0, 0, 0, 1024, 1, 3>, phase = 0 : i64, program = "run"} : () -> ()
  }
}

// -----

// A move record cut short.
module {
  // expected-error-re@below {{ipu-emit-tile-code: ipu_tile.exchange at {{.*}}: truncated move record}}
  module @t.tiles attributes {ipu_tile.function = "t", ipu_tile.target = "c600", ipu_tile.tiles = 4 : i64} {
    "ipu_tile.buffer"() {address = 360448 : i64, bytes = 1024 : i64, class = "standard", id = 0 : i64, live = array<i64: 0, 0>, name = "x", tiles = array<i32: 0, 2>} : () -> ()
    "ipu_tile.support"() {code_address = 318128 : i64, exchange_table_bytes = 16 : i64, generated_code_bytes = 8 : i64, host_code_bytes = 436 : i64, interleaved_ranges = array<i64: 524288, 949168>, linked_end = 317624 : i64, profile_bytes = 32 : i64, standard_ranges = array<i64: 360448, 524288>} : () -> ()
    "ipu_tile.exchange"() {moves = array<i64: 0, 0, 0, 0, 0, 1024>, phase = 0 : i64, program = "run"} : () -> ()
  }
}

// -----

// A move whose destination list is cut short.
module {
  // expected-error-re@below {{ipu-emit-tile-code: ipu_tile.exchange at {{.*}}: truncated destination list}}
  module @t.tiles attributes {ipu_tile.function = "t", ipu_tile.target = "c600", ipu_tile.tiles = 4 : i64} {
    "ipu_tile.buffer"() {address = 360448 : i64, bytes = 1024 : i64, class = "standard", id = 0 : i64, live = array<i64: 0, 0>, name = "x", tiles = array<i32: 0, 2>} : () -> ()
    "ipu_tile.support"() {code_address = 318128 : i64, exchange_table_bytes = 16 : i64, generated_code_bytes = 8 : i64, host_code_bytes = 436 : i64, interleaved_ranges = array<i64: 524288, 949168>, linked_end = 317624 : i64, profile_bytes = 32 : i64, standard_ranges = array<i64: 360448, 524288>} : () -> ()
    "ipu_tile.exchange"() {moves = array<i64: 0, 0, 0, 0, 0, 1024, 2, 2>, phase = 0 : i64, program = "run"} : () -> ()
  }
}

// -----

// A schedule row naming a move that does not exist.
module {
  // expected-error-re@below {{ipu-emit-tile-code: ipu_tile.exchange at {{.*}}: schedule row [1, 0, 1024, 0] is invalid}}
  module @t.tiles attributes {ipu_tile.function = "t", ipu_tile.target = "c600", ipu_tile.tiles = 4 : i64} {
    "ipu_tile.buffer"() {address = 360448 : i64, bytes = 1024 : i64, class = "standard", id = 0 : i64, live = array<i64: 0, 0>, name = "x", tiles = array<i32: 0, 2>} : () -> ()
    "ipu_tile.support"() {code_address = 318128 : i64, exchange_table_bytes = 16 : i64, generated_code_bytes = 8 : i64, host_code_bytes = 436 : i64, interleaved_ranges = array<i64: 524288, 949168>, linked_end = 317624 : i64, profile_bytes = 32 : i64, standard_ranges = array<i64: 360448, 524288>} : () -> ()
    "ipu_tile.exchange"() {cycles = 600 : i64, moves = array<i64: 0, 0, 0, 0, 0, 1024, 1, 2>, phase = 0 : i64, program = "run", schedule = array<i64: 1, 0, 1024, 0>, schedule_key = 0 : i64} : () -> ()
  }
}

// -----

// A run record cut short (tile, kernel, argument count).
module {
  // expected-error-re@below {{ipu-emit-tile-code: ipu_tile.compute at {{.*}}: truncated run record}}
  module @t.tiles attributes {ipu_tile.function = "t", ipu_tile.target = "c600", ipu_tile.tiles = 4 : i64} {
    "ipu_tile.buffer"() {address = 360448 : i64, bytes = 1024 : i64, class = "standard", id = 0 : i64, live = array<i64: 0, 0>, name = "x", tiles = array<i32: 0, 2>} : () -> ()
    "ipu_tile.support"() {code_address = 318128 : i64, exchange_table_bytes = 16 : i64, generated_code_bytes = 8 : i64, host_code_bytes = 436 : i64, interleaved_ranges = array<i64: 524288, 949168>, linked_end = 317624 : i64, profile_bytes = 32 : i64, standard_ranges = array<i64: 360448, 524288>} : () -> ()
    "ipu_tile.compute"() {program = "run", provenance = "op0", runs = array<i64: 0, 0>} : () -> ()
  }
}

// -----

// A run whose arguments are cut short.
module {
  // expected-error-re@below {{ipu-emit-tile-code: ipu_tile.compute at {{.*}}: truncated run arguments}}
  module @t.tiles attributes {ipu_tile.function = "t", ipu_tile.target = "c600", ipu_tile.tiles = 4 : i64} {
    "ipu_tile.kernel"() {index = 0 : i64, name = "rearrange_amp_left_f16_o0_r8_p8_c64_p64", spec = "{\22Rearrange\22:{\22order\22:\22AmpLeft\22,\22to_amp\22:true,\22precision\22:\22F16\22,\22offset\22:0,\22rows\22:8,\22rows_padded\22:8,\22cols\22:64,\22cols_padded\22:64}}"} : () -> ()
    "ipu_tile.buffer"() {address = 360448 : i64, bytes = 1024 : i64, class = "standard", id = 0 : i64, live = array<i64: 0, 0>, name = "x", tiles = array<i32: 0, 2>} : () -> ()
    "ipu_tile.support"() {code_address = 318128 : i64, exchange_table_bytes = 16 : i64, generated_code_bytes = 8 : i64, host_code_bytes = 436 : i64, interleaved_ranges = array<i64: 524288, 949168>, linked_end = 317624 : i64, profile_bytes = 32 : i64, standard_ranges = array<i64: 360448, 524288>} : () -> ()
    "ipu_tile.compute"() {program = "run", provenance = "op0", runs = array<i64: 0, 0, 2, 0, 0>} : () -> ()
  }
}

// -----

// A run naming a kernel that does not exist.
module {
  // expected-error-re@below {{ipu-emit-tile-code: ipu_tile.compute at {{.*}}: kernel 0 is outside 0..0}}
  module @t.tiles attributes {ipu_tile.function = "t", ipu_tile.target = "c600", ipu_tile.tiles = 4 : i64} {
    "ipu_tile.buffer"() {address = 360448 : i64, bytes = 1024 : i64, class = "standard", id = 0 : i64, live = array<i64: 0, 0>, name = "x", tiles = array<i32: 0, 2>} : () -> ()
    "ipu_tile.support"() {code_address = 318128 : i64, exchange_table_bytes = 16 : i64, generated_code_bytes = 8 : i64, host_code_bytes = 436 : i64, interleaved_ranges = array<i64: 524288, 949168>, linked_end = 317624 : i64, profile_bytes = 32 : i64, standard_ranges = array<i64: 360448, 524288>} : () -> ()
    "ipu_tile.compute"() {program = "run", provenance = "op0", runs = array<i64: 0, 0, 0>} : () -> ()
  }
}

// -----

// A stream piece overrunning its buffer.
module {
  // expected-error-re@below {{ipu-emit-tile-code: ipu_tile.stream at {{.*}}: 2048 B at offset 0 overrun buffer 0 (x, 1024 B)}}
  module @t.tiles attributes {ipu_tile.function = "t", ipu_tile.target = "c600", ipu_tile.tiles = 4 : i64} {
    "ipu_tile.buffer"() {address = 360448 : i64, bytes = 1024 : i64, class = "standard", id = 0 : i64, live = array<i64: 0, 0>, name = "x", tiles = array<i32: 0, 2>} : () -> ()
    "ipu_tile.support"() {code_address = 318128 : i64, exchange_table_bytes = 16 : i64, generated_code_bytes = 8 : i64, host_code_bytes = 436 : i64, interleaved_ranges = array<i64: 524288, 949168>, linked_end = 317624 : i64, profile_bytes = 32 : i64, standard_ranges = array<i64: 360448, 524288>} : () -> ()
    "ipu_tile.stream"() {name = "arg0", pieces = array<i64: 0, 0, 0, 0, 2048>, precision = "f16", role = "input", shape = array<i64: 32, 64>} : () -> ()
  }
}

// -----

// A stream piece overrunning its tensor.
module {
  // expected-error-re@below {{ipu-emit-tile-code: ipu_tile.stream at {{.*}}: piece at tensor offset 3072 overruns the 4096 B tensor}}
  module @t.tiles attributes {ipu_tile.function = "t", ipu_tile.target = "c600", ipu_tile.tiles = 4 : i64} {
    "ipu_tile.buffer"() {address = 360448 : i64, bytes = 4096 : i64, class = "standard", id = 0 : i64, live = array<i64: 0, 0>, name = "x", tiles = array<i32: 0, 2>} : () -> ()
    "ipu_tile.support"() {code_address = 318128 : i64, exchange_table_bytes = 16 : i64, generated_code_bytes = 8 : i64, host_code_bytes = 436 : i64, interleaved_ranges = array<i64: 524288, 949168>, linked_end = 317624 : i64, profile_bytes = 32 : i64, standard_ranges = array<i64: 360448, 524288>} : () -> ()
    "ipu_tile.stream"() {name = "arg0", pieces = array<i64: 0, 0, 0, 3072, 2048>, precision = "f16", role = "input", shape = array<i64: 32, 64>} : () -> ()
  }
}

// -----

// A strided piece row of 6 entries (runs without a stride).
module {
  // expected-error-re@below {{ipu-emit-tile-code: ipu_tile.stream at {{.*}}: piece 1 has 6 entries: expected 5 (tile, buffer, offset, tensor offset, bytes), 7 (and runs, stride) or 8 (and pad)}}
  module @t.tiles attributes {ipu_tile.function = "t", ipu_tile.target = "c600", ipu_tile.tiles = 4 : i64} {
    "ipu_tile.buffer"() {address = 360448 : i64, bytes = 4096 : i64, class = "standard", id = 0 : i64, live = array<i64: 0, 0>, name = "x", tiles = array<i32: 0, 2>} : () -> ()
    "ipu_tile.support"() {code_address = 318128 : i64, exchange_table_bytes = 16 : i64, generated_code_bytes = 8 : i64, host_code_bytes = 436 : i64, interleaved_ranges = array<i64: 524288, 949168>, linked_end = 317624 : i64, profile_bytes = 32 : i64, standard_ranges = array<i64: 360448, 524288>} : () -> ()
    "ipu_tile.stream"() {name = "arg0", pieces = [array<i64: 0, 0, 0, 0, 2048>, array<i64: 2, 0, 0, 0, 2048, 32>], precision = "f16", role = "input", shape = array<i64: 32, 64>} : () -> ()
  }
}

// -----

// A list row that is not a dense i64 array.
module {
  // expected-error-re@below {{ipu-emit-tile-code: ipu_tile.stream at {{.*}}: piece 0 is not a dense i64 array}}
  module @t.tiles attributes {ipu_tile.function = "t", ipu_tile.target = "c600", ipu_tile.tiles = 4 : i64} {
    "ipu_tile.buffer"() {address = 360448 : i64, bytes = 4096 : i64, class = "standard", id = 0 : i64, live = array<i64: 0, 0>, name = "x", tiles = array<i32: 0, 2>} : () -> ()
    "ipu_tile.support"() {code_address = 318128 : i64, exchange_table_bytes = 16 : i64, generated_code_bytes = 8 : i64, host_code_bytes = 436 : i64, interleaved_ranges = array<i64: 524288, 949168>, linked_end = 317624 : i64, profile_bytes = 32 : i64, standard_ranges = array<i64: 360448, 524288>} : () -> ()
    "ipu_tile.stream"() {name = "arg0", pieces = [array<i32: 0, 0, 0, 0, 2048>], precision = "f16", role = "input", shape = array<i64: 32, 64>} : () -> ()
  }
}

// -----

// A padded piece whose padding is longer than its runs: 32 runs of 64 B, each ending in
// 80 B of zeros.
module {
  // expected-error-re@below {{ipu-emit-tile-code: ipu_tile.stream at {{.*}}: piece 0: 80 B of padding in runs of 64 B}}
  module @t.tiles attributes {ipu_tile.function = "t", ipu_tile.target = "c600", ipu_tile.tiles = 4 : i64} {
    "ipu_tile.buffer"() {address = 360448 : i64, bytes = 4096 : i64, class = "standard", id = 0 : i64, live = array<i64: 0, 0>, name = "x", tiles = array<i32: 0, 2>} : () -> ()
    "ipu_tile.support"() {code_address = 318128 : i64, exchange_table_bytes = 16 : i64, generated_code_bytes = 8 : i64, host_code_bytes = 436 : i64, interleaved_ranges = array<i64: 524288, 949168>, linked_end = 317624 : i64, profile_bytes = 32 : i64, standard_ranges = array<i64: 360448, 524288>} : () -> ()
    "ipu_tile.stream"() {name = "arg0", pieces = [array<i64: 0, 0, 0, 0, 2048, 32, 128, 80>], precision = "f16", role = "input", shape = array<i64: 32, 64>} : () -> ()
  }
}

// -----

// A strided piece of 0 runs.
module {
  // expected-error-re@below {{ipu-emit-tile-code: ipu_tile.stream at {{.*}}: piece 0: 2048 B do not split into 0 equal runs}}
  module @t.tiles attributes {ipu_tile.function = "t", ipu_tile.target = "c600", ipu_tile.tiles = 4 : i64} {
    "ipu_tile.buffer"() {address = 360448 : i64, bytes = 4096 : i64, class = "standard", id = 0 : i64, live = array<i64: 0, 0>, name = "x", tiles = array<i32: 0, 2>} : () -> ()
    "ipu_tile.support"() {code_address = 318128 : i64, exchange_table_bytes = 16 : i64, generated_code_bytes = 8 : i64, host_code_bytes = 436 : i64, interleaved_ranges = array<i64: 524288, 949168>, linked_end = 317624 : i64, profile_bytes = 32 : i64, standard_ranges = array<i64: 360448, 524288>} : () -> ()
    "ipu_tile.stream"() {name = "arg0", pieces = [array<i64: 0, 0, 0, 0, 2048, 0, 128>], precision = "f16", role = "input", shape = array<i64: 32, 64>} : () -> ()
  }
}

// -----

// A strided piece whose bytes do not split into equal runs.
module {
  // expected-error-re@below {{ipu-emit-tile-code: ipu_tile.stream at {{.*}}: piece 0: 2048 B do not split into 3 equal runs}}
  module @t.tiles attributes {ipu_tile.function = "t", ipu_tile.target = "c600", ipu_tile.tiles = 4 : i64} {
    "ipu_tile.buffer"() {address = 360448 : i64, bytes = 4096 : i64, class = "standard", id = 0 : i64, live = array<i64: 0, 0>, name = "x", tiles = array<i32: 0, 2>} : () -> ()
    "ipu_tile.support"() {code_address = 318128 : i64, exchange_table_bytes = 16 : i64, generated_code_bytes = 8 : i64, host_code_bytes = 436 : i64, interleaved_ranges = array<i64: 524288, 949168>, linked_end = 317624 : i64, profile_bytes = 32 : i64, standard_ranges = array<i64: 360448, 524288>} : () -> ()
    "ipu_tile.stream"() {name = "arg0", pieces = [array<i64: 0, 0, 0, 0, 2048, 3, 128>], precision = "f16", role = "input", shape = array<i64: 32, 64>} : () -> ()
  }
}

// -----

// A 7-entry row of one run with a stride (one encoding per piece: a contiguous piece has
// stride 0).
module {
  // expected-error-re@below {{ipu-emit-tile-code: ipu_tile.stream at {{.*}}: piece 0: one run with stride 128 (a one-run piece has stride 0)}}
  module @t.tiles attributes {ipu_tile.function = "t", ipu_tile.target = "c600", ipu_tile.tiles = 4 : i64} {
    "ipu_tile.buffer"() {address = 360448 : i64, bytes = 4096 : i64, class = "standard", id = 0 : i64, live = array<i64: 0, 0>, name = "x", tiles = array<i32: 0, 2>} : () -> ()
    "ipu_tile.support"() {code_address = 318128 : i64, exchange_table_bytes = 16 : i64, generated_code_bytes = 8 : i64, host_code_bytes = 436 : i64, interleaved_ranges = array<i64: 524288, 949168>, linked_end = 317624 : i64, profile_bytes = 32 : i64, standard_ranges = array<i64: 360448, 524288>} : () -> ()
    "ipu_tile.stream"() {name = "arg0", pieces = [array<i64: 0, 0, 0, 0, 2048, 1, 128>], precision = "f16", role = "input", shape = array<i64: 32, 64>} : () -> ()
  }
}

// -----

// A strided piece whose last run overruns the tensor: 32 runs of 64 B, one 128 B row apart,
// from row 1 (a contiguous piece of 2048 B from there would fit).
module {
  // expected-error-re@below {{ipu-emit-tile-code: ipu_tile.stream at {{.*}}: piece 0 run 31 at tensor offset 4096 overruns the 4096 B tensor}}
  module @t.tiles attributes {ipu_tile.function = "t", ipu_tile.target = "c600", ipu_tile.tiles = 4 : i64} {
    "ipu_tile.buffer"() {address = 360448 : i64, bytes = 4096 : i64, class = "standard", id = 0 : i64, live = array<i64: 0, 0>, name = "x", tiles = array<i32: 0, 2>} : () -> ()
    "ipu_tile.support"() {code_address = 318128 : i64, exchange_table_bytes = 16 : i64, generated_code_bytes = 8 : i64, host_code_bytes = 436 : i64, interleaved_ranges = array<i64: 524288, 949168>, linked_end = 317624 : i64, profile_bytes = 32 : i64, standard_ranges = array<i64: 360448, 524288>} : () -> ()
    "ipu_tile.stream"() {name = "arg0", pieces = [array<i64: 0, 0, 0, 128, 2048, 32, 128>], precision = "f16", role = "input", shape = array<i64: 32, 64>} : () -> ()
  }
}

// -----

// A host write naming a stream that does not exist.
module {
  // expected-error-re@below {{ipu-emit-tile-code: ipu_tile.host_write at {{.*}}: no stream 'arg9'}}
  module @t.tiles attributes {ipu_tile.function = "t", ipu_tile.target = "c600", ipu_tile.tiles = 4 : i64} {
    "ipu_tile.buffer"() {address = 360448 : i64, bytes = 1024 : i64, class = "standard", id = 0 : i64, live = array<i64: 0, 0>, name = "x", tiles = array<i32: 0, 2>} : () -> ()
    "ipu_tile.support"() {code_address = 318128 : i64, exchange_table_bytes = 16 : i64, generated_code_bytes = 8 : i64, host_code_bytes = 436 : i64, interleaved_ranges = array<i64: 524288, 949168>, linked_end = 317624 : i64, profile_bytes = 32 : i64, standard_ranges = array<i64: 360448, 524288>} : () -> ()
    "ipu_tile.host_write"() {program = "run", stream = "arg9"} : () -> ()
  }
}

// -----

// A step of a program that does not exist.
module {
  // expected-error-re@below {{ipu-emit-tile-code: ipu_tile.sync at {{.*}}: program 'setup': expected initialize or run}}
  module @t.tiles attributes {ipu_tile.function = "t", ipu_tile.target = "c600", ipu_tile.tiles = 4 : i64} {
    "ipu_tile.buffer"() {address = 360448 : i64, bytes = 1024 : i64, class = "standard", id = 0 : i64, live = array<i64: 0, 0>, name = "x", tiles = array<i32: 0, 2>} : () -> ()
    "ipu_tile.support"() {code_address = 318128 : i64, exchange_table_bytes = 16 : i64, generated_code_bytes = 8 : i64, host_code_bytes = 436 : i64, interleaved_ranges = array<i64: 524288, 949168>, linked_end = 317624 : i64, profile_bytes = 32 : i64, standard_ranges = array<i64: 360448, 524288>} : () -> ()
    "ipu_tile.sync"() {program = "setup"} : () -> ()
  }
}

// -----

// An op of another dialect inside a tile module.
module {
  // expected-error-re@below {{ipu-emit-tile-code: arith.constant at {{.*}}: unexpected op 'arith.constant' in a tile module}}
  module @t.tiles attributes {ipu_tile.function = "t", ipu_tile.target = "c600", ipu_tile.tiles = 4 : i64} {
    %c = arith.constant 0 : i32
  }
}

// -----

// More tiles than the target has.
module {
  // expected-error-re@below {{ipu-emit-tile-code: builtin.module at {{.*}}: ipu_tile.tiles = 2000 is outside 1..=1472 of target c600}}
  module @t.tiles attributes {ipu_tile.function = "t", ipu_tile.target = "c600", ipu_tile.tiles = 2000 : i64} {
    "ipu_tile.buffer"() {address = 360448 : i64, bytes = 1024 : i64, class = "standard", id = 0 : i64, live = array<i64: 0, 0>, name = "x", tiles = array<i32: 0, 2>} : () -> ()
  }
}

// -----

// A step of a program other than initialize and run.
module {
  // expected-error-re@below {{ipu-emit-tile-code: ipu_tile.host_write at {{.*}}: program 'setup': expected initialize or run}}
  module @t.tiles attributes {ipu_tile.function = "t", ipu_tile.target = "c600", ipu_tile.tiles = 4 : i64} {
    "ipu_tile.buffer"() {address = 360448 : i64, bytes = 1024 : i64, class = "standard", id = 0 : i64, live = array<i64: 0, 0>, name = "x", tiles = array<i32: 0, 2>} : () -> ()
    "ipu_tile.stream"() {name = "arg0", pieces = array<i64: 0, 0, 0, 0, 1024>, precision = "f16", role = "input", shape = array<i64: 8, 64>} : () -> ()
    "ipu_tile.host_write"() {program = "setup", stream = "arg0"} : () -> ()
  }
}

// -----

// A repeat whose body runs past the end of its program.
module {
  // expected-error-re@below {{ipu-emit-tile-code: ipu_tile program 'run': step 0: the repeat's 5 steps run past the end of its enclosing body or program}}
  module @t.tiles attributes {ipu_tile.function = "t", ipu_tile.target = "c600", ipu_tile.tiles = 4 : i64} {
    "ipu_tile.repeat"() {count = 2 : i64, program = "run", steps = 5 : i64} : () -> ()
    "ipu_tile.sync"() {program = "run"} : () -> ()
  }
}
