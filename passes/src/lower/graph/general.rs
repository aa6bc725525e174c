//! The general lowering: every op the GEMM fast path does not take.
//!
//! ## Fetches
//! An op states what each of its tiles needs as [`Fetch`]es: rows `[r0, r1)` and columns
//! `[c0, c1)` of an operand's 2-D view, wanted dense and row-major at a place on a tile.
//! [`Transfers`] turns them into exchange moves out of the operand's [`Blocks`] (a row range
//! that is whole rows on both sides moves as one transfer; a segment wanted at the same place
//! by several tiles is one broadcast) and into `Copy` runs where the bytes are already on the
//! tile. An op's fetches of all its operands form one exchange phase, followed by one compute
//! step: the copies, then the op's kernel runs. A host operand is first streamed into a row
//! grid ([`Lowering::on_device`]): weights once in `initialize`, arguments in `run`.
//!
//! ## Ops
//! * Row ops (`ipu.layer_norm`, `ipu.softmax`) run on a row grid (whole rows per tile).
//! * `ipu.matmul` with batches (broadcast on either side), transposed operands or a right
//!   operand computed on the device: one tile per (batch, row block, column block) of the
//!   result; the tile fetches its A rows and B columns and runs a tile-local GEMM
//!   ([`local_gemm`]: rearrange into AMP orders with zero padding, K blocks of at most the
//!   kernel's weight buffer, rearrange the output back).
//! * `ipu.attention`: one tile per (batch-head, query block). With whole score rows, it
//!   fetches its queries and the head's keys and values, transposes the keys, and runs
//!   `S = Q K^T` (tile-local GEMM), `S *= scale`, the (causal) row softmax and `O = P V`.
//!   When those do not fit a tile's budget, the keys stream through in blocks with the
//!   online softmax ([`Lowering::attention_streamed`]).
//! * `ipu.rearrange` whose permutation keeps the last axis: a row gather; one that swaps the
//!   last two axes: one tile per matrix transposes it; without a permutation (a layout-only
//!   rearrange) the value is unchanged.
//! * `ipu.slice`, `ipu.concat`: a row gather, each result row fetched from pieces of operand
//!   rows (`strategies::gather`).
//! * `ipu.cast` (FP8 at scale 0): the `Cast` kernel per block, on the operand's grid.
//! * `ipu.add`, `ipu.gelu`, `ipu.cast`: as their pointwise plans say
//!   (`lower::graph::pointwise`; the strategy is `strategies::pointwise`).

use ipu_dialects::plan::{AttentionPlan, AttentionSchedule, OperatorPlan};
use std::collections::BTreeMap;

use ipu_device::kernels::describe::default_partials;
use ipu_device::{KernelSpec, MemoryClass, Precision};
use tracing::info;

use super::{gemm_grid, not_followed, to_u32, unsupported, view_2d, Blocks, Lowering};
use crate::lower::gemm::GemmGrid;
use crate::lower::program::{Arg, BufferId, HostPiece, Move, Place, Run, TileStep};
use crate::lower::LowerError;
use crate::strategies::local_gemm::{pad16, LocalCall, LocalGemm};
use crate::tiling::{OpKind, ValueId};

mod attention;
mod gather;
mod matmul;
mod rows;

use crate::strategies::attention::{
    columns_key_block, heads_per_tile as attention_heads_per_tile, home_tiles, materialized_fits,
    query_blocks_allowed, query_packing_shared, streamed_key_block, wave_key_block,
    DistributedKeys, KeySplit, MaterializedTile, QueryPack, RaggedHeads, StreamedTile,
};

/// Rows `[rows.0, rows.1)` and columns `[cols.0, cols.1)` of a value's 2-D view, wanted dense
/// and row-major at `place` on `tile`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Fetch {
    pub tile: u32,
    pub rows: (u32, u32),
    pub cols: (u32, u32),
    pub place: Place,
}

impl Fetch {
    /// Rows `first..first + count` of a `width`-column view, whole, to `place` on `tile`.
    pub(super) fn rows(tile: u32, (first, count): (u32, u32), width: u32, place: Place) -> Fetch {
        Fetch {
            tile,
            rows: (first, first + count),
            cols: (0, width),
            place,
        }
    }
}

