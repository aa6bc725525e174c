// Every ipu_tile op in a tile module (a nested builtin.module): what ipu-opt prints, stock
// mlir-opt-22 parses and verifies with the ipu_tile IRDL file, and both print the same module,
// in the custom and the generic form.
// RUN: ipu-opt %s | FileCheck %s
// RUN: ipu-opt %s | %mlir_opt --irdl-file=%repo/dialects/irdl/ipu_tile.irdl.mlir | FileCheck %s
// RUN: ipu-opt %s --mlir-print-op-generic | %mlir_opt --irdl-file=%repo/dialects/irdl/ipu_tile.irdl.mlir --verify-each | FileCheck %s
// RUN: %mlir_opt %s --irdl-file=%repo/dialects/irdl/ipu_tile.irdl.mlir | ipu-opt | FileCheck %s
// RUN: ipu-opt %s | ipu-opt > %t.twice.mlir
// RUN: ipu-opt %s | diff %t.twice.mlir -
// The IRDL file checks that the attributes exist with the right kinds.
// RUN: not %mlir_opt %S/Inputs/ipu_tile-missing-attribute.mlir --irdl-file=%repo/dialects/irdl/ipu_tile.irdl.mlir -o /dev/null 2>&1 | FileCheck %s --check-prefix=IRDL
// RUN: not ipu-opt %S/Inputs/ipu_tile-missing-attribute.mlir -o /dev/null 2>&1 | FileCheck %s --check-prefix=IRDL

// IRDL: error: 'ipu_tile.buffer' op

// CHECK-LABEL: module @pair.tiles attributes {ipu_tile.function = "pair", ipu_tile.target = "c600", ipu_tile.tiles = 1472 : i64}
// CHECK-NEXT: "ipu_tile.op"() {estimate = 100 : i64, op = "ipu.matmul", provenance = "op0"} : () -> ()
// CHECK-NEXT: "ipu_tile.kernel"() {index = 0 : i64, name = "rearrange_amp_left_f16_o0_r8_p8_c64_p64", spec = "{\22Rearrange\22:{\22order\22:\22AmpLeft\22,\22to_amp\22:true,\22precision\22:\22F16\22,\22offset\22:0,\22rows\22:8,\22rows_padded\22:8,\22cols\22:64,\22cols_padded\22:64}}"} : () -> ()
// CHECK-NEXT: "ipu_tile.buffer"() {address = 360448 : i64, bytes = 1024 : i64, class = "standard", id = 0 : i64, live = array<i64: 0, 3>, name = "x", tiles = array<i32: 0, 2>} : () -> ()
// CHECK-NEXT: "ipu_tile.buffer"() {address = 524288 : i64, bytes = 1024 : i64, class = "interleaved", id = 1 : i64, live = array<i64: 1, 3>, name = "x.amp_left", tiles = array<i32: 0, 2>} : () -> ()
// CHECK-NEXT: "ipu_tile.buffer"() {address = 376832 : i64, bytes = 32 : i64, class = "standard", id = 2 : i64, live = array<i64: 0, 3>, name = "w", tiles = array<i32: 0>} : () -> ()
// CHECK-NEXT: "ipu_tile.stream"() {name = "arg0", pieces = array<i64: 0, 0, 0, 0, 1024>, precision = "f16", role = "input", shape = array<i64: 8, 64>} : () -> ()
// CHECK-NEXT: "ipu_tile.stream"() {name = "const1", pieces = array<i64: 0, 2, 0, 0, 32>, precision = "f16", role = "weight", shape = array<i64: 16>, value = dense<5.000000e-01> : tensor<16xf16>} : () -> ()
// CHECK-NEXT: "ipu_tile.stream"() {name = "result0", pieces = array<i64: 2, 0, 0, 0, 1024>, precision = "f16", role = "output", shape = array<i64: 8, 64>} : () -> ()
// CHECK-NEXT: "ipu_tile.support"() {code_address = 318128 : i64, exchange_table_bytes = 16 : i64, generated_code_bytes = 40 : i64, host_code_bytes = 436 : i64, interleaved_ranges = array<i64: 524288, 949168>, linked_end = 317624 : i64, profile_bytes = 32 : i64, standard_ranges = array<i64: 360448, 524288>} : () -> ()
// CHECK-NEXT: "ipu_tile.host_write"() {program = "initialize", stream = "const1"} : () -> ()
// CHECK-NEXT: "ipu_tile.host_write"() {program = "run", stream = "arg0"} : () -> ()
// CHECK-NEXT: "ipu_tile.exchange"() {cycles = 600 : i64, moves = array<i64: 0, 0, 0, 0, 0, 1024, 1, 2>, phase = 0 : i64, program = "run", schedule = array<i64: 0, 0, 1024, 0>, schedule_key = -5 : i64} : () -> ()
// CHECK-NEXT: "ipu_tile.compute"() {program = "run", provenance = "op0.rearrange", runs = array<i64: 0, 0, 2, 0, 0, 1, 0, 2, 0, 2, 0, 0, 1, 0>} : () -> ()
// CHECK-NEXT: "ipu_tile.sync"() {program = "run"} : () -> ()
// CHECK-NEXT: "ipu_tile.repeat"() {count = 3 : i64, program = "run", steps = 1 : i64} : () -> ()
// CHECK-NEXT: "ipu_tile.sync"() {program = "run"} : () -> ()
// CHECK-NEXT: "ipu_tile.host_read"() {program = "run", stream = "result0"} : () -> ()
// CHECK-NEXT: "ipu_tile.code"() {final_cycles = 1200 : i64, final_exchange = 600 : i64, tiles = array<i32: 0, 2>} : () -> ()
// CHECK-NEXT: }

