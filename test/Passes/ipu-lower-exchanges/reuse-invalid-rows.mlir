// XFAIL: *
// Known bug (passes/src/lower/passes.rs, lower_exchanges): when a stored schedule's key
// matches but its relocated rows fail validation (here: the device's memory-element hazard,
// send-read and receive-write of one 16 KiB element on tiles 0 and 2), ipu-lower-exchanges
// fails with that hazard instead of scheduling the phase again ("else rescheduled", issue 5),
// so running it a second time fails where the first run and reuse=false succeed.
// RUN: ipu-opt %S/Inputs/swap.mlir -p 'builtin.module(ipu-place-storage, ipu-lower-exchanges)' -o %t.scheduled.mlir
// RUN: ipu-opt %t.scheduled.mlir -p 'builtin.module(ipu-lower-exchanges{reuse=false})' -o %t.rescheduled.mlir
// RUN: ipu-opt %t.scheduled.mlir -p 'builtin.module(ipu-lower-exchanges)' | diff %t.rescheduled.mlir -