/// A rectangle of a host value's 2-D view (rows, columns) fetched to a buffer offset.
type HostRect = ((u32, u32), (u32, u32), BufferId, u32);

/// One transfer's identity: (source tile, source buffer, source offset, bytes, destination
/// buffer, destination offset).
type TransferKey = (u32, BufferId, u32, u32, BufferId, u32);

/// The moves and local copies of one op's fetches (see the module docs).
#[derive(Default)]
pub(super) struct Transfers {
    /// Transfer -> destination tiles.
    moves: BTreeMap<TransferKey, Vec<u32>>,
    /// Transfers whose destination is the source tile.
    copies: std::collections::BTreeSet<TransferKey>,
}

impl Transfers {
    pub(in crate::lower::graph) fn add(
        &mut self,
        source_tile: u32,
        source: Place,
        tile: u32,
        destination: Place,
        bytes: u32,
    ) {
        let key = (
            source_tile,
            source.buffer,
            source.offset,
            bytes,
            destination.buffer,
            destination.offset,
        );
        if source_tile == tile {
            self.copies.insert(key);
        } else {
            let tiles = self.moves.entry(key).or_default();
            if !tiles.contains(&tile) {
                tiles.push(tile);
            }
        }
    }

    /// Adds the transfers that bring every block of `target` (same view as `source`) from
    /// `source` into `target`'s buffer.
    pub fn gather_blocks(&mut self, source: &Blocks, target: &Blocks) {
        let g = &target.grid;
        for (i, j) in g.grid() {
            self.gather(
                source,
                Fetch {
                    tile: g.tile(i, j),
                    rows: (g.first_row(i), g.first_row(i) + g.rows(i)),
                    cols: (j * g.cb, (j + 1) * g.cb),
                    place: Place::at(target.buffer, 0),
                },
            );
        }
    }

    /// Adds the transfers that bring `fetch` of `source` into place.
    pub fn gather(&mut self, source: &Blocks, fetch: Fetch) {
        let g = &source.grid;
        let e = source.precision.bytes();
        let width = fetch.cols.1 - fetch.cols.0;
        debug_assert!(fetch.rows.1 <= g.m && fetch.cols.1 <= g.n && width > 0);
        let mut r = fetch.rows.0;
        while r < fetch.rows.1 {
            let i = r / g.rows_padded;
            let end = (g.first_row(i) + g.rows(i)).min(fetch.rows.1);
            let local = r - g.first_row(i);
            for j in fetch.cols.0 / g.cb..=(fetch.cols.1 - 1) / g.cb {
                let (s0, s1) = (fetch.cols.0.max(j * g.cb), fetch.cols.1.min((j + 1) * g.cb));
                let segment = s1 - s0;
                // Whole rows on both sides: the row range is contiguous in both buffers.
                let whole = segment == g.cb && segment == width;
                let (pieces, rows_per_piece) = if whole { (1, end - r) } else { (end - r, 1) };
                for q in 0..pieces {
                    let row = r + q;
                    let from = ((local + q) * g.cb + (s0 - j * g.cb)) * e;
                    let to = fetch.place.offset
                        + ((row - fetch.rows.0) * width + (s0 - fetch.cols.0)) * e;
                    self.add(
                        g.tile(i, j),
                        Place::at(source.buffer, from),
                        fetch.tile,
                        Place::at(fetch.place.buffer, to),
                        segment * e * rows_per_piece,
                    );
                }
            }
            r = end;
        }
    }
}

fn address(buffer: BufferId, offset: u32) -> Arg {
    Arg::Address(Place::at(buffer, offset))
}

/// Smallest divisor `d` of `unit` with `count(d) <= tiles`.
fn smallest_divisor(unit: u32, fits: impl Fn(u32) -> bool) -> Option<u32> {
    (1..=unit).find(|d| unit.is_multiple_of(*d) && fits(*d))
}

/// A row grid over an `[m x n]` view: whole rows per tile, row blocks of `rows_padded`.
fn row_grid(m: u32, n: u32, rows_padded: u32) -> GemmGrid {
    GemmGrid {
        m,
        k: n,
        n,
        cb: n,
        nb: 1,
        mb: m.div_ceil(rows_padded),
        rows_padded,
        kb: n,
        k_steps: 1,
    }
}

