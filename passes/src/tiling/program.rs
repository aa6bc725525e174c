//! The tile-level program as plain data: what `ipu-lower-to-tiles` produces and the later
//! lowering stages (storage placement, exchange lowering, package emission) refine.
//!
//! A [`TileProgram`] is one BSP program over all tiles: logical buffers (one name, one memory
//! class and size, held by a set of tiles at one common address so a broadcast can land at the
//! same place on every receiver), compute steps of kernel runs whose arguments name buffer
//! bytes, exchange phases of moves between buffers, and host bindings laid over buffers.
//! Placement fills [`Buffer::address`]; exchange lowering turns moves into slotted transfers.

use std::collections::BTreeMap;

use ipu_device::{KernelSpec, MemoryClass, Precision};
use ipu_runtime::package::BindingRole;

/// Index of a buffer in [`TileProgram::buffers`].
pub type BufferId = usize;

/// A logical buffer: `bytes` bytes of class `class` on every tile of `tiles`, at one address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Buffer {
    /// What it holds (`%arg0.amp_left`), for diagnostics.
    pub name: String,
    pub class: MemoryClass,
    pub bytes: u32,
    /// Tiles holding it, ascending.
    pub tiles: Vec<u32>,
    /// First and last step index (in the `run` program, host steps included) using it.
    pub live: (usize, usize),
    /// Absolute tile address, set by storage placement.
    pub address: Option<u32>,
}

/// Bytes at `offset` inside a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    pub buffer: BufferId,
    pub offset: u32,
}

impl Place {
    pub const fn at(buffer: BufferId, offset: u32) -> Place {
        Place { buffer, offset }
    }
}

/// One run-time argument of a kernel run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arg {
    /// The byte offset from the SRAM base of a place (the kernel ABI).
    Address(Place),
    /// A plain value (row entry index, scale exponent bits).
    Value(u32),
}

/// One kernel call on one tile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    pub tile: u32,
    /// Index into [`TileProgram::kernels`].
    pub kernel: u32,
    pub args: Vec<Arg>,
}

/// One move of an exchange phase: `bytes` from `source` on `source_tile` to `destination`
/// on every tile of `destinations`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Move {
    pub source_tile: u32,
    pub source: Place,
    pub destinations: Vec<u32>,
    pub destination: Place,
    pub bytes: u32,
}

impl Move {
    /// `bytes` from `source` on `from` to `destination` on every tile of `to` (the shape of
    /// a strategy's generated transfer, `for_each_move`).
    pub fn between(
        (from, source): (u32, Place),
        (to, destination): (&[u32], Place),
        bytes: u32,
    ) -> Move {
        Move {
            source_tile: from,
            source,
            destinations: to.to_vec(),
            destination,
            bytes,
        }
    }
}

/// One BSP step of a tile program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TileStep {
    HostWrite {
        binding: usize,
    },
    HostRead {
        binding: usize,
    },
    Compute {
        provenance: String,
        runs: Vec<Run>,
    },
    Exchange {
        phase: u32,
        moves: Vec<Move>,
    },
    /// A global sync with no exchange (the device's `Step::Sync`).
    Sync,
    /// A structured repeat: the `steps` steps that follow (nested repeats and their bodies
    /// counted) run `count` times (the device's `Step::Repeat`, not unrolled).
    Repeat {
        count: u32,
        steps: usize,
    },
}

/// A piece of a host binding: `bytes` contiguous bytes at `place` on `tile`, made of `runs`
/// equal runs of `bytes / runs` device bytes, run r from tensor byte
/// `tensor_offset + r * stride` (a strided gather on the host: the host streams an operand
/// straight into a tile's AMP order). `runs == 1` is one contiguous range. The last `pad`
/// bytes of each run are zeros the host writes (an AMP order's padded 16-element group), not
/// tensor bytes; a run of only padding reads none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostPiece {
    pub tile: u32,
    pub place: Place,
    pub tensor_offset: u64,
    pub bytes: u32,
    pub runs: u32,
    pub stride: u64,
    pub pad: u32,
}

