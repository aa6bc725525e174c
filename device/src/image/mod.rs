//! The loadable device image: what the compiler's lowering produces, what the runtime's
//! `.ipuexe` wraps and what the simulator (or a device) executes.
//!
//! An image holds
//! * a kernel table ([`KernelSpec`]s; compute steps refer to kernels by index),
//! * per tile, the initial memory segments and the declared code ranges (instruction fetch
//!   contends with exchange per memory element, so the hazard checker must know them),
//! * host stream bindings (named slices of tile memory the runtime fills or reads),
//! * named programs (`initialize`, `run`, ...), each a list of BSP [`Step`]s shared by all
//!   tiles, as the hardware's bulk-synchronous execution is one program over all tiles.
//!
//! Large tables are dense vectors of small rows (one row per kernel run, per send, per
//! receive), never per-byte structures. Tiles that have no segments have no [`TileImage`].
//!
//! ## Exchange encoding
//! An [`ExchangePhase`] stores each tile's schedule the way the hardware sees it: the sender
//! rows ("at exchange cycle `slot`, send `bytes` from `address`") and the receiver rows ("at
//! exchange cycle `slot`, listen to `from_tile` and write `bytes` at `address`"). A receive
//! matches the send of `from_tile` with the same `slot`; one send with many receivers is a
//! broadcast. A receive with no matching send is a receiver that waits forever, which the
//! simulator refuses. [`ExchangePhase::from_transfers`] builds the rows from a
//! transfer-centric view ([`Transfer`]).
//!
//! Cycle slots count exchange cycles after the phase's fixed cost
//! (`target.exchange.phase_cycles`); a transfer of `bytes` occupies its sender's bus and each
//! receiver for `ceil(bytes / target.exchange.bytes_per_cycle)` cycles from its slot.
//!
//! ## Addresses
//! Every address in an image is an absolute tile address (`target.memory.sram_base` ..
//! `sram_base + sram_bytes`), except kernel run arguments, which follow the kernel ABI
//! (byte offsets from the SRAM base; see `kernels::spec`).

mod validate;

use serde::{Deserialize, Serialize};

use crate::kernels::spec::KernelSpec;

pub use validate::{ImageError, ImageSummary};

/// Version of the image format; bumped on any incompatible change of these types.
pub const IMAGE_FORMAT_VERSION: u32 = 1;

/// A loadable image for one target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceImage {
    pub format_version: u32,
    /// Name of the target the image was built for (`Target::name`).
    pub target: String,
    /// Kernel table; [`KernelRun::kernel`] indexes it.
    pub kernels: Vec<KernelSpec>,
    /// Initial memory of the tiles that have any, at most one entry per tile.
    pub tiles: Vec<TileImage>,
    /// Host streams, unique by name.
    pub streams: Vec<StreamBinding>,
    /// Programs, unique by name (the runtime's host exchange calls run them).
    pub programs: Vec<Program>,
}

impl DeviceImage {
    /// An empty image for `target` (by name).
    pub fn new(target: impl Into<String>) -> Self {
        DeviceImage {
            format_version: IMAGE_FORMAT_VERSION,
            target: target.into(),
            kernels: Vec::new(),
            tiles: Vec::new(),
            streams: Vec::new(),
            programs: Vec::new(),
        }
    }

    /// Adds `spec` to the kernel table unless an equal spec is there; returns its index.
    pub fn kernel_index(&mut self, spec: KernelSpec) -> u32 {
        if let Some(found) = self.kernels.iter().position(|k| *k == spec) {
            return found as u32;
        }
        self.kernels.push(spec);
        (self.kernels.len() - 1) as u32
    }

    /// The image of `tile`, created empty if missing.
    pub fn tile_mut(&mut self, tile: u32) -> &mut TileImage {
        let at = match self.tiles.binary_search_by_key(&tile, |t| t.tile) {
            Ok(at) => at,
            Err(at) => {
                self.tiles.insert(
                    at,
                    TileImage {
                        tile,
                        segments: Vec::new(),
                        code: Vec::new(),
                    },
                );
                at
            }
        };
        &mut self.tiles[at]
    }

    /// Adds an initial memory segment to `tile`.
    pub fn add_segment(&mut self, tile: u32, address: u32, bytes: Vec<u8>) {
        self.tile_mut(tile)
            .segments
            .push(Segment { address, bytes });
    }

    pub fn program(&self, name: &str) -> Option<&Program> {
        self.programs.iter().find(|p| p.name == name)
    }

    pub fn stream(&self, name: &str) -> Option<&StreamBinding> {
        self.streams.iter().find(|s| s.name == name)
    }
}