/// The scratch buffers of one tile-local GEMM shape (allocated on all the op's tiles).
struct GemmScratch {
    /// The GEMM the buffers serve (its shape, precisions, weights class, packed right operand).
    gemm: LocalGemm,
    /// FP8 scale exponent when the inputs are cast.
    scale_exp: i32,
    cast: Option<(BufferId, BufferId)>,
    a_amp: BufferId,
    b_amp: BufferId,
    c_amp: BufferId,
}

/// Appends to `runs` one tile-local GEMM on `tile`: `out[rows x n] = a[rows x k] b[k x n]`,
/// all dense row-major in the GEMM's host precision (the result in the partials precision):
/// the calls of [`LocalGemm::calls`], each given its operands.
fn local_gemm(
    lowering: &mut Lowering<'_>,
    runs: &mut Vec<Run>,
    tile: u32,
    (a, b, out): (Place, Place, Place),
    s: &GemmScratch,
) {
    let program = &mut lowering.program;
    let gemm = &s.gemm;
    let n16 = pad16(gemm.n);
    let ie = gemm.input.bytes();
    let scale = Arg::Value(s.scale_exp as u32);
    // Where the left and right blocks are read from: their cast copies once cast.
    let (cast_a, cast_b) = match s.cast {
        Some((a_cast, b_cast)) => (Place::at(a_cast, 0), Place::at(b_cast, 0)),
        None => (a, b),
    };
    let (left, right, b_element) = if s.cast.is_some() {
        (cast_a, if gemm.b_packed { b } else { cast_b }, ie)
    } else {
        (a, b, gemm.host.bytes())
    };
    for call in gemm.calls() {
        let args = match &call {
            LocalCall::CastLeft(_) => vec![Arg::Address(a), Arg::Address(cast_a), scale],
            LocalCall::CastRight(_) => vec![Arg::Address(b), Arg::Address(cast_b), scale],
            LocalCall::PackLeft(_) => vec![Arg::Address(left), address(s.a_amp, 0)],
            LocalCall::PackRight { k0, .. } => vec![
                Arg::Address(Place::at(
                    right.buffer,
                    right.offset + k0 * gemm.n * b_element,
                )),
                address(s.b_amp, 0),
            ],
            LocalCall::Gemm { k0, .. } => {
                let weights = if gemm.b_packed {
                    Arg::Address(Place::at(right.buffer, right.offset + k0 * n16 * ie))
                } else {
                    address(s.b_amp, 0)
                };
                vec![
                    address(s.a_amp, k0 * gemm.rows * ie),
                    weights,
                    address(s.c_amp, 0),
                    Arg::Value(0),
                    scale,
                    scale,
                ]
            }
            LocalCall::UnpackOutput(_) => vec![address(s.c_amp, 0), Arg::Address(out)],
        };
        runs.push(Run {
            tile,
            kernel: program.kernel(call.spec().clone()),
            args,
        });
    }
}

