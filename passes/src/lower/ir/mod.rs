//! Tile designs in the `ipu_tile` dialect (dialects/irdl/ipu_tile.irdl.mlir; its typed views are
//! `ipu_dialects::tile`): a [`TileDesign`]
//! (a [`TileProgram`] plus what the later passes add: support memory, exchange schedules,
//! emitted code) is written as a nested `builtin.module` of `ipu_tile` ops and read back,
//! with every id, tile number, row layout and address range checked on read.
//!
//! ```mlir
//! module @gemm.tiles attributes {ipu_tile.function = "gemm", ipu_tile.tiles = 1472 : i64} {
//!   "ipu_tile.buffer"() {id = 0 : i64, name = "op0.a", class = "standard", bytes = 8192 : i64,
//!                        tiles = array<i32: 0, 1>, live = array<i64: 0, 3>} : () -> ()
//!   "ipu_tile.compute"() {program = "run", provenance = "op0",
//!                         runs = array<i64: 0, 0, 1, 0, 0>} : () -> ()
//! }
//! ```

use std::collections::BTreeMap;

use ipu_device::Target;
use melior::{
    ir::{block::BlockLike, operation::OperationLike, Location, OperationRef, RegionLike},
    Context,
};

use super::place::SupportMemory;
use super::program::{Move, TileProgram};
use super::LowerError;

pub mod handoff;
mod read;
mod write;

pub use read::read_design;
use write::build_tile_module;
pub use write::{attribute_bytes, element_type_text, Changes};

pub use ipu_dialects::tile::{FUNCTION_ATTRIBUTE, TARGET_ATTRIBUTE, TILES_ATTRIBUTE};

/// An exchange phase's stored schedule (`ipu-lower-exchanges`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSchedule {
    /// Hash of what the schedule depends on (the moves' tiles and sizes, not addresses).
    pub key: u64,
    /// Rows (move, byte offset, bytes, cycle slot).
    pub pieces: Vec<[u64; 4]>,
    /// Scheduled cycles of the phase (fixed cost plus horizon).
    pub cycles: u64,
}

impl StoredSchedule {
    /// The rows of a scheduler result, under `key`.
    pub fn new(key: u64, schedule: &crate::exchange::PhaseSchedule) -> StoredSchedule {
        StoredSchedule {
            key,
            pieces: schedule
                .pieces
                .iter()
                .map(|p| [p.transfer as u64, p.offset, p.bytes, p.start])
                .collect(),
            cycles: schedule.cycles,
        }
    }
}

/// What `ipu-emit-tile-code` records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmittedCode {
    pub tiles: Vec<u32>,
    pub final_cycles: u64,
    pub final_exchange: u64,
}

/// A tile program and what the lowering stages added to it.
#[derive(Debug, Clone, PartialEq)]
pub struct TileDesign {
    pub program: TileProgram,
    /// The graph function it implements.
    pub function: String,
    /// The target table's name.
    pub target: String,
    pub support: Option<SupportMemory>,
    /// Stored schedules by phase id.
    pub schedules: BTreeMap<u32, StoredSchedule>,
    pub code: Option<EmittedCode>,
}

impl TileDesign {
    pub fn new(program: TileProgram, function: &str, target: &Target) -> TileDesign {
        TileDesign {
            program,
            function: function.to_string(),
            target: target.name.clone(),
            support: None,
            schedules: BTreeMap::new(),
            code: None,
        }
    }
}

/// The key a phase's schedule depends on: every move's source tile, destinations and size.
pub fn schedule_key(moves: &[Move]) -> u64 {
    use std::hash::{Hash, Hasher};
    // FNV-1a over a fixed encoding: stable across runs and builds (std's SipHash keys are
    // fixed too, but FNV keeps the value independent of the standard library's choice).
    let mut hasher = Fnv(0xcbf2_9ce4_8422_2325);
    for m in moves {
        m.source_tile.hash(&mut hasher);
        m.destinations.hash(&mut hasher);
        m.bytes.hash(&mut hasher);
    }
    hasher.finish()
}

struct Fnv(u64);

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Finding and replacing tile modules.

/// The tile modules directly inside `module` (nested `builtin.module`s with
/// [`TILES_ATTRIBUTE`]).
pub fn tile_modules<'c, 'a>(module: OperationRef<'c, 'a>) -> Vec<OperationRef<'c, 'a>> {
    let mut found = Vec::new();
    let Ok(region) = module.region(0) else {
        return found;
    };
    let Some(block) = region.first_block() else {
        return found;
    };
    let mut next = block.first_operation();
    while let Some(op) = next {
        if op.name().as_string_ref().as_str() == Ok("builtin.module")
            && op.has_attribute(TILES_ATTRIBUTE)
        {
            found.push(op);
        }
        next = op.next_in_block();
    }
    found
}

/// Replaces `old` (a tile module) by the module written for `design`, at the same place, and
/// returns it. With `changes` (`old` was written by this module and `design` differs from what
/// it holds in those parts only), the ops of the other parts are moved over instead of written
/// again.
pub fn replace_tile_module<'c, 'a>(
    context: &'c Context,
    old: OperationRef<'c, 'a>,
    design: &TileDesign,
    changes: Option<Changes>,
) -> Result<OperationRef<'c, 'a>, LowerError> {
    let location = old.location();
    let block = old
        .block()
        .ok_or_else(|| LowerError::Input("tile module has no parent block".into()))?;
    let reuse = changes.map(|changes| write::Reuse {
        changes,
        ops: old
            .region(0)
            .ok()
            .and_then(|region| region.first_block())
            .map(|body| {
                let mut ops = Vec::new();
                let mut next = body.first_operation();
                while let Some(op) = next {
                    ops.push(op);
                    next = op.next_in_block();
                }
                ops
            })
            .unwrap_or_default(),
    });
    let new = build_tile_module(context, location, design, reuse)?;
    let new = block.insert_operation_before(old, new);
    // SAFETY: `old` is a live op owned by its block; it is first removed from the block (the
    // replacement is already in place) and then destroyed, and no handle to it is used after.
    unsafe {
        mlir_sys::mlirOperationRemoveFromParent(old.to_raw());
        mlir_sys::mlirOperationDestroy(old.to_raw());
    }
    Ok(new)
}

/// Appends the module written for `design` at the end of `module`'s body, and returns it.
pub fn append_tile_module<'c, 'a>(
    context: &'c Context,
    module: OperationRef<'c, 'a>,
    location: Location<'c>,
    design: &TileDesign,
) -> Result<OperationRef<'c, 'a>, LowerError> {
    let region = module
        .region(0)
        .map_err(|_| LowerError::Input("module has no body".into()))?;
    let block = region
        .first_block()
        .ok_or_else(|| LowerError::Input("module has no body block".into()))?;
    let new = build_tile_module(context, location, design, None)?;
    Ok(block.append_operation(new))
}