impl HostPiece {
    /// `bytes` contiguous tensor bytes from `tensor_offset`.
    pub fn contiguous(tile: u32, place: Place, tensor_offset: u64, bytes: u32) -> HostPiece {
        HostPiece {
            tile,
            place,
            tensor_offset,
            bytes,
            runs: 1,
            stride: 0,
            pad: 0,
        }
    }

    /// `bytes` of zero padding (no tensor bytes) at `place` on `tile`.
    pub fn zeros(tile: u32, place: Place, bytes: u32) -> HostPiece {
        HostPiece {
            pad: bytes,
            ..HostPiece::contiguous(tile, place, 0, bytes)
        }
    }

    /// Tensor bytes of one run (its device bytes without the padding).
    pub fn tensor_run_bytes(&self) -> u32 {
        (self.bytes / self.runs.max(1)).saturating_sub(self.pad)
    }

    /// The tensor byte ranges the piece covers, in device order (none for padding only).
    pub fn tensor_ranges(&self) -> impl Iterator<Item = std::ops::Range<u64>> + '_ {
        let runs = if self.tensor_run_bytes() == 0 {
            0
        } else {
            self.runs.max(1)
        };
        let run = u64::from(self.tensor_run_bytes());
        (0..u64::from(runs)).map(move |r| {
            let start = self.tensor_offset + r * self.stride;
            start..start + run
        })
    }
}

/// A model tensor streamed through host exchange.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostBinding {
    pub name: String,
    pub role: BindingRole,
    /// The encoding of the streamed bytes (the host converts the tensor's values to it).
    pub precision: Precision,
    /// FP8 scale exponent of the encoding (value = code * 2^scale_exp); 0 otherwise.
    pub scale_exp: i32,
    pub shape: Vec<u64>,
    /// Slices the tensor is streamed in, one per execution of its write (a repeat's
    /// per-iteration stack: `shape[0]` slices; 1 otherwise). The pieces place one slice:
    /// write e streams slice e, its tensor offsets moved by e slices.
    pub iterations: u32,
    pub pieces: Vec<HostPiece>,
    /// Weights: the initial tensor bytes (C order).
    pub data: Vec<u8>,
}

/// The whole tile program.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TileProgram {
    pub name: String,
    pub tiles: u32,
    pub buffers: Vec<Buffer>,
    pub kernels: Vec<KernelSpec>,
    pub bindings: Vec<HostBinding>,
    /// Steps of the `initialize` call (weights).
    pub initialize: Vec<TileStep>,
    /// Steps of the `run` call.
    pub run: Vec<TileStep>,
    /// Provenance and estimate of each planned op, for the profile plan.
    pub ops: Vec<(String, String, u64)>,
}

impl TileProgram {
    /// Adds `spec` unless present; returns its index.
    pub fn kernel(&mut self, spec: KernelSpec) -> u32 {
        if let Some(found) = self.kernels.iter().position(|k| *k == spec) {
            return found as u32;
        }
        self.kernels.push(spec);
        (self.kernels.len() - 1) as u32
    }

    /// Adds a buffer live from step `first` (extended to its later uses by
    /// [`Self::compute_lifetimes`]).
    pub fn buffer(
        &mut self,
        name: impl Into<String>,
        class: MemoryClass,
        bytes: u32,
        tiles: Vec<u32>,
    ) -> BufferId {
        let step = self.run.len();
        self.buffers.push(Buffer {
            name: name.into(),
            class,
            bytes,
            tiles,
            live: (step, step),
            address: None,
        });
        self.buffers.len() - 1
    }