/// Initial memory and declared code of one tile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TileImage {
    pub tile: u32,
    /// Non-overlapping segments, loaded before any program runs.
    pub segments: Vec<Segment>,
    /// Ranges holding instructions (region 0 only: the only executable region). The tile
    /// fetches from them while it runs its exchange code, so exchange accesses to their
    /// memory elements conflict with instruction fetch.
    pub code: Vec<AddressRange>,
}

/// Bytes to place at an absolute tile address.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Segment {
    pub address: u32,
    pub bytes: Vec<u8>,
}

/// A half-open range `[start, start + bytes)` of absolute tile addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct AddressRange {
    pub start: u32,
    pub bytes: u32,
}

impl AddressRange {
    pub const fn new(start: u32, bytes: u32) -> Self {
        AddressRange { start, bytes }
    }

    /// One past the last address, widened so that it cannot overflow.
    pub const fn end(&self) -> u64 {
        self.start as u64 + self.bytes as u64
    }
}

impl std::fmt::Display for AddressRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:#x}..{:#x}", self.start, self.end())
    }
}

/// Direction of a host stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum StreamDirection {
    /// Host to device (inputs, weights): filled by [`Step::HostWrite`].
    HostToDevice,
    /// Device to host (outputs): captured by [`Step::HostRead`].
    DeviceToHost,
}

/// A named host stream: its bytes are the concatenation of `slices` in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamBinding {
    pub name: String,
    pub direction: StreamDirection,
    pub slices: Vec<StreamSlice>,
}

impl StreamBinding {
    /// Total bytes of the stream.
    pub fn bytes(&self) -> u64 {
        self.slices.iter().map(|s| u64::from(s.bytes)).sum()
    }
}

/// One slice of a host stream in one tile's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamSlice {
    pub tile: u32,
    pub address: u32,
    pub bytes: u32,
}

/// A named program: BSP supersteps shared by all tiles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Program {
    pub name: String,
    pub steps: Vec<Step>,
}

/// One BSP step. Steps are numbered in pre-order over the program (a repeat gets a number,
/// then its body steps), and errors and profiles name steps by that number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Step {
    /// Every listed tile runs its kernels, in list order per tile; tiles are independent.
    Compute(ComputeStep),
    /// One exchange phase (it includes the global sync that precedes it).
    Exchange(ExchangePhase),
    /// A global sync.
    Sync,
    /// The body `count` times (a structured loop, not unrolled).
    Repeat { count: u32, body: Vec<Step> },
    /// Copies the host's bytes for this host-to-device stream into tile memory.
    HostWrite { stream: String },
    /// Copies tile memory of this device-to-host stream out to the host.
    HostRead { stream: String },
}

/// Kernel runs of one compute step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ComputeStep {
    /// The op this step implements (an MLIR location string), for profiles.
    pub provenance: String,
    /// Runs of all tiles; a tile's runs execute in the order listed.
    pub runs: Vec<KernelRun>,
}

/// One kernel call on one tile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelRun {
    pub tile: u32,
    /// Index into [`DeviceImage::kernels`].
    pub kernel: u32,
    /// Run-time arguments as the kernel's variant documents them.
    pub args: Vec<u32>,
}

/// One exchange phase: the encoded per-tile schedules (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExchangePhase {
    /// Phase id assigned by exchange lowering (for profiles and diagnostics).
    pub phase: u32,
    pub sends: Vec<SendRow>,
    pub receives: Vec<ReceiveRow>,
}

/// A sender's schedule row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SendRow {
    pub tile: u32,
    pub address: u32,
    pub bytes: u32,
    pub slot: u32,
}

/// A receiver's schedule row: listens to `from_tile` at `slot`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReceiveRow {
    pub tile: u32,
    pub from_tile: u32,
    pub address: u32,
    pub bytes: u32,
    pub slot: u32,
}

/// Transfer-centric view of an exchange: one source, one or many destinations (broadcast),
/// the same destination address on every destination tile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Transfer {
    pub source_tile: u32,
    pub source_address: u32,
    pub destinations: Vec<u32>,
    pub destination_address: u32,
    pub bytes: u32,
    pub slot: u32,
}

impl ExchangePhase {
    /// Encodes transfers as sender and receiver rows.
    pub fn from_transfers(phase: u32, transfers: &[Transfer]) -> Self {
        let sends = transfers
            .iter()
            .map(|t| SendRow {
                tile: t.source_tile,
                address: t.source_address,
                bytes: t.bytes,
                slot: t.slot,
            })
            .collect();
        let receives = transfers
            .iter()
            .flat_map(|t| {
                t.destinations.iter().map(move |&tile| ReceiveRow {
                    tile,
                    from_tile: t.source_tile,
                    address: t.destination_address,
                    bytes: t.bytes,
                    slot: t.slot,
                })
            })
            .collect();
        ExchangePhase {
            phase,
            sends,
            receives,
        }
    }
}
