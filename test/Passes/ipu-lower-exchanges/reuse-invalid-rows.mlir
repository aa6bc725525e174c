// When a stored schedule's key matches but its relocated rows fail validation (here: the
// device's memory-element hazard, send-read and receive-write of one 16 KiB element on tiles 0
// and 2), ipu-lower-exchanges schedules the phase again, as with reuse=false, and says why.
// RUN: ipu-opt %S/Inputs/swap.mlir -p 'builtin.module(ipu-place-storage, ipu-lower-exchanges)' -o %t.scheduled.mlir
// RUN: ipu-opt %t.scheduled.mlir -p 'builtin.module(ipu-lower-exchanges{reuse=false})' -o %t.rescheduled.mlir
// RUN: ipu-opt %t.scheduled.mlir -p 'builtin.module(ipu-lower-exchanges)' | diff %t.rescheduled.mlir -
// RUN: env RUST_LOG=info ipu-opt %t.scheduled.mlir -p 'builtin.module(ipu-lower-exchanges)' -o /dev/null 2>&1 | FileCheck %s
// CHECK: relocated rows invalidate the stored exchange schedule; rescheduling phase=0 reason=exchange phase 0: {{.*}}memory element