    /// Renames every tile `t < mapping.len()` of the program to `mapping[t]` (the tile
    /// mapping `ipu-select-finalist` selected over the plan's tiles: plan tile -> logical
    /// tile); other tiles keep their ids. `mapping` must be a permutation of
    /// `0..mapping.len()` within the program's tiles; the error says which entry is not.
    pub fn relabel_tiles(&mut self, mapping: &[u32]) -> Result<(), String> {
        if mapping.len() > self.tiles as usize {
            return Err(format!(
                "the tile mapping has {} entries for a program on {} tiles",
                mapping.len(),
                self.tiles
            ));
        }
        let mut seen = vec![false; mapping.len()];
        for (index, &tile) in mapping.iter().enumerate() {
            match seen.get_mut(tile as usize) {
                Some(s) if !*s => *s = true,
                Some(_) => {
                    return Err(format!(
                        "the tile mapping is not a permutation: entry {index} repeats tile {tile}"
                    ))
                }
                None => {
                    return Err(format!(
                        "the tile mapping's entry {index} is tile {tile}, outside 0..{}",
                        mapping.len()
                    ))
                }
            }
        }
        let map = |tile: &mut u32| {
            if let Some(&to) = mapping.get(*tile as usize) {
                *tile = to;
            }
        };
        for buffer in &mut self.buffers {
            buffer.tiles.iter_mut().for_each(map);
            buffer.tiles.sort_unstable();
        }
        for binding in &mut self.bindings {
            binding.pieces.iter_mut().for_each(|p| map(&mut p.tile));
        }
        for step in self.initialize.iter_mut().chain(&mut self.run) {
            match step {
                TileStep::Compute { runs, .. } => {
                    runs.iter_mut().for_each(|r| map(&mut r.tile));
                    runs.sort_by_key(|r| r.tile);
                }
                TileStep::Exchange { moves, .. } => {
                    for m in moves.iter_mut() {
                        map(&mut m.source_tile);
                        m.destinations.iter_mut().for_each(map);
                        m.destinations.sort_unstable();
                    }
                }
                TileStep::HostWrite { .. }
                | TileStep::HostRead { .. }
                | TileStep::Sync
                | TileStep::Repeat { .. } => {}
            }
        }
        Ok(())
    }

    /// Logical shards: (buffer, tile) pairs.
    pub fn logical_shards(&self) -> usize {
        self.buffers.iter().map(|b| b.tiles.len()).sum()
    }

    /// Every exchange phase, `initialize` first: (phase id, moves).
    pub fn exchange_steps(&self) -> impl Iterator<Item = (u32, &[Move])> {
        self.initialize
            .iter()
            .chain(&self.run)
            .filter_map(|step| match step {
                TileStep::Exchange { phase, moves } => Some((*phase, moves.as_slice())),
                _ => None,
            })
    }

    pub fn exchange_phases(&self) -> usize {
        self.exchange_steps().count()
    }

    /// How many times each of `steps` runs: the product of the counts of the repeats around it.
    pub fn multiplicities(steps: &[TileStep]) -> Vec<u64> {
        let mut times = vec![1u64; steps.len()];
        for (index, step) in steps.iter().enumerate() {
            if let TileStep::Repeat { count, steps: body } = *step {
                let end = (index + 1 + body).min(steps.len());
                for t in &mut times[index + 1..end] {
                    *t = t.saturating_mul(u64::from(count));
                }
            }
        }
        times
    }

    /// Every exchange phase of the `run` program with how many times it runs.
    pub fn run_exchange_multiplicities(&self) -> BTreeMap<u32, u64> {
        let times = Self::multiplicities(&self.run);
        self.run
            .iter()
            .zip(times)
            .filter_map(|(step, t)| match step {
                TileStep::Exchange { phase, .. } => Some((*phase, t)),
                _ => None,
            })
            .collect()
    }

    /// Checks that every repeat's body lies inside its program and nests properly.
    pub fn check_repeats(steps: &[TileStep]) -> Result<(), String> {
        let mut open: Vec<usize> = Vec::new();
        for (index, step) in steps.iter().enumerate() {
            while open.last().is_some_and(|&end| end <= index) {
                open.pop();
            }
            if let TileStep::Repeat { count, steps: body } = *step {
                let end = index + 1 + body;
                if count == 0 || body == 0 {
                    return Err(format!(
                        "step {index}: a repeat needs count >= 1 and at least one step"
                    ));
                }
                if end > steps.len() || open.last().is_some_and(|&outer| end > outer) {
                    return Err(format!(
                        "step {index}: the repeat's {body} steps run past the end of its enclosing body or program"
                    ));
                }
                open.push(end);
            }
        }
        Ok(())
    }

