// A conflict no move removes: tiles 0 and 2 all-gather one 2 KiB buffer `z` (each sends its
// half and receives the other half into the same buffer), so on each tile the send-read and
// the receive-write share z's memory element wherever z lies. The optimizer moves nothing and
// reschedules the phase at the current addresses with the two transfers serialized (256 + 256
// exchange cycles instead of 256 in parallel); ipu-emit-tile-code accepts the result.
// RUN: env RUST_LOG=info ipu-opt %s -p 'builtin.module(ipu-place-storage, ipu-lower-exchanges, ipu-optimize-exchange-placement, ipu-emit-tile-code)' 2>&1 | FileCheck %s
// Without the optimizer the hazard is refused, naming the tile, the element and both accesses.
// RUN: not ipu-opt %s -p 'builtin.module(ipu-place-storage, ipu-lower-exchanges, ipu-emit-tile-code)' -o /dev/null 2>&1 | FileCheck %s --check-prefix=REFUSED

// CHECK: rescheduled exchange phase around memory-element conflicts placement could not remove phase=0 cycles_before=777 cycles_after=1033
// CHECK-NEXT: optimized exchange placement moved_buffers=0 rescheduled_phases=1 phases=1
// CHECK-NOT: reused exchange optimization
// CHECK: costed final placed program final_cycles=1033 final_exchange=1033
// The second transfer starts when the first ends (slot 256).
// CHECK: "ipu_tile.exchange"() {cycles = 1033 : i64, moves = array<i64: 0, 0, 0, 0, 0, 1024, 1, 2, 2, 0, 1024, 0, 1024, 1024, 1, 0>, phase = 0 : i64, program = "run", schedule = array<i64: 0, 0, 1024, 0, 1, 0, 1024, 256>

// REFUSED: error: 'builtin.module' op ipu-emit-tile-code: exchange phase 0: program 'run' step 0 (exchange phase 0): tile {{[02]}} memory element {{[0-9]+}} ({{.*}}) is used by exchange send-read of {{.*}} and exchange receive-write of {{.*}} during exchange cycles 0..256
module {
  module @gather.tiles attributes {ipu_tile.function = "gather", ipu_tile.target = "c600", ipu_tile.tiles = 1472 : i64} {
    "ipu_tile.buffer"() {bytes = 2048 : i64, class = "standard", id = 0 : i64, live = array<i64: 0, 0>, name = "z", tiles = array<i32: 0, 2>} : () -> ()
    "ipu_tile.exchange"() {moves = array<i64: 0, 0, 0, 0, 0, 1024, 1, 2, 2, 0, 1024, 0, 1024, 1024, 1, 0>, phase = 0 : i64, program = "run"} : () -> ()
  }
}
