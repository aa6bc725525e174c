//! Simulator errors. Each hazard names the program, the pre-order step number, the exchange
//! phase where there is one, the tile and the address range, because the person reading it
//! has to find the op and the buffer that caused it.

use crate::image::{AddressRange, ImageError};

/// Where in a program something happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepAt {
    pub program: String,
    pub step: u32,
    pub phase: Option<u32>,
}

impl std::fmt::Display for StepAt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "program '{}' step {}", self.program, self.step)?;
        if let Some(phase) = self.phase {
            write!(f, " (exchange phase {phase})")?;
        }
        Ok(())
    }
}

/// Half-open cycle interval, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cycles {
    pub start: u64,
    pub end: u64,
}

impl std::fmt::Display for Cycles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "exchange cycles {}..{}", self.start, self.end)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SimError {
    #[error(transparent)]
    Image(#[from] ImageError),
    #[error("no image is loaded")]
    NoImage,
    #[error("the image has no program '{name}' (programs: {known})")]
    UnknownProgram { name: String, known: String },
    #[error("{at}: tile {tile} kernel {kernel} operand '{operand}' (argument {arg}) covers {range_start:#x}..{range_end:#x}, outside SRAM {sram_start:#x}..{sram_end:#x}")]
    KernelOutOfRange {
        at: StepAt,
        tile: u32,
        kernel: String,
        operand: &'static str,
        arg: usize,
        /// Absolute addresses; the end may exceed `u32` and is shown widened.
        range_start: u64,
        range_end: u64,
        sram_start: u32,
        sram_end: u32,
    },
    #[error("{at}: tile {tile} kernel {kernel}: {detail}")]
    KernelArguments {
        at: StepAt,
        tile: u32,
        kernel: String,
        detail: String,
    },
    #[error("{at}: tile {tile} kernel {kernel} failed: {detail}")]
    KernelFailed {
        at: StepAt,
        tile: u32,
        kernel: String,
        detail: String,
    },
    #[error("{at}: tiles {tile} and {other_tile} share send bus {bus} and both send during {cycles} ({range} and {other_range})")]
    SenderBusConflict {
        at: StepAt,
        tile: u32,
        other_tile: u32,
        bus: u32,
        cycles: Cycles,
        range: AddressRange,
        other_range: AddressRange,
    },
    #[error("{at}: tile {tile} receives from tiles {from_tile} and {other_from} at once during {cycles} (into {range} and {other_range})")]
    ReceiverBusy {
        at: StepAt,
        tile: u32,
        from_tile: u32,
        other_from: u32,
        cycles: Cycles,
        range: AddressRange,
        other_range: AddressRange,
    },
    #[error("{at}: tile {tile} starts receiving from tile {from_tile} at exchange cycle {start}, {gap} cycles after its receive from tile {other_from} ended; selecting a new source takes {latency} (into {range}, after {other_range})")]
    ReceiveSelectTooSoon {
        at: StepAt,
        tile: u32,
        from_tile: u32,
        other_from: u32,
        start: u64,
        gap: u64,
        latency: u64,
        range: AddressRange,
        other_range: AddressRange,
    },
    #[error("{at}: tile {tile} is written twice in one phase: {range} (from tile {from_tile}) overlaps {other_range} (from tile {other_from})")]
    OverlappingWrites {
        at: StepAt,
        tile: u32,
        range: AddressRange,
        from_tile: u32,
        other_range: AddressRange,
        other_from: u32,
    },
    #[error("{at}: tile {tile} memory element {element} ({element_range}) is used by {first} of {range} and {second} of {other_range} during {cycles}")]
    ElementConflict {
        at: StepAt,
        tile: u32,
        element: u32,
        element_range: AddressRange,
        first: &'static str,
        range: AddressRange,
        second: &'static str,
        other_range: AddressRange,
        cycles: Cycles,
    },
    #[error("{at}: tile {tile} sends {send_range} and receives {receive_range} in the same phase; the bytes overlap, so the result would depend on timing")]
    SendReceiveOverlap {
        at: StepAt,
        tile: u32,
        send_range: AddressRange,
        receive_range: AddressRange,
    },
    #[error("{at}: tile {tile} never completes: it waits at slot {slot} for {bytes} bytes from tile {from_tile} into {range}, and tile {from_tile} sends nothing at that slot")]
    ReceiveWithoutSender {
        at: StepAt,
        tile: u32,
        from_tile: u32,
        slot: u32,
        bytes: u32,
        range: AddressRange,
    },
    #[error("{at}: tile {tile} expects {bytes} bytes from tile {from_tile} at slot {slot} into {range}, the sender sends {sent} bytes")]
    ReceiveSizeMismatch {
        at: StepAt,
        tile: u32,
        from_tile: u32,
        slot: u32,
        bytes: u32,
        sent: u32,
        range: AddressRange,
    },
    #[error("{at}: the program never completes within the step budget: it would execute {executed} steps, the budget is {budget}")]
    NeverCompletes {
        at: StepAt,
        executed: u64,
        budget: u64,
    },
    #[error("unknown stream '{stream}'")]
    UnknownStream { stream: String },
    #[error("stream '{stream}' is bound as {direction}; {operation} needs the other direction")]
    StreamDirection {
        stream: String,
        direction: &'static str,
        operation: &'static str,
    },
    #[error("stream '{stream}' takes {expected} bytes per slice (a whole number of slices), the host gave {found}")]
    StreamLength {
        stream: String,
        expected: u64,
        found: u64,
    },
    #[error("{at}: stream '{stream}' is written more often in this run than the {slices} slices of its host data (data of one slice is written by every write)")]
    StreamExhausted {
        at: StepAt,
        stream: String,
        slices: u64,
    },
    #[error("{at}: stream '{stream}' has no host data: call write_stream first")]
    StreamNotWritten { at: StepAt, stream: String },
    #[error("stream '{stream}' has not been read by any HostRead step yet")]
    StreamNotRead { stream: String },
    #[error("tile {tile} access {range} is outside the tile or SRAM {sram_start:#x}..{sram_end:#x} (target has {tiles} tiles)")]
    MemoryAccess {
        tile: u32,
        range: AddressRange,
        sram_start: u32,
        sram_end: u32,
        tiles: u32,
    },
}
