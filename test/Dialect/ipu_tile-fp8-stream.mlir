// An FP8 host stream (the host encodes the tensor in FP8 E4M3 as it streams it) carries its
// scale as the optional `scale_exp` attribute; the Rust reader (passes/src/lower/ir.rs) refuses
// a scale on a stream that is not FP8 and a scale outside the device's -31..=31, naming the op.
// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-emit-tile-code)' --verify-diagnostics -o /dev/null
// Stock mlir-opt-22 accepts the attribute (IRDL lists only the required ones).
// RUN: %mlir_opt %s --split-input-file --irdl-file=%repo/dialects/irdl/ipu_tile.irdl.mlir | FileCheck %s
// CHECK: "ipu_tile.stream"() {name = "arg0", pieces = array<i64: 0, 0, 0, 0, 1024>, precision = "f16", role = "input", scale_exp = -3 : i64, shape = array<i64: 32, 32>}
// CHECK: "ipu_tile.stream"() {name = "arg0", pieces = array<i64: 0, 0, 0, 0, 1024>, precision = "f8", role = "input", scale_exp = 40 : i64, shape = array<i64: 32, 32>}

// A scale on an F16 stream.
module {
  // expected-error-re@below {{ipu-emit-tile-code: ipu_tile.stream at {{.*}}: 'scale_exp' = -3: only an FP8 stream has a scale, in -31..=31}}
  module @t.tiles attributes {ipu_tile.function = "t", ipu_tile.target = "c600", ipu_tile.tiles = 4 : i64} {
    "ipu_tile.buffer"() {address = 360448 : i64, bytes = 2048 : i64, class = "standard", id = 0 : i64, live = array<i64: 0, 0>, name = "x", tiles = array<i32: 0, 2>} : () -> ()
    "ipu_tile.support"() {code_address = 318128 : i64, exchange_table_bytes = 16 : i64, generated_code_bytes = 8 : i64, host_code_bytes = 436 : i64, interleaved_ranges = array<i64: 524288, 949168>, linked_end = 317624 : i64, profile_bytes = 32 : i64, standard_ranges = array<i64: 360448, 524288>} : () -> ()
    "ipu_tile.stream"() {name = "arg0", pieces = array<i64: 0, 0, 0, 0, 1024>, precision = "f16", role = "input", scale_exp = -3 : i64, shape = array<i64: 32, 32>} : () -> ()
  }
}

// -----

// An FP8 scale outside -31..=31.
module {
  // expected-error-re@below {{ipu-emit-tile-code: ipu_tile.stream at {{.*}}: 'scale_exp' = 40: only an FP8 stream has a scale, in -31..=31}}
  module @t.tiles attributes {ipu_tile.function = "t", ipu_tile.target = "c600", ipu_tile.tiles = 4 : i64} {
    "ipu_tile.buffer"() {address = 360448 : i64, bytes = 2048 : i64, class = "standard", id = 0 : i64, live = array<i64: 0, 0>, name = "x", tiles = array<i32: 0, 2>} : () -> ()
    "ipu_tile.support"() {code_address = 318128 : i64, exchange_table_bytes = 16 : i64, generated_code_bytes = 8 : i64, host_code_bytes = 436 : i64, interleaved_ranges = array<i64: 524288, 949168>, linked_end = 317624 : i64, profile_bytes = 32 : i64, standard_ranges = array<i64: 360448, 524288>} : () -> ()
    "ipu_tile.stream"() {name = "arg0", pieces = array<i64: 0, 0, 0, 0, 1024>, precision = "f8", role = "input", scale_exp = 40 : i64, shape = array<i64: 32, 32>} : () -> ()
  }
}