    /// Recomputes every buffer's live range from the `run` steps that use it (initialize
    /// steps count as step 0: weights stay live from the start).
    pub fn compute_lifetimes(&mut self) {
        let mut live: Vec<Option<(usize, usize)>> = vec![None; self.buffers.len()];
        let mut mark = |buffer: BufferId, step: usize| {
            let entry = &mut live[buffer];
            *entry = Some(match *entry {
                None => (step, step),
                Some((a, b)) => (a.min(step), b.max(step)),
            });
        };
        let visit =
            |steps: &[TileStep], base: Option<usize>, mark: &mut dyn FnMut(usize, usize)| {
                for (index, step) in steps.iter().enumerate() {
                    let at = base.unwrap_or(index);
                    match step {
                        TileStep::HostWrite { binding } | TileStep::HostRead { binding } => {
                            for piece in &self.bindings[*binding].pieces {
                                mark(piece.place.buffer, at);
                            }
                        }
                        TileStep::Compute { runs, .. } => {
                            for run in runs {
                                for arg in &run.args {
                                    if let Arg::Address(place) = arg {
                                        mark(place.buffer, at);
                                    }
                                }
                            }
                        }
                        TileStep::Exchange { moves, .. } => {
                            for m in moves {
                                mark(m.source.buffer, at);
                                mark(m.destination.buffer, at);
                            }
                        }
                        TileStep::Sync | TileStep::Repeat { .. } => {}
                    }
                }
            };
        visit(&self.initialize, Some(0), &mut mark);
        visit(&self.run, None, &mut mark);
        // A buffer used inside a repeat that the next iteration reads where this one left
        // it (a carried value: `super::carried`), or that lives on before the repeat, lives
        // over the whole repeat and must not be overwritten. The body's other buffers are
        // each iteration's own (written before they are read): they live from their first
        // to their last use, and share memory like buffers outside a repeat (one read after
        // the repeat keeps the last iteration's bytes from its write on).
        for (index, step) in self.run.iter().enumerate() {
            if let TileStep::Repeat { steps, .. } = *step {
                let end = (index + steps).min(self.run.len().saturating_sub(1));
                let carried = super::carried::carried_buffers(self, &self.run[index + 1..=end]);
                for (buffer, range) in live.iter_mut().enumerate() {
                    let Some(range) = range else { continue };
                    let inside = range.0 <= end && range.1 > index;
                    if inside && (range.0 <= index || carried.contains(&buffer)) {
                        *range = (range.0.min(index), range.1.max(end));
                    }
                }
            }
        }
        for (buffer, range) in self.buffers.iter_mut().zip(live) {
            buffer.live = range.unwrap_or((0, 0));
        }
        // Weights and parameters written by `initialize` must survive every run.
        let weights: Vec<BufferId> = self
            .bindings
            .iter()
            .filter(|b| matches!(b.role, BindingRole::Weight | BindingRole::Parameter))
            .flat_map(|b| b.pieces.iter().map(|p| p.place.buffer))
            .collect();
        let end = self.run.len();
        for buffer in weights {
            self.buffers[buffer].live = (0, end);
        }
    }
}

/// Pushes the move of `bytes` from `source` on its tile to `destination` on every tile of
/// `destinations`, if there is any.
pub fn push_move(
    moves: &mut Vec<Move>,
    (source_tile, source): (u32, Place),
    destinations: Vec<u32>,
    destination: Place,
    bytes: u32,
) {
    if !destinations.is_empty() {
        moves.push(Move {
            source_tile,
            source,
            destinations,
            destination,
            bytes,
        });
    }
}