impl Lowering<'_> {
    /// `value` on the device: its blocks, or for a host value a row grid it is streamed into
    /// (whole rows, as evenly over the tiles as they go).
    pub(super) fn on_device(&mut self, value: ValueId) -> Result<Blocks, LowerError> {
        self.on_device_in(value, None)
    }

    /// [`Self::on_device`], a host value streamed in row blocks of `rows_per_tile` rows when
    /// given (whole heads per tile for an attention that runs several per tile).
    pub(super) fn on_device_in(
        &mut self,
        value: ValueId,
        rows_per_tile: Option<u32>,
    ) -> Result<Blocks, LowerError> {
        if let Some(blocks) = self.placed.get(&value) {
            return Ok(blocks.clone());
        }
        let v = &self.graph.values[value];
        let (m, n) = view_2d(&v.shape)?;
        if m == 0 || n == 0 {
            return Err(LowerError::Input(format!(
                "value {value} of shape {:?} is empty",
                v.shape
            )));
        }
        let precision = v.element;
        let e = precision.bytes();
        let rows = rows_per_tile
            .filter(|&r| r > 0 && m.div_ceil(r) <= self.tiles)
            .unwrap_or_else(|| m.div_ceil(self.tiles.min(m)));
        let grid = row_grid(m, n, rows);
        let name = format!("{}.home", self.binding_name(value));
        let buffer = self.program.buffer(
            name,
            MemoryClass::Standard,
            grid.rows_padded * n * e,
            grid.tiles(),
        );
        let pieces = (0..grid.mb)
            .map(|i| HostPiece {
                tile: grid.tile(i, 0),
                place: Place::at(buffer, 0),
                tensor_offset: u64::from(grid.first_row(i)) * u64::from(n * e),
                bytes: grid.rows(i) * n * e,
                runs: 1,
                stride: 0,
                pad: 0,
            })
            .collect();
        self.stream(value, pieces)?;
        let blocks = Blocks {
            grid,
            buffer,
            precision,
        };
        self.placed.insert(value, blocks.clone());
        Ok(blocks)
    }

    /// Pushes the exchange phase of `transfers` (if it moves anything) and returns its
    /// local copies, to run first in the op's compute step.
    pub(super) fn flush(&mut self, transfers: Transfers) -> Vec<Run> {
        let moves: Vec<Move> = transfers
            .moves
            .into_iter()
            .map(
                |((source_tile, sb, so, bytes, db, doff), mut destinations)| {
                    destinations.sort_unstable();
                    Move {
                        source_tile,
                        source: Place::at(sb, so),
                        destinations,
                        destination: Place::at(db, doff),
                        bytes,
                    }
                },
            )
            .collect();
        if !moves.is_empty() {
            let phase = self.program.exchange_phases() as u32;
            self.program.run.push(TileStep::Exchange { phase, moves });
        }
        transfers
            .copies
            .into_iter()
            .map(|(tile, sb, so, bytes, db, doff)| Run {
                tile,
                kernel: self.program.kernel(KernelSpec::Copy { bytes }),
                args: vec![address(sb, so), address(db, doff)],
            })
            .collect()
    }

    /// Writes host value `value` into every fetch of `fetches` (rectangles of its 2-D view,
    /// row-major at each fetch's place), encoded in `precision` (FP8 at `scale`), as the
    /// planner homes host values: each distinct rectangle is written once, cut by rows among
    /// the tiles that read it, which exchange their pieces (added to `transfers`). The host
    /// writes a tile's pieces into a staging buffer of op `index` (`<what>`), not into the
    /// buffer the pieces are gathered into, so no tile sends from and receives into the
    /// same buffer (placement can keep them in different memory elements); a tile copies its
    /// own pieces locally.
    fn host_fetches(
        &mut self,
        (index, what): (usize, &str),
        value: ValueId,
        fetches: &[Fetch],
        (precision, scale): (Precision, i32),
        transfers: &mut Transfers,
    ) -> Result<(), LowerError> {
        let (_, width) = view_2d(&self.graph.values[value].shape)?;
        let e = precision.bytes();
        let mut readers: BTreeMap<HostRect, Vec<u32>> = BTreeMap::new();
        for f in fetches {
            let tiles = readers
                .entry((f.rows, f.cols, f.place.buffer, f.place.offset))
                .or_default();
            if !tiles.contains(&f.tile) {
                tiles.push(f.tile);
            }
        }
        // (reader, rows a..b of the rectangle, the rectangle, its readers), and each reader's
        // staging offset.
        let mut cuts = Vec::new();
        let mut staged: BTreeMap<u32, u32> = BTreeMap::new();
        for (rect, tiles) in &readers {
            let (h, w) = (rect.0 .1 - rect.0 .0, rect.1 .1 - rect.1 .0);
            let step = h.div_ceil(tiles.len() as u32).max(1);
            for (p, &reader) in tiles.iter().enumerate() {
                let a = (p as u32 * step).min(h);
                let b = ((p as u32 + 1) * step).min(h);
                if a < b {
                    let at = staged.entry(reader).or_default();
                    cuts.push((reader, (a, b), *at, *rect, tiles));
                    *at += (b - a) * w * e;
                }
            }
        }
        let stage_tiles: Vec<u32> = staged.keys().copied().collect();
        let stage_bytes = staged.values().copied().max().unwrap_or(0);
        if stage_bytes == 0 {
            return Ok(());
        }
        let stage = self.program.buffer(
            format!("{}.{what}", self.provenance(index)),
            MemoryClass::Interleaved,
            stage_bytes,
            stage_tiles,
        );
        let mut pieces = Vec::new();
        for (reader, (a, b), at, ((r0, _), (c0, c1), buffer, offset), tiles) in cuts {
            let (rows, w) = (b - a, c1 - c0);
            let staging = Place::at(stage, at);
            let whole = w == width || rows == 1;
            pieces.push(HostPiece {
                tile: reader,
                place: staging,
                tensor_offset: (u64::from(r0 + a) * u64::from(width) + u64::from(c0))
                    * u64::from(e),
                bytes: rows * w * e,
                runs: if whole { 1 } else { rows },
                stride: if whole {
                    0
                } else {
                    u64::from(width) * u64::from(e)
                },
                pad: 0,
            });
            let destination = Place::at(buffer, offset + a * w * e);
            for &other in tiles {
                transfers.add(reader, staging, other, destination, rows * w * e);
            }
        }
        self.stream_encoded(value, pieces, (precision, scale))
    }

    /// `blocks` converted to `to` (FP8 at `scale`) where they are: one cast per block on its
    /// owner, in a compute step of op `index` (`<provenance>.convert`) that runs now.
    pub(in crate::lower::graph) fn cast_blocks(
        &mut self,
        index: usize,
        what: &str,
        blocks: &Blocks,
        (to, scale): (Precision, i32),
    ) -> Blocks {
        let grid = blocks.grid.clone();
        let buffer = self.op_buffer(
            index,
            what,
            &grid.tiles(),
            grid.rows_padded * grid.cb * to.bytes(),
        );
        let mut runs: Vec<Run> = grid
            .grid()
            .map(|(i, j)| Run {
                tile: grid.tile(i, j),
                kernel: self.program.kernel(KernelSpec::Cast {
                    from: blocks.precision,
                    to,
                    elements: grid.rows(i) * grid.cb,
                }),
                args: vec![
                    address(blocks.buffer, 0),
                    address(buffer, 0),
                    Arg::Value(scale as u32),
                ],
            })
            .collect();
        runs.sort_by_key(|r| r.tile);
        self.program.run.push(TileStep::Compute {
            provenance: format!("{}.convert", self.provenance(index)),
            runs,
        });
        Blocks {
            grid,
            buffer,
            precision: to,
        }
    }

    /// Records a general op: its compute step (runs in order per tile), its profile entry and
    /// its result.
    pub(in crate::lower::graph) fn finish(
        &mut self,
        index: usize,
        op: &str,
        mut runs: Vec<Run>,
        out: ValueId,
        blocks: Blocks,
    ) {
        let provenance = self.provenance(index);
        runs.sort_by_key(|r| r.tile);
        self.program.run.push(TileStep::Compute {
            provenance: provenance.clone(),
            runs,
        });
        self.program.ops.push((provenance, op.into(), 0));
        self.placed.insert(out, blocks);
    }

    /// A result buffer of one block on every tile of `grid`.
    pub(in crate::lower::graph) fn result_buffer(
        &mut self,
        index: usize,
        grid: &GemmGrid,
        precision: Precision,
    ) -> BufferId {
        let bytes = grid.rows_padded * grid.cb * precision.bytes();
        self.op_buffer(index, "out", &grid.tiles(), bytes)
    }

    /// A standard-memory buffer `name` of `bytes` on every tile of `tiles`.
    fn buffer_on(&mut self, name: String, tiles: &[u32], bytes: u32) -> BufferId {
        self.program
            .buffer(name, MemoryClass::Standard, bytes, tiles.to_vec())
    }

    /// Op `index`'s buffer `<provenance>.<what>` (see [`Self::buffer_on`]).
    pub(in crate::lower::graph) fn op_buffer(
        &mut self,
        index: usize,
        what: &str,
        tiles: &[u32],
        bytes: u32,
    ) -> BufferId {
        self.buffer_on(format!("{}.{what}", self.provenance(index)), tiles, bytes)
    }

    /// Records op `index` as leaving its operand unchanged: `out` is `source`.
    fn alias(&mut self, index: usize, op: &str, out: ValueId, source: Blocks) {
        self.program
            .ops
            .push((self.provenance(index), op.into(), 0));
        self.placed.insert(out, source);
    }

    /// `value` as whole rows per tile: itself when it already is, else gathered into a row
    /// grid (its own exchange phase and copies; the copies are returned).
    fn as_rows(&mut self, index: usize, value: ValueId) -> Result<(Blocks, Vec<Run>), LowerError> {
        let source = self.on_device(value)?;
        if source.grid.nb == 1 {
            return Ok((source, Vec::new()));
        }
        let m = source.grid.m;
        self.rows_of(index, "rows", source, m.div_ceil(self.tiles.min(m)))
    }

    /// `source` gathered into a row grid of `rows_per_block` rows per tile, in op `index`'s
    /// buffer `<provenance>.<what>` (its own exchange phase and copies; the copies are
    /// returned).
    pub(super) fn rows_of(
        &mut self,
        index: usize,
        what: &str,
        source: Blocks,
        rows_per_block: u32,
    ) -> Result<(Blocks, Vec<Run>), LowerError> {
        let mut transfers = Transfers::default();
        let rows = self.rows_into(index, what, &source, rows_per_block, &mut transfers);
        let copies = self.flush(transfers);
        Ok((rows, copies))
    }

    /// `source` as a row grid of `rows_per_block` rows per tile in op `index`'s buffer
    /// `<provenance>.<what>`, its gathers added to `transfers` (the caller flushes them, with
    /// others of the same phase).
    pub(super) fn rows_into(
        &mut self,
        index: usize,
        what: &str,
        source: &Blocks,
        rows_per_block: u32,
        transfers: &mut Transfers,
    ) -> Blocks {
        let (m, n) = (source.grid.m, source.grid.n);
        let grid = row_grid(m, n, rows_per_block);
        let bytes = grid.rows_padded * n * source.precision.bytes();
        let buffer = self.op_buffer(index, what, &grid.tiles(), bytes);
        for i in 0..grid.mb {
            transfers.gather(
                source,
                Fetch::rows(
                    grid.tile(i, 0),
                    (grid.first_row(i), grid.rows(i)),
                    n,
                    Place::at(buffer, 0),
                ),
            );
        }
        Blocks {
            grid,
            buffer,
            precision: source.precision,
        }
    }

    /// A `[n]` vector (`value`) fetched whole onto every tile of `tiles` into a new buffer.
    fn broadcast_vector(
        &mut self,
        index: usize,
        role: &str,
        value: ValueId,
        n: u32,
        tiles: &[u32],
        transfers: &mut Transfers,
    ) -> Result<BufferId, LowerError> {
        // A constant vector is written by the host to every tile that reads it, at
        // initialization (resident: no exchange in the runs).
        let v = &self.graph.values[value];
        if !self.placed.contains_key(&value)
            && v.origin == crate::tiling::Origin::Constant
            && v.shape.iter().product::<u64>() == u64::from(n)
        {
            let e = v.element.bytes();
            let buffer = self.op_buffer(index, role, tiles, n * e);
            let pieces = tiles
                .iter()
                .map(|&tile| HostPiece::contiguous(tile, Place::at(buffer, 0), 0, n * e))
                .collect();
            self.stream(value, pieces)?;
            return Ok(buffer);
        }
        let source = self.on_device(value)?;
        if source.grid.m != 1 || source.grid.n != n {
            return Err(unsupported(
                self.graph.ops[index].kind.name(),
                format!(
                    "op {index}: the {role} must be a vector of {n} elements, found shape {:?}",
                    self.graph.values[value].shape
                ),
            ));
        }
        let buffer = self.op_buffer(index, role, tiles, n * source.precision.bytes());
        for &tile in tiles {
            transfers.gather(&source, Fetch::rows(tile, (0, 1), n, Place::at(buffer, 0)));
        }
        Ok(buffer)
    }
}