module {
  module @pair.tiles attributes {ipu_tile.function = "pair", ipu_tile.target = "c600", ipu_tile.tiles = 1472 : i64} {
    "ipu_tile.op"() {provenance = "op0", op = "ipu.matmul", estimate = 100 : i64} : () -> ()
    "ipu_tile.kernel"() {index = 0 : i64, name = "rearrange_amp_left_f16_o0_r8_p8_c64_p64", spec = "{\22Rearrange\22:{\22order\22:\22AmpLeft\22,\22to_amp\22:true,\22precision\22:\22F16\22,\22offset\22:0,\22rows\22:8,\22rows_padded\22:8,\22cols\22:64,\22cols_padded\22:64}}"} : () -> ()
    "ipu_tile.buffer"() {id = 0 : i64, name = "x", class = "standard", bytes = 1024 : i64, tiles = array<i32: 0, 2>, live = array<i64: 0, 3>, address = 360448 : i64} : () -> ()
    "ipu_tile.buffer"() {id = 1 : i64, name = "x.amp_left", class = "interleaved", bytes = 1024 : i64, tiles = array<i32: 0, 2>, live = array<i64: 1, 3>, address = 524288 : i64} : () -> ()
    "ipu_tile.buffer"() {id = 2 : i64, name = "w", class = "standard", bytes = 32 : i64, tiles = array<i32: 0>, live = array<i64: 0, 3>, address = 376832 : i64} : () -> ()
    "ipu_tile.stream"() {name = "arg0", role = "input", precision = "f16", shape = array<i64: 8, 64>, pieces = array<i64: 0, 0, 0, 0, 1024>} : () -> ()
    "ipu_tile.stream"() {name = "const1", role = "weight", precision = "f16", shape = array<i64: 16>, pieces = array<i64: 0, 2, 0, 0, 32>, value = dense<0.5> : tensor<16xf16>} : () -> ()
    "ipu_tile.stream"() {name = "result0", role = "output", precision = "f16", shape = array<i64: 8, 64>, pieces = array<i64: 2, 0, 0, 0, 1024>} : () -> ()
    "ipu_tile.support"() {linked_end = 317624 : i64, profile_bytes = 32 : i64, exchange_table_bytes = 16 : i64, host_code_bytes = 436 : i64, generated_code_bytes = 40 : i64, code_address = 318128 : i64, standard_ranges = array<i64: 360448, 524288>, interleaved_ranges = array<i64: 524288, 949168>} : () -> ()
    "ipu_tile.host_write"() {program = "initialize", stream = "const1"} : () -> ()
    "ipu_tile.host_write"() {program = "run", stream = "arg0"} : () -> ()
    "ipu_tile.exchange"() {program = "run", phase = 0 : i64, moves = array<i64: 0, 0, 0, 0, 0, 1024, 1, 2>, schedule = array<i64: 0, 0, 1024, 0>, schedule_key = -5 : i64, cycles = 600 : i64} : () -> ()
    "ipu_tile.compute"() {program = "run", provenance = "op0.rearrange", runs = array<i64: 0, 0, 2, 0, 0, 1, 0, 2, 0, 2, 0, 0, 1, 0>} : () -> ()
    "ipu_tile.sync"() {program = "run"} : () -> ()
    "ipu_tile.repeat"() {count = 3 : i64, program = "run", steps = 1 : i64} : () -> ()
    "ipu_tile.sync"() {program = "run"} : () -> ()
    "ipu_tile.host_read"() {program = "run", stream = "result0"} : () -> ()
    "ipu_tile.code"() {tiles = array<i32: 0, 2>, final_cycles = 1200 : i64, final_exchange = 600 : i64} : () -> ()
  }
}
