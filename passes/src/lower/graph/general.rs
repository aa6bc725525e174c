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
//! * `ipu.cast` (FP8 at scale 0): the `Cast` kernel per block, on the operand's grid.
//! * `ipu.add` of operands on different grids, of two host values, or with a host operand
//!   that is not a bias vector: elementwise on the result's grid after fetching the operands'
//!   blocks (a `[N]` vector operand is fetched once per column block and broadcast over rows).

use ipu_dialects::plan::{AttentionPlan, AttentionSchedule, OperatorPlan};
use std::collections::BTreeMap;

use ipu_device::kernels::describe::{default_partials, GEMM_MAX_WEIGHT_ELEMENTS};
use ipu_device::kernels::spec::ElementOrder;
use ipu_device::{KernelSpec, MemoryClass, Precision};
use tracing::info;

use super::{to_u32, unsupported, view_2d, Blocks, Lowering};
use crate::lower::gemm::GemmGrid;
use crate::lower::program::{Arg, BufferId, HostPiece, Move, Place, Run, TileStep};
use crate::lower::LowerError;
use crate::planner::{OpKind, ValueId};

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
    fn add(&mut self, source_tile: u32, source: Place, tile: u32, destination: Place, bytes: u32) {
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
    rows: u32,
    k: u32,
    n: u32,
    input: Precision,
    /// FP8 scale exponent when the inputs are cast.
    scale_exp: i32,
    cast: Option<(BufferId, BufferId)>,
    a_amp: BufferId,
    b_amp: BufferId,
    c_amp: BufferId,
    kb: u32,
    /// The right operand is already in AMP-right order at `b`: K block `k0` at byte
    /// `k0 * pad16(n) * input bytes` (see [`general_b_packed`]).
    b_packed: bool,
    /// Memory class of the scratch (and of a packed right operand): the GEMM calls' weights
    /// class.
    class: MemoryClass,
}

fn pad16(x: u32) -> u32 {
    x.div_ceil(16) * 16
}

impl GemmScratch {
    fn partials(&self) -> Precision {
        default_partials(self.input)
    }
}

/// Appends to `runs` one tile-local GEMM on `tile`: `out[rows x n] = a[rows x k] b[k x n]`,
/// all dense row-major in `host` precision (the result in the partials precision).
fn local_gemm(
    lowering: &mut Lowering<'_>,
    runs: &mut Vec<Run>,
    tile: u32,
    host: Precision,
    (a, b, out): (Place, Place, Place),
    s: &GemmScratch,
) {
    let program = &mut lowering.program;
    let (rows, k, n) = (s.rows, s.k, s.n);
    let (k16, n16) = (pad16(k), pad16(n));
    let ie = s.input.bytes();
    let scale = Arg::Value(s.scale_exp as u32);
    let (mut a, mut b) = (a, b);
    let mut b_elem = host.bytes();
    if let Some((a_cast, b_cast)) = s.cast {
        let b_elements = if s.b_packed { 0 } else { k * n };
        for (from, to, elements) in [(a, a_cast, rows * k), (b, b_cast, b_elements)] {
            if elements == 0 {
                continue;
            }
            runs.push(Run {
                tile,
                kernel: program.kernel(KernelSpec::Cast {
                    from: host,
                    to: s.input,
                    elements,
                }),
                args: vec![Arg::Address(from), address(to, 0), scale],
            });
        }
        a = Place::at(a_cast, 0);
        if !s.b_packed {
            b = Place::at(b_cast, 0);
        }
        b_elem = ie;
    }
    runs.push(Run {
        tile,
        kernel: program.kernel(KernelSpec::Rearrange {
            order: ElementOrder::AmpLeft,
            to_amp: true,
            precision: s.input,
            offset: 0,
            rows,
            rows_padded: rows,
            cols: k,
            cols_padded: k16,
        }),
        args: vec![Arg::Address(a), address(s.a_amp, 0)],
    });
    let mut k0 = 0;
    while k0 < k16 {
        let block = s.kb.min(k16 - k0);
        let real = block.min(k - k0);
        let weights = if s.b_packed {
            Arg::Address(Place::at(b.buffer, b.offset + k0 * n16 * ie))
        } else {
            runs.push(Run {
                tile,
                kernel: program.kernel(KernelSpec::Rearrange {
                    order: ElementOrder::AmpRight,
                    to_amp: true,
                    precision: s.input,
                    offset: 0,
                    rows: real,
                    rows_padded: block,
                    cols: n,
                    cols_padded: n16,
                }),
                args: vec![
                    Arg::Address(Place::at(b.buffer, b.offset + k0 * n * b_elem)),
                    address(s.b_amp, 0),
                ],
            });
            address(s.b_amp, 0)
        };
        runs.push(Run {
            tile,
            kernel: program.kernel(KernelSpec::Gemm {
                input: s.input,
                partials: s.partials(),
                weights: s.class,
                k: block,
                c: n16,
                rows: vec![rows],
                accumulate: k0 > 0,
            }),
            args: vec![
                address(s.a_amp, k0 * rows * ie),
                weights,
                address(s.c_amp, 0),
                Arg::Value(0),
                scale,
                scale,
            ],
        });
        k0 += block;
    }
    runs.push(Run {
        tile,
        kernel: program.kernel(KernelSpec::Rearrange {
            order: ElementOrder::AmpOutput,
            to_amp: false,
            precision: s.partials(),
            offset: 0,
            rows,
            rows_padded: rows,
            cols: n,
            cols_padded: n16,
        }),
        args: vec![address(s.c_amp, 0), Arg::Address(out)],
    });
}

/// Modelled cycles of one tile-local GEMM of `rows x k x n` (see [`local_gemm`]); with
/// `b_packed` the right operand is already in AMP-right order (no conversions of it).
fn local_gemm_cycles(
    (rows, k, n): (u32, u32, u32),
    host: Precision,
    input: Precision,
    (b_packed, weights): (bool, MemoryClass),
    target: &ipu_device::Target,
) -> u64 {
    let (k16, n16) = (pad16(k), pad16(n));
    let kb = ((GEMM_MAX_WEIGHT_ELEMENTS / n16) / 16 * 16).clamp(16, k16);
    let cost = |spec: KernelSpec| ipu_device::cost::kernel_cycles(&spec, target);
    let rearrange = |order, to_amp, precision, rows, rows_padded, cols, cols_padded| {
        cost(KernelSpec::Rearrange {
            order,
            to_amp,
            precision,
            offset: 0,
            rows,
            rows_padded,
            cols,
            cols_padded,
        })
    };
    let mut total = 0;
    if input != host {
        for elements in [rows * k, if b_packed { 0 } else { k * n }] {
            if elements == 0 {
                continue;
            }
            total += cost(KernelSpec::Cast {
                from: host,
                to: input,
                elements,
            });
        }
    }
    total += rearrange(ElementOrder::AmpLeft, true, input, rows, rows, k, k16);
    let mut k0 = 0;
    while k0 < k16 {
        let block = kb.min(k16 - k0);
        if !b_packed {
            total += rearrange(
                ElementOrder::AmpRight,
                true,
                input,
                block.min(k - k0),
                block,
                n,
                n16,
            );
        }
        total += cost(KernelSpec::Gemm {
            input,
            partials: default_partials(input),
            weights,
            k: block,
            c: n16,
            rows: vec![rows],
            accumulate: k0 > 0,
        });
        k0 += block;
    }
    total
        + rearrange(
            ElementOrder::AmpOutput,
            false,
            default_partials(input),
            rows,
            rows,
            n,
            n16,
        )
}

/// The `(rows, cols)` block shapes the general matmul takes for `batches` products of
/// `m x n` on at most `tiles` tiles: row blocks of a divisor of `m`, column blocks of a
/// divisor of `n` whose weight block fits one GEMM call.
pub(crate) fn general_matmul_blocks(
    batches: u32,
    m: u32,
    n: u32,
    tiles: u32,
) -> impl Iterator<Item = (u32, u32)> {
    let divisors = |x: u32| (1..=x).filter(move |d| x.is_multiple_of(*d));
    divisors(n)
        .filter(|&c| pad16(c) * 16 <= GEMM_MAX_WEIGHT_ELEMENTS)
        .flat_map(move |cb| divisors(m).map(move |rp| (rp, cb)))
        .filter(move |&(rp, cb)| {
            u64::from(batches) * u64::from(m / rp) * u64::from(n / cb) <= u64::from(tiles)
        })
}

/// How many whole products of `m x n` each tile of the general matmul runs, one after the
/// other: 1 while `batches` products fit `tiles` in some block shape
/// ([`general_matmul_blocks`]), else `ceil(batches / tiles)` (each a whole product on one
/// tile, its weight block within one GEMM call).
pub(crate) fn general_batches_per_tile(batches: u32, m: u32, n: u32, tiles: u32) -> u32 {
    if batches <= tiles
        || general_matmul_blocks(batches, m, n, tiles).next().is_some()
        || pad16(n) * 16 > GEMM_MAX_WEIGHT_ELEMENTS
    {
        1
    } else {
        batches.div_ceil(tiles.max(1))
    }
}

/// The general matmul's AMP input precision: the policy's (`policy`) when its partials are the
/// result's element type, else the operands' own (`host`) when its partials are (an f32 graph
/// planned under the f16 policy computes its matmuls in f32), else none.
pub(crate) fn general_input(
    policy: Precision,
    host: Precision,
    result: Precision,
) -> Option<Precision> {
    [policy, host]
        .into_iter()
        .find(|&input| default_partials(input) == result)
}

/// Whether the general matmul converts its operands where they are (`host` -> `input`, FP8
/// at the policy's scale) before fetching them: the owners of a device operand cast its
/// blocks once and the host encodes a packed right operand, so the tiles fetch half the
/// bytes and cast nothing. Transposed operands are cast on the tiles instead (after their
/// transposes).
pub(crate) fn general_source_cast(
    host: Precision,
    input: Precision,
    (transpose_lhs, transpose_rhs): (bool, bool),
) -> bool {
    host != input && input.is_fp8() && !transpose_lhs && !transpose_rhs
}

/// Whether the general matmul's right operand is written by the host straight into the
/// AMP-right order its GEMM calls read: a host tensor (`b_host`: a function argument or
/// constant), not transposed, already in the AMP input precision (an operand the device
/// casts is cast on every tile, as the left one is; the ops' operand types stay equal), in
/// whole 16-row and 16-column groups (so no padding has to be zeroed). A constant is written
/// at initialization to every tile that reads it; an argument once per block, cut among the
/// tiles that read it, which exchange their pieces in the op's exchange phase.
pub(crate) fn general_b_packed(
    (k, cols): (u32, u32),
    transpose_rhs: bool,
    b_host: bool,
    (host, input): (Precision, Precision),
) -> bool {
    b_host && !transpose_rhs && host == input && k % 16 == 0 && cols % 16 == 0
}

/// One tile's share of a general matmul: a `rows x k x cols` block product, the operand
/// transposes it runs, and whether its right operand arrives packed
/// ([`general_b_packed`], decided once here for the planner and the lowering).
#[derive(Debug, Clone, Copy)]
pub(crate) struct GeneralTile {
    pub shape: (u32, u32, u32),
    pub transposes: (bool, bool),
    pub b_packed: bool,
    /// The fetched operands' precision and the GEMM's input precision.
    pub host: Precision,
    pub input: Precision,
}

impl GeneralTile {
    /// `b_host`: the right operand is a host tensor (a function argument or constant).
    pub fn new(
        shape: (u32, u32, u32),
        transposes: (bool, bool),
        b_host: bool,
        (host, input): (Precision, Precision),
    ) -> GeneralTile {
        let (_, k, cols) = shape;
        GeneralTile {
            shape,
            transposes,
            b_packed: general_b_packed((k, cols), transposes.1, b_host, (host, input)),
            host,
            input,
        }
    }

    /// Modelled cycles of the tile's kernels: the transposes of transposed operands, then the
    /// tile-local GEMM (see [`local_gemm`]).
    pub fn cycles(&self, target: &ipu_device::Target) -> u64 {
        let (rows, k, cols) = self.shape;
        let transpose = |rows, cols| {
            ipu_device::cost::kernel_cycles(
                &KernelSpec::Transpose {
                    precision: self.host,
                    rows,
                    cols,
                },
                target,
            )
        };
        let mut total = local_gemm_cycles(
            self.shape,
            self.host,
            self.input,
            (self.b_packed, MemoryClass::Interleaved),
            target,
        );
        if self.transposes.0 {
            total += transpose(k, rows);
        }
        if self.transposes.1 {
            total += transpose(cols, k);
        }
        total
    }

    /// Bytes the tile allocates besides its fetched operand blocks and its result: transposed
    /// copies and the tile-local GEMM's scratch (see [`Lowering::gemm_scratch`]).
    pub fn scratch_bytes(&self) -> u64 {
        let (host, input) = (self.host, self.input);
        let (rows, k, cols) = self.shape;
        let (k16, n16) = (pad16(k), pad16(cols));
        let kb = ((GEMM_MAX_WEIGHT_ELEMENTS / n16) / 16 * 16).clamp(16, k16);
        let (e, ie) = (u64::from(host.bytes()), u64::from(input.bytes()));
        let (rows, k, cols) = (u64::from(rows), u64::from(k), u64::from(cols));
        let mut bytes = rows * u64::from(k16) * ie
            + u64::from(kb) * u64::from(n16) * ie
            + rows * u64::from(n16) * u64::from(default_partials(input).bytes());
        if input != host {
            bytes += (rows * k + if self.b_packed { 0 } else { k * cols }) * ie;
        }
        if self.transposes.0 {
            bytes += k * rows * e;
        }
        if self.transposes.1 {
            bytes += cols * k * e;
        }
        bytes
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
    fn cast_blocks(
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
    fn finish(&mut self, index: usize, op: &str, mut runs: Vec<Run>, out: ValueId, blocks: Blocks) {
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
    fn result_buffer(&mut self, index: usize, grid: &GemmGrid, precision: Precision) -> BufferId {
        let bytes = grid.rows_padded * grid.cb * precision.bytes();
        self.op_buffer(index, "out", &grid.tiles(), bytes)
    }

    /// A standard-memory buffer `name` of `bytes` on every tile of `tiles`.
    fn buffer_on(&mut self, name: String, tiles: &[u32], bytes: u32) -> BufferId {
        self.program
            .buffer(name, MemoryClass::Standard, bytes, tiles.to_vec())
    }

    /// Op `index`'s buffer `<provenance>.<what>` (see [`Self::buffer_on`]).
    fn op_buffer(&mut self, index: usize, what: &str, tiles: &[u32], bytes: u32) -> BufferId {
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
        let (m, n) = (source.grid.m, source.grid.n);
        let grid = row_grid(m, n, m.div_ceil(self.tiles.min(m)));
        let bytes = grid.rows_padded * n * source.precision.bytes();
        let buffer = self.op_buffer(index, "rows", &grid.tiles(), bytes);
        let mut transfers = Transfers::default();
        for i in 0..grid.mb {
            transfers.gather(
                &source,
                Fetch::rows(
                    grid.tile(i, 0),
                    (grid.first_row(i), grid.rows(i)),
                    n,
                    Place::at(buffer, 0),
                ),
            );
        }
        let copies = self.flush(transfers);
        Ok((
            Blocks {
                grid,
                buffer,
                precision: source.precision,
            },
            copies,
        ))
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
            && v.origin == crate::planner::Origin::Constant
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

    /// `ipu.layer_norm` and `ipu.softmax`: per tile over whole rows.
    pub(super) fn row_op(&mut self, index: usize) -> Result<(), LowerError> {
        let op = &self.graph.ops[index];
        let kind = op.kind.clone();
        let (x, out) = (op.operands[0], op.results[0]);
        let operands = op.operands.clone();
        let (input, mut runs) = self.as_rows(index, x)?;
        let grid = input.grid.clone();
        let precision = input.precision;
        let result = self.result_buffer(index, &grid, precision);
        let tiles = grid.tiles();
        let mut transfers = Transfers::default();
        let params = match &kind {
            OpKind::LayerNorm { epsilon } => {
                let gamma = self.broadcast_vector(
                    index,
                    "gamma",
                    operands[1],
                    grid.n,
                    &tiles,
                    &mut transfers,
                )?;
                let beta = self.broadcast_vector(
                    index,
                    "beta",
                    operands[2],
                    grid.n,
                    &tiles,
                    &mut transfers,
                )?;
                Some((gamma, beta, (epsilon * 1e9).round() as u32))
            }
            _ => None,
        };
        runs.extend(self.flush(transfers));
        for i in 0..grid.mb {
            let rows = grid.rows(i);
            let tile = grid.tile(i, 0);
            let (spec, args) = match params {
                Some((gamma, beta, epsilon_nano)) => (
                    KernelSpec::LayerNorm {
                        precision,
                        rows,
                        cols: grid.n,
                        epsilon_nano,
                    },
                    vec![
                        address(input.buffer, 0),
                        address(gamma, 0),
                        address(beta, 0),
                        address(result, 0),
                    ],
                ),
                None => (
                    KernelSpec::Softmax {
                        precision,
                        rows,
                        cols: grid.n,
                        causal: false,
                    },
                    vec![address(input.buffer, 0), address(result, 0), Arg::Value(0)],
                ),
            };
            runs.push(Run {
                tile,
                kernel: self.program.kernel(spec),
                args,
            });
        }
        let blocks = Blocks {
            grid,
            buffer: result,
            precision,
        };
        self.finish(index, kind.name(), runs, out, blocks);
        Ok(())
    }

    /// `ipu.rearrange`: a layout-only rearrange keeps the value; a permutation that keeps the
    /// last axis gathers rows.
    pub(super) fn rearrange(&mut self, index: usize) -> Result<(), LowerError> {
        let op = &self.graph.ops[index];
        let OpKind::Rearrange { permutation } = &op.kind else {
            unreachable!("rearrange() is called for ipu.rearrange")
        };
        let permutation = permutation.clone();
        let (x, out) = (op.operands[0], op.results[0]);
        let in_shape = self.graph.values[x].shape.clone();
        let source = self.on_device(x)?;
        let Some(permutation) = permutation.filter(|p| p.iter().enumerate().any(|(i, &a)| i != a))
        else {
            self.alias(index, "ipu.rearrange", out, source);
            return Ok(());
        };
        let rank = in_shape.len();
        let swaps_last_two = rank >= 2
            && permutation.len() == rank
            && permutation[..rank - 2]
                .iter()
                .enumerate()
                .all(|(i, &a)| i == a)
            && permutation[rank - 2..] == [rank - 1, rank - 2];
        if swaps_last_two {
            return self.batched_transpose(index, &in_shape, source, out);
        }
        if permutation.len() != rank || permutation.last() != Some(&(rank - 1)) {
            return Err(unsupported(
                "ipu.rearrange",
                format!(
                    "op {index}: permutation {permutation:?} of shape {in_shape:?} moves the last axis; only permutations of the leading axes and swaps of the last two axes are lowered"
                ),
            ));
        }
        let out_shape: Vec<u64> = permutation.iter().map(|&a| in_shape[a]).collect();
        let (m, n) = (source.grid.m, source.grid.n);
        let grid = row_grid(m, n, m.div_ceil(self.tiles.min(m)));
        let result = self.result_buffer(index, &grid, source.precision);
        let e = source.precision.bytes();
        // Row-major strides of the input's leading axes.
        let lead = rank - 1;
        let mut in_strides = vec![1u64; lead];
        for a in (0..lead.saturating_sub(1)).rev() {
            in_strides[a] = in_strides[a + 1] * in_shape[a + 1];
        }
        let mut transfers = Transfers::default();
        for row in 0..m {
            // Output row `row` as a multi-index over the output's leading axes.
            let mut rest = u64::from(row);
            let mut source_row = 0u64;
            for a in (0..lead).rev() {
                let index_a = rest % out_shape[a];
                rest /= out_shape[a];
                source_row += index_a * in_strides[permutation[a]];
            }
            let i = row / grid.rows_padded;
            transfers.gather(
                &source,
                Fetch::rows(
                    grid.tile(i, 0),
                    (to_u32(source_row)?, 1),
                    n,
                    Place::at(result, (row - grid.first_row(i)) * n * e),
                ),
            );
        }
        let runs = self.flush(transfers);
        let blocks = Blocks {
            grid,
            buffer: result,
            precision: source.precision,
        };
        self.finish(index, "ipu.rearrange", runs, out, blocks);
        Ok(())
    }

    /// A rearrange swapping the last two axes: each tile fetches its matrices (one, or with
    /// more matrices than tiles `ceil(matrices / tiles)` consecutive ones) and transposes them.
    fn batched_transpose(
        &mut self,
        index: usize,
        in_shape: &[u64],
        source: Blocks,
        out: ValueId,
    ) -> Result<(), LowerError> {
        let rank = in_shape.len();
        let (rows, cols) = (to_u32(in_shape[rank - 2])?, to_u32(in_shape[rank - 1])?);
        let batches = to_u32(in_shape[..rank - 2].iter().product())?;
        let per_tile = batches.div_ceil(self.tiles.max(1)).max(1);
        let precision = source.precision;
        let bytes = rows * cols * precision.bytes();
        let grid = row_grid(batches * cols, rows, per_tile * cols);
        let tiles = grid.tiles();
        let matrix = self.op_buffer(index, "in", &tiles, per_tile * bytes);
        let result = self.result_buffer(index, &grid, precision);
        let mut transfers = Transfers::default();
        for b in 0..batches {
            transfers.gather(
                &source,
                Fetch::rows(
                    grid.tile(b / per_tile, 0),
                    (b * rows, rows),
                    cols,
                    Place::at(matrix, (b % per_tile) * bytes),
                ),
            );
        }
        let mut runs = self.flush(transfers);
        for b in 0..batches {
            let at = (b % per_tile) * bytes;
            let run = self.transpose_run(
                grid.tile(b / per_tile, 0),
                precision,
                (rows, cols),
                (Place::at(matrix, at), Place::at(result, at)),
            );
            runs.push(run);
        }
        let blocks = Blocks {
            grid,
            buffer: result,
            precision,
        };
        self.finish(index, "ipu.rearrange", runs, out, blocks);
        Ok(())
    }

    /// `ipu.cast`: per block, the `Cast` kernel into the result's element type, on the
    /// operand's grid. FP8 sides read and write at scale 0 (the formats' own scale); a cast
    /// naming another scale is refused.
    pub(super) fn cast(&mut self, index: usize, scale: i64) -> Result<(), LowerError> {
        let op = &self.graph.ops[index];
        let (x, out) = (op.operands[0], op.results[0]);
        let to = self.graph.values[out].element;
        let source = self.on_device(x)?;
        let from = source.precision;
        if scale != 0 && (from.is_fp8() || to.is_fp8()) {
            return Err(unsupported(
                "ipu.cast",
                format!("op {index}: a cast with FP8 scale {scale} is not lowered (scale 0 is)"),
            ));
        }
        if from == to {
            self.alias(index, "ipu.cast", out, source);
            return Ok(());
        }
        let grid = source.grid.clone();
        let result = self.result_buffer(index, &grid, to);
        let mut runs = Vec::new();
        for (i, j) in grid.grid() {
            runs.push(Run {
                tile: grid.tile(i, j),
                kernel: self.program.kernel(KernelSpec::Cast {
                    from,
                    to,
                    elements: grid.rows(i) * grid.cb,
                }),
                args: vec![address(source.buffer, 0), address(result, 0), Arg::Value(0)],
            });
        }
        let blocks = Blocks {
            grid,
            buffer: result,
            precision: to,
        };
        self.finish(index, "ipu.cast", runs, out, blocks);
        Ok(())
    }

    /// `ipu.add` off the fast path (see the module docs).
    pub(super) fn general_add(&mut self, index: usize) -> Result<(), LowerError> {
        let op = &self.graph.ops[index];
        let (x, y, out) = (op.operands[0], op.operands[1], op.results[0]);
        let out_shape = self.graph.values[out].shape.clone();
        let full = |v: ValueId| {
            self.graph.values[v].shape.iter().product::<u64>() == out_shape.iter().product::<u64>()
        };
        // The full-size operand gives the grid; the other is full-size too or a row vector.
        let (first, second) = if full(x) { (x, y) } else { (y, x) };
        if !full(first) {
            return Err(unsupported(
                "ipu.add",
                format!("op {index}: neither operand has the result's shape {out_shape:?}"),
            ));
        }
        let a = self.on_device(first)?;
        let b = self.on_device(second)?;
        let n = a.grid.n;
        let vector = !full(second);
        if (vector && (b.grid.m != 1 || b.grid.n != n)) || a.precision != b.precision {
            return Err(unsupported(
                "ipu.add",
                format!(
                    "op {index}: operands {:?} {:?} and {:?} {:?}: only equal shapes or a [{n}] vector broadcast over rows of the same element type are lowered",
                    self.graph.values[first].shape,
                    a.precision,
                    self.graph.values[second].shape,
                    b.precision
                ),
            ));
        }
        let grid = a.grid.clone();
        let precision = a.precision;
        let e = precision.bytes();
        let result = self.result_buffer(index, &grid, precision);
        let same = !vector && b.grid == grid;
        let mut transfers = Transfers::default();
        let b_buffer = if same {
            b.buffer
        } else {
            let rows_b = if vector { 1 } else { grid.rows_padded };
            let buffer = self.op_buffer(index, "rhs", &grid.tiles(), rows_b * grid.cb * e);
            for (i, j) in grid.grid() {
                let rows = if vector {
                    (0, 1)
                } else {
                    (grid.first_row(i), grid.first_row(i) + grid.rows(i))
                };
                transfers.gather(
                    &b,
                    Fetch {
                        tile: grid.tile(i, j),
                        rows,
                        cols: (j * grid.cb, (j + 1) * grid.cb),
                        place: Place::at(buffer, 0),
                    },
                );
            }
            buffer
        };
        let mut runs = self.flush(transfers);
        for (i, j) in grid.grid() {
            let rows = grid.rows(i);
            runs.push(Run {
                tile: grid.tile(i, j),
                kernel: self.program.kernel(KernelSpec::Add {
                    precision,
                    rows,
                    cols: grid.cb,
                    b_rows: if vector { 1 } else { rows },
                }),
                args: vec![
                    address(a.buffer, 0),
                    address(b_buffer, 0),
                    address(result, 0),
                ],
            });
        }
        let blocks = Blocks {
            grid,
            buffer: result,
            precision,
        };
        self.finish(index, "ipu.add", runs, out, blocks);
        Ok(())
    }

    /// The scratch buffers of a tile-local GEMM of `rows x k x n` on `tiles`.
    fn gemm_scratch(
        &mut self,
        name: &str,
        (rows, k, n): (u32, u32, u32),
        (host, input): (Precision, Precision),
        class: MemoryClass,
        tiles: &[u32],
    ) -> GemmScratch {
        let (k16, n16) = (pad16(k), pad16(n));
        let kb = ((GEMM_MAX_WEIGHT_ELEMENTS / n16) / 16 * 16).clamp(16, k16);
        let ie = input.bytes();
        let mut buffer = |what: &str, bytes: u32| {
            self.program
                .buffer(format!("{name}.{what}"), class, bytes, tiles.to_vec())
        };
        let cast = (input != host).then(|| {
            (
                buffer("a_cast", rows * k * ie),
                buffer("b_cast", k * n * ie),
            )
        });
        let a_amp = buffer("a_amp", rows * k16 * ie);
        let b_amp = buffer("b_amp", kb * n16 * ie);
        let c_amp = buffer("c_amp", rows * n16 * default_partials(input).bytes());
        GemmScratch {
            rows,
            k,
            n,
            input,
            scale_exp: self.options.fp8_scale,
            cast,
            a_amp,
            b_amp,
            c_amp,
            kb,
            b_packed: false,
            class,
        }
    }

    /// `ipu.matmul` off the fast path: batches, transposes, device right operands, and any
    /// matmul planned `gemm_general` (`plan`: its `rows` x `cols` blocks are followed).
    pub(super) fn general_matmul(
        &mut self,
        index: usize,
        plan: Option<&OperatorPlan>,
    ) -> Result<(), LowerError> {
        let op = &self.graph.ops[index];
        let OpKind::Matmul {
            transpose_lhs,
            transpose_rhs,
        } = op.kind
        else {
            unreachable!("general_matmul() is called for ipu.matmul")
        };
        let (x, w, out) = (op.operands[0], op.operands[1], op.results[0]);
        let fail = |detail: String| unsupported("ipu.matmul", format!("op {index}: {detail}"));
        let shape = |v: ValueId| self.graph.values[v].shape.clone();
        let (sa, sb, sc) = (shape(x), shape(w), shape(out));
        if sa.len() < 2 || sb.len() < 2 || sc.len() < 2 {
            return Err(fail(format!("operands {sa:?} x {sb:?} need rank >= 2")));
        }
        let mat = |s: &[u64], t: bool| {
            let (r, c) = (s[s.len() - 2], s[s.len() - 1]);
            if t {
                (c, r)
            } else {
                (r, c)
            }
        };
        let ((m, k), (k2, n)) = (mat(&sa, transpose_lhs), mat(&sb, transpose_rhs));
        let batch = |s: &[u64]| s[..s.len() - 2].iter().product::<u64>();
        let (ba, bb, bc) = (batch(&sa), batch(&sb), batch(&sc));
        let batch_shape = &sc[..sc.len() - 2];
        let fits = |s: &[u64], b: u64| b == 1 || s[..s.len() - 2] == *batch_shape;
        if k != k2 || !fits(&sa, ba) || !fits(&sb, bb) || sc[sc.len() - 2..] != [m, n] {
            return Err(fail(format!(
                "shapes {sa:?} x {sb:?} -> {sc:?} (transposes {transpose_lhs}, {transpose_rhs}) are not a matmul with whole-batch broadcasting"
            )));
        }
        let (m, k, n, bc) = (to_u32(m)?, to_u32(k)?, to_u32(n)?, to_u32(bc)?);
        // Host operands are written by the host where the tiles read them (see
        // `host_fetches`); device operands are gathered from their blocks.
        let on_host = |v: ValueId| {
            !self.placed.contains_key(&v)
                && !matches!(self.graph.values[v].origin, crate::planner::Origin::Op(_))
        };
        let a_host = on_host(x);
        let a_precision = match self.placed.get(&x) {
            Some(blocks) => blocks.precision,
            None => self.graph.values[x].element,
        };
        // A right operand still on the host may be written straight into the AMP order its
        // GEMM calls read (see `general_b_packed`).
        let b_host = on_host(w);
        let b_precision = match self.placed.get(&w) {
            Some(blocks) => blocks.precision,
            None => self.graph.values[w].element,
        };
        if a_precision != b_precision {
            return Err(fail(format!(
                "operand types {a_precision:?} and {b_precision:?} differ"
            )));
        }
        let host = a_precision;
        let result = self.graph.values[out].element;
        let policy = self.options.precision.input(host);
        let Some(input) = general_input(policy, host, result) else {
            return Err(fail(format!(
                "the result must be {:?} (the GEMM partials), not {result:?}",
                default_partials(policy)
            )));
        };
        let partials = default_partials(input);
        let transposes = (transpose_lhs, transpose_rhs);
        let source_cast = general_source_cast(host, input, transposes);
        let scale = self.options.fp8_scale;
        let a = if a_host {
            None
        } else {
            let a = self.on_device(x)?;
            Some(if source_cast {
                self.cast_blocks(index, "a8", &a, (input, scale))
            } else {
                a
            })
        };
        // The precision the tiles fetch: the input precision when converted at the source.
        let host = if source_cast { input } else { host };
        let host_scale = if host.is_fp8() { scale } else { 0 };
        // The plan's row and column blocks; without a `gemm_general` plan, column blocks of a
        // divisor of N and row blocks of a divisor of M, the pair whose per-tile kernels
        // (conversions, GEMM calls, output rearrange) the cost model prices lowest among those
        // that fit the tiles (ties: fewer tiles).
        let tiles = self.tiles;
        let target = &self.options.target;
        let planned = match plan {
            Some(OperatorPlan::GeneralMatmul(plan)) => Some((plan.rows, plan.cols)),
            _ => None,
        };
        // More products than tiles: whole products, `per_tile` consecutive ones per tile, one
        // after the other (`general_batches_per_tile`; the plan records it).
        let per_tile = general_batches_per_tile(bc, m, n, tiles);
        let choice = match planned {
            _ if per_tile > 1 => Some((n, m)),
            Some((rp, cb)) => {
                if !general_matmul_blocks(bc, m, n, tiles).any(|b| b == (rp, cb)) {
                    return Err(fail(format!(
                        "the plan's blocks of {rp} rows x {cb} columns do not split {bc} x [{m} x {n}] on {tiles} tiles"
                    )));
                }
                Some((cb, rp))
            }
            None => general_matmul_blocks(bc, m, n, tiles)
                .map(|(rp, cb)| {
                    let used = u64::from(bc) * u64::from(m / rp) * u64::from(n / cb);
                    let cycles = GeneralTile::new((rp, k, cb), transposes, b_host, (host, input))
                        .cycles(target);
                    ((cycles, used), (cb, rp))
                })
                .min_by_key(|(key, _)| *key)
                .map(|(_, choice)| choice),
        };
        let Some((cb, rp)) = choice else {
            return Err(fail(format!("{bc} batches do not fit on {tiles} tiles")));
        };
        let nb = n / cb;
        let per_batch = m / rp;
        let grid = GemmGrid {
            m: bc * m,
            k,
            n,
            cb,
            nb,
            mb: (bc * per_batch).div_ceil(per_tile),
            rows_padded: rp * per_tile,
            kb: k,
            k_steps: 1,
        };
        let op_tiles = grid.tiles();
        let e = host.bytes();
        // Operand blocks and the GEMM scratch in interleaved memory (the GEMM calls feed
        // their weights at full rate from there).
        let provenance = self.provenance(index);
        let mut operand = |what: &str, bytes: u32| {
            self.program.buffer(
                format!("{provenance}.{what}"),
                MemoryClass::Interleaved,
                bytes,
                op_tiles.clone(),
            )
        };
        // Per product on the tile: its operand blocks one after the other.
        let (a_bytes, b_bytes) = (rp * k * e, k * cb * e.max(input.bytes()));
        let a_rm = operand("a", per_tile * a_bytes);
        let b_rm = operand("b", per_tile * b_bytes);
        let a_t = transpose_lhs.then(|| operand("a_t", per_tile * k * rp * e));
        let b_t = transpose_rhs.then(|| operand("b_t", per_tile * cb * k * e));
        let result = self.result_buffer(index, &grid, partials);
        let mut scratch = self.gemm_scratch(
            &self.provenance(index),
            (rp, k, cb),
            (host, input),
            MemoryClass::Interleaved,
            &op_tiles,
        );
        // Several products per tile fetch B like A (no host-packed blocks).
        scratch.b_packed = per_tile == 1
            && GeneralTile::new((rp, k, cb), transposes, b_host, (host, input)).b_packed;
        let mut transfers = Transfers::default();
        let b = if scratch.b_packed {
            // Each tile's K x cols block, K block by K block in AMP-right order (16-column
            // groups of the block's rows), written by the host. A constant is written at
            // initialization to every tile that reads it; an argument block is written once,
            // cut into one contiguous range of its packed order per reading tile (as the
            // planner homes host values), into a staging buffer from which the readers
            // exchange their ranges (an all-gather per block column, per batch when B is
            // batched; see `host_fetches` for why it is staged).
            let constant = self.graph.values[w].origin == crate::planner::Origin::Constant;
            let ie = input.bytes();
            let groups = if bb == 1 { 1 } else { bc };
            let rows_per_group = grid.mb / groups;
            let blocks: Vec<(u32, u32)> = (0..k)
                .step_by(scratch.kb as usize)
                .map(|k0| (k0, scratch.kb.min(k - k0)))
                .collect();
            let stage = (!constant).then(|| {
                let most = (0..rows_per_group as usize)
                    .map(|p| {
                        blocks
                            .iter()
                            .map(|&(_, block)| {
                                super::gemm_split::ranges(block * cb, rows_per_group)[p].1 * ie
                            })
                            .sum::<u32>()
                    })
                    .max()
                    .unwrap_or(0)
                    .max(ie);
                self.program.buffer(
                    format!("{}.b_stage", self.provenance(index)),
                    MemoryClass::Interleaved,
                    most,
                    grid.tiles(),
                )
            });
            let mut pieces = Vec::new();
            for group in 0..groups {
                for j in 0..nb {
                    let readers: Vec<u32> = (0..rows_per_group)
                        .map(|r| grid.tile(group * rows_per_group + r, j))
                        .collect();
                    let mut staged = vec![0u32; readers.len()];
                    for &(k0, block) in &blocks {
                        let base = k0 * cb * ie;
                        let cut = match stage {
                            None => vec![(0, block * cb); readers.len()],
                            Some(_) => super::gemm_split::ranges(block * cb, readers.len() as u32),
                        };
                        for (p, (&reader, &(first, len))) in readers.iter().zip(&cut).enumerate() {
                            if len == 0 {
                                continue;
                            }
                            let place = Place::at(b_rm, base + first * ie);
                            let written = match stage {
                                None => place,
                                Some(stage) => Place::at(stage, staged[p]),
                            };
                            super::gemm_split::panel_pieces(
                                reader,
                                written,
                                (first, len),
                                block,
                                (group * k + k0, j * cb),
                                n,
                                ie,
                                &mut pieces,
                            );
                            if stage.is_some() {
                                staged[p] += len * ie;
                                for &other in &readers {
                                    transfers.add(reader, written, other, place, len * ie);
                                }
                            }
                        }
                    }
                }
            }
            self.stream_encoded(w, pieces, (input, if input.is_fp8() { scale } else { 0 }))?;
            None
        } else if b_host {
            None
        } else {
            let b = self.on_device(w)?;
            Some(if source_cast {
                self.cast_blocks(index, "b8", &b, (input, scale))
            } else {
                b
            })
        };
        let (mut a_fetches, mut b_fetches) = (Vec::new(), Vec::new());
        // (tile, product slot on it, the product's row block) of every block.
        let slots: Vec<(u32, u32, u32, u32)> = grid
            .grid()
            .flat_map(|(i, j)| {
                (0..per_tile)
                    .map(move |slot| (i, j, slot, i * per_tile + slot))
                    .filter(|&(.., row_block)| row_block < bc * per_batch)
            })
            .collect();
        for &(i, j, slot, row_block) in &slots {
            let tile = grid.tile(i, j);
            let (batch_index, block) = (row_block / per_batch, row_block % per_batch);
            let (ia, ib) = (
                if ba == 1 { 0 } else { batch_index },
                if bb == 1 { 0 } else { batch_index },
            );
            let r0 = block * rp;
            let fetch_a = match a_t {
                None => Fetch::rows(tile, (ia * m + r0, rp), k, Place::at(a_rm, slot * a_bytes)),
                Some(t) => Fetch {
                    tile,
                    rows: (ia * k, ia * k + k),
                    cols: (r0, r0 + rp),
                    place: Place::at(t, slot * k * rp * e),
                },
            };
            match &a {
                Some(a) => transfers.gather(a, fetch_a),
                None => a_fetches.push(fetch_a),
            }
            let fetch_b = match b_t {
                None => Fetch {
                    tile,
                    rows: (ib * k, ib * k + k),
                    cols: (j * cb, (j + 1) * cb),
                    place: Place::at(b_rm, slot * b_bytes),
                },
                Some(t) => Fetch {
                    tile,
                    rows: (ib * n + j * cb, ib * n + (j + 1) * cb),
                    cols: (0, k),
                    place: Place::at(t, slot * cb * k * e),
                },
            };
            match &b {
                Some(b) => transfers.gather(b, fetch_b),
                None if !scratch.b_packed => b_fetches.push(fetch_b),
                None => {}
            }
        }
        if !a_fetches.is_empty() {
            self.host_fetches(
                (index, "a_stage"),
                x,
                &a_fetches,
                (host, host_scale),
                &mut transfers,
            )?;
        }
        if !b_fetches.is_empty() {
            self.host_fetches(
                (index, "b_stage"),
                w,
                &b_fetches,
                (host, host_scale),
                &mut transfers,
            )?;
        }
        let mut runs = self.flush(transfers);
        let c_bytes = rp * cb * partials.bytes();
        for &(i, j, slot, _) in &slots {
            let tile = grid.tile(i, j);
            let (a_at, b_at) = (
                Place::at(a_rm, slot * a_bytes),
                Place::at(b_rm, slot * b_bytes),
            );
            if let Some(t) = a_t {
                let from = Place::at(t, slot * k * rp * e);
                runs.push(self.transpose_run(tile, host, (k, rp), (from, a_at)));
            }
            if let Some(t) = b_t {
                let from = Place::at(t, slot * cb * k * e);
                runs.push(self.transpose_run(tile, host, (cb, k), (from, b_at)));
            }
            let c_at = Place::at(result, slot * c_bytes);
            local_gemm(self, &mut runs, tile, host, (a_at, b_at, c_at), &scratch);
        }
        let blocks = Blocks {
            grid,
            buffer: result,
            precision: partials,
        };
        self.finish(index, "ipu.matmul", runs, out, blocks);
        Ok(())
    }

    /// `ipu.attention`, materialized per (batch-head, query block) (see the module docs).
    pub(super) fn attention(
        &mut self,
        index: usize,
        causal: bool,
        scale: Option<f64>,
        plan: Option<&OperatorPlan>,
    ) -> Result<(), LowerError> {
        let op = &self.graph.ops[index];
        let (q, kv, vv, out) = (
            op.operands[0],
            op.operands[1],
            op.operands[2],
            op.results[0],
        );
        let fail = |detail: String| unsupported("ipu.attention", format!("op {index}: {detail}"));
        let shape = |v: ValueId| self.graph.values[v].shape.clone();
        let (sq, sk, sv) = (shape(q), shape(kv), shape(vv));
        if sq.len() < 2 || sq.len() != sk.len() || sq.len() != sv.len() {
            return Err(fail(format!(
                "shapes {sq:?}, {sk:?}, {sv:?} need one rank >= 2"
            )));
        }
        let r = sq.len();
        let lead = &sq[..r - 2];
        if sk[..r - 2] != *lead
            || sv[..r - 2] != *lead
            || sk[r - 1] != sq[r - 1]
            || sv[r - 2] != sk[r - 2]
        {
            return Err(fail(format!(
                "query {sq:?}, key {sk:?} and value {sv:?} are not [..., S, D], [..., T, D], [..., T, E] with equal batch axes"
            )));
        }
        let batches = to_u32(lead.iter().product())?;
        let (s, d, t, ev) = (
            to_u32(sq[r - 2])?,
            to_u32(sq[r - 1])?,
            to_u32(sk[r - 2])?,
            to_u32(sv[r - 1])?,
        );
        // With more batch-heads than tiles, whole heads per tile (see below): host operands
        // are streamed in those blocks, so the tiles read them where they are.
        let heads_per_tile = attention_heads_per_tile(batches, self.tiles);
        let qb = self.on_device_in(q, heads_per_tile.map(|h| h * s))?;
        let kb = self.on_device_in(kv, heads_per_tile.map(|h| h * t))?;
        let vb = self.on_device_in(vv, heads_per_tile.map(|h| h * t))?;
        let precision = qb.precision;
        if kb.precision != precision
            || vb.precision != precision
            || self.graph.values[out].element != precision
        {
            return Err(fail(
                "query, key, value and result must share one element type".into(),
            ));
        }
        if default_partials(precision) != precision {
            return Err(fail(format!(
                "{precision:?} attention is not lowered (f16 and f32 are)"
            )));
        }
        let scale = scale.unwrap_or(1.0 / f64::from(d).sqrt()) as f32;
        // The plan decides how the scores are computed; a plan that cannot be followed is an
        // error. Without a plan (a graph lowered unplanned) the lowering chooses below.
        let plan = match plan {
            None => None,
            Some(OperatorPlan::Attention(plan)) => Some(plan),
            Some(other) => return Err(fail(format!("plan {other} is not an attention plan"))),
        };
        let not_followed = |plan: &AttentionPlan, why: String| {
            fail(format!(
                "plan {} cannot be followed: {why}",
                OperatorPlan::Attention(plan.clone())
            ))
        };
        // A planned key block must fit where the lowering's own (the largest that fits) does.
        let planned_key_block = |plan: &AttentionPlan, fitting: Option<u32>| match plan.schedule {
            AttentionSchedule::Flash { key_block } => match fitting {
                Some(largest) if key_block > largest => Err(not_followed(
                    plan,
                    format!("key blocks of {key_block} do not fit a tile (at most {largest})"),
                )),
                _ => Ok(Some(key_block)),
            },
            AttentionSchedule::Blocked | AttentionSchedule::Materialized => Ok(None),
        };
        if let Some(heads) = heads_per_tile {
            // More batch-heads than tiles: whole heads, several per tile, one after the other
            // (the streamed lowering's waves).
            let mut key_block = wave_key_block((s, d, t, ev), precision);
            if let Some(plan) = plan {
                let rows = batches.div_ceil(heads);
                if !matches!(plan.schedule, AttentionSchedule::Flash { .. })
                    || plan.grid != [rows, 1]
                {
                    return Err(not_followed(
                        plan,
                        format!("{batches} batch-heads on {} tiles run {heads} whole heads per tile in waves (attention_flash on grid [{rows}, 1])", self.tiles),
                    ));
                }
                if let Some(planned) = planned_key_block(plan, Some(key_block))? {
                    key_block = planned;
                }
            }
            let grid = row_grid(batches * s, ev, heads * s);
            let shape = StreamedAttention {
                index,
                out,
                sizes: (s, d, t, ev),
                qr: s,
                key_block,
                precision,
                causal,
                scale,
            };
            return self.attention_streamed(&shape, &grid, (&qb, &kb, &vb));
        }
        if let Some(
            plan @ AttentionPlan {
                schedule: AttentionSchedule::Materialized,
                grid: g,
                ..
            },
        ) = plan
        {
            let target = &self.options.target;
            let fits = g.len() == 3 && {
                let (qr, tk) = (s / g[1], t / g[2]);
                materialized_fits((batches, s, t), (g[0], g[1], g[2]), self.tiles)
                    && materialized_attention_fits((qr, d, tk, t, ev, qr / g[2]), precision, target)
            };
            if !fits {
                return Err(not_followed(
                    plan,
                    "it needs one batch-head per grid row, queries split exactly over the query x key grid, keys over the key blocks, and its blocks within a tile's budget".into(),
                ));
            }
            let shape = MaterializedAttention {
                index,
                out,
                sizes: (s, d, t, ev),
                grid: (g[1], g[2]),
                precision,
                causal,
                scale,
            };
            return self.attention_materialized(&shape, batches, (&qb, &kb, &vb));
        }
        let tiles = self.tiles;
        // The planned query blocks (`attention_blocked` / `attention_flash`, grid [heads, gs]:
        // one batch-head per grid row, the queries split exactly); unplanned, the fewest query
        // rows per tile that fit the tiles.
        let qr = match plan {
            Some(plan) => match plan.grid.as_slice() {
                &[gb, gs]
                    if gb == batches
                        && s.is_multiple_of(gs)
                        && u64::from(batches) * u64::from(gs) <= u64::from(tiles) =>
                {
                    s / gs
                }
                _ => {
                    return Err(not_followed(
                        plan,
                        format!(
                            "its grid must be [{batches}, a divisor of {s}] within {tiles} tiles"
                        ),
                    ))
                }
            },
            None => smallest_divisor(s, |dv| {
                u64::from(batches) * u64::from(s / dv) <= u64::from(tiles)
            })
            .ok_or_else(|| fail(format!("{batches} batch-heads do not fit on {tiles} tiles")))?,
        };
        let per_head = s / qr;
        let grid = row_grid(batches * s, ev, qr);
        // A tile's whole score rows, keys and values when they fit the budget; else the keys
        // stream through in blocks with the online softmax. A plan says which, and its key
        // block.
        let fitting = streamed_key_block((qr, d, t, ev), precision);
        let key_block = match plan {
            None => fitting,
            Some(plan) => match planned_key_block(plan, fitting)? {
                Some(block) => Some(block),
                None if fitting.is_some() => {
                    return Err(not_followed(
                        plan,
                        format!("whole score rows of {qr} queries over {t} keys do not fit a tile (stream the keys: attention_flash)"),
                    ))
                }
                None => None,
            },
        };
        if let Some(key_block) = key_block {
            let shape = StreamedAttention {
                index,
                out,
                sizes: (s, d, t, ev),
                qr,
                key_block,
                precision,
                causal,
                scale,
            };
            return self.attention_streamed(&shape, &grid, (&qb, &kb, &vb));
        }
        // Whole score rows per tile: the materialized attention with one key block.
        let shape = MaterializedAttention {
            index,
            out,
            sizes: (s, d, t, ev),
            grid: (per_head, 1),
            precision,
            causal,
            scale,
        };
        self.attention_materialized(&shape, batches, (&qb, &kb, &vb))
    }
}

/// Whole batch-heads per tile when an attention has more of them than `tiles` (the lowering
/// then runs them one after the other); `None` while each gets its own tile or grid row.
pub(crate) fn attention_heads_per_tile(batches: u32, tiles: u32) -> Option<u32> {
    (batches > tiles).then(|| batches.div_ceil(tiles.max(1)))
}

/// The key block of an attention run in whole heads per tile: the streamed block when a
/// head's whole rows do not fit ([`streamed_key_block`]), else all keys in one block.
pub(crate) fn wave_key_block(sizes: (u32, u32, u32, u32), precision: Precision) -> u32 {
    streamed_key_block(sizes, precision).unwrap_or_else(|| sizes.2.next_multiple_of(16))
}

/// Compute cycles of a tile running `heads` whole heads (`sizes` = (S, D, T, E)) one after
/// the other with keys in blocks of `key_block`: per head its copies of the queries and of
/// each key and value block from the tile's home into the working buffers, then
/// [`streamed_attention_cycles`].
pub(crate) fn attention_waves_cycles(
    (s, d, t, ev): (u32, u32, u32, u32),
    heads: u32,
    key_block: u32,
    precision: Precision,
    causal: bool,
    target: &ipu_device::Target,
) -> u64 {
    let e = u64::from(precision.bytes());
    let copy = |bytes: u64| ipu_device::cost::copy_cycles(bytes, target);
    let width = u64::from(key_block.min(t));
    let blocks = u64::from(t.div_ceil(key_block.max(1)));
    let copies = copy(u64::from(s) * u64::from(d) * e)
        + blocks * (copy(width * u64::from(d) * e) + copy(width * u64::from(ev) * e));
    u64::from(heads)
        * (copies + streamed_attention_cycles((s, d, t, ev), key_block, precision, causal, target))
}

/// A tile's working-set budget for attention: above it, keys stream through in blocks.
const ATTENTION_TILE_BYTES: u64 = 96 * 1024;

/// The key block of an attention tile with `qr` query rows, head size `d`, `t` keys and value
/// width `ev` in `precision` when its whole score rows, keys and values exceed
/// [`ATTENTION_TILE_BYTES`] (the keys then stream through in blocks); `None` when they fit.
pub(crate) fn streamed_key_block(
    (qr, d, t, ev): (u32, u32, u32, u32),
    precision: Precision,
) -> Option<u32> {
    let e = u64::from(precision.bytes());
    let (qr, d, t, ev) = (u64::from(qr), u64::from(d), u64::from(t), u64::from(ev));
    let whole = (qr * d + 2 * t * d + t * ev + 2 * qr * t) * e;
    if whole <= ATTENTION_TILE_BYTES {
        return None;
    }
    let per_key = (2 * d + ev + qr) * e + qr * e;
    let fixed = qr * d * e + qr * ev * 4 + 8 * qr;
    let fits = ATTENTION_TILE_BYTES.saturating_sub(fixed) / per_key.max(1);
    let key_block = (fits / 16 * 16).clamp(16, t.div_ceil(16) * 16);
    Some(u32::try_from(key_block).unwrap_or(u32::MAX))
}

/// Compute cycles of one tile of the streamed attention ([`Lowering::attention_streamed`])
/// with key blocks of `key_block`: the state fills, per block the key transpose, the
/// tile-local `Q K_blk^T` and the online-softmax update, then the finish. The same kernel cost
/// functions the simulator charges; the planner prices `attention_flash` plans with it.
pub(crate) fn streamed_attention_cycles(
    (qr, d, t, ev): (u32, u32, u32, u32),
    key_block: u32,
    precision: Precision,
    causal: bool,
    target: &ipu_device::Target,
) -> u64 {
    let cost = |spec: KernelSpec| ipu_device::cost::kernel_cycles(&spec, target);
    let fill = |elements| {
        cost(KernelSpec::Fill {
            precision: Precision::F32,
            elements,
        })
    };
    let mut total = fill(qr) + fill(qr) + fill(qr * ev);
    let tb = key_block.min(t).max(1);
    for b in 0..t.div_ceil(tb) {
        let width = tb.min(t - b * tb);
        total += cost(KernelSpec::Transpose {
            precision,
            rows: width,
            cols: d,
        });
        total += local_gemm_cycles(
            (qr, d, width),
            precision,
            precision,
            (false, MemoryClass::Standard),
            target,
        );
        total += cost(KernelSpec::AttentionBlock {
            precision,
            rows: qr,
            keys: width,
            width: ev,
            causal,
        });
    }
    total
        + cost(KernelSpec::AttentionFinish {
            precision,
            rows: qr,
            width: ev,
        })
}

/// Whether the materialized attention lowering takes grid `(gb, gs, gt)` for `batches`
/// batch-heads of `s` queries and `t` keys on `tiles` tiles: one batch-head per grid row, the
/// queries split exactly into `gs` blocks of `gt` row groups, the keys into `gt` blocks.
pub(crate) fn materialized_fits(
    (batches, s, t): (u32, u32, u32),
    (gb, gs, gt): (u32, u32, u32),
    tiles: u32,
) -> bool {
    gb == batches
        && gs > 0
        && gt > 0
        && s.is_multiple_of(gs * gt)
        && t.is_multiple_of(gt)
        && u64::from(gb) * u64::from(gs) * u64::from(gt) <= u64::from(tiles)
}

/// Per-tile bytes `(standard, interleaved)` of the materialized attention's buffers
/// ([`Lowering::attention_materialized`]): queries, key block and its transpose, score block,
/// score rows, probabilities, result and both tile-local GEMMs' scratch in standard memory;
/// the head's values in interleaved memory.
pub(crate) fn materialized_attention_bytes(
    (qr, d, tk, t, ev, rs): (u32, u32, u32, u32, u32, u32),
    precision: Precision,
) -> (u64, u64) {
    let e = u64::from(precision.bytes());
    let pb = u64::from(default_partials(precision).bytes());
    let scratch = |(rows, k, n): (u32, u32, u32)| {
        let (k16, n16) = (pad16(k), pad16(n));
        let kb = ((GEMM_MAX_WEIGHT_ELEMENTS / n16) / 16 * 16).clamp(16, k16);
        let (rows, k16, n16, kb) = (
            u64::from(rows),
            u64::from(k16),
            u64::from(n16),
            u64::from(kb),
        );
        rows * k16 * e + kb * n16 * e + rows * n16 * pb
    };
    let (qr, d, tk, t, ev, rs) = (
        u64::from(qr),
        u64::from(d),
        u64::from(tk),
        u64::from(t),
        u64::from(ev),
        u64::from(rs),
    );
    let standard = (qr * d + 2 * tk * d + qr * tk + 2 * rs * t + rs * ev) * e
        + scratch((qr as u32, d as u32, tk as u32))
        + scratch((rs as u32, t as u32, ev as u32));
    (standard, t * ev * e)
}

/// Whether the materialized attention's buffers fit a tile's planned budgets (with room for
/// the operands' homes and the 16 KiB element rule).
pub(crate) fn materialized_attention_fits(
    sizes: (u32, u32, u32, u32, u32, u32),
    precision: Precision,
    target: &ipu_device::Target,
) -> bool {
    let (standard, interleaved) = materialized_attention_bytes(sizes, precision);
    standard * 10 <= u64::from(target.memory.standard_budget.value) * 8
        && interleaved * 10 <= u64::from(target.memory.interleaved_budget.value) * 8
}

/// Compute cycles of one tile of the materialized attention
/// ([`Lowering::attention_materialized`]) with `qr` query rows and `tk` keys per score
/// block and `rs` rows after the reshard: the key transpose, the tile-local `Q K_blk^T`, the
/// scale, the (causal) row softmax over all `t` keys and the tile-local `P V`. The same
/// kernel cost functions the simulator charges; the planner prices `attention_materialized`
/// plans with it.
pub(crate) fn materialized_attention_cycles(
    (qr, d, tk, t, ev, rs): (u32, u32, u32, u32, u32, u32),
    precision: Precision,
    causal: bool,
    target: &ipu_device::Target,
) -> u64 {
    let cost = |spec: KernelSpec| ipu_device::cost::kernel_cycles(&spec, target);
    cost(KernelSpec::Transpose {
        precision,
        rows: tk,
        cols: d,
    }) + local_gemm_cycles(
        (qr, d, tk),
        precision,
        precision,
        (false, MemoryClass::Standard),
        target,
    ) + cost(KernelSpec::Scale {
        precision,
        elements: qr * tk,
    }) + cost(KernelSpec::Softmax {
        precision,
        rows: rs,
        cols: t,
        causal,
    }) + local_gemm_cycles(
        (rs, t, ev),
        precision,
        precision,
        (false, MemoryClass::Standard),
        target,
    )
}

/// What [`Lowering::attention_materialized`] needs of one attention op.
struct MaterializedAttention {
    index: usize,
    out: ValueId,
    /// (queries S, head size D, keys T, value width E).
    sizes: (u32, u32, u32, u32),
    /// Query blocks and key blocks per batch-head.
    grid: (u32, u32),
    precision: Precision,
    causal: bool,
    scale: f32,
}

/// What [`Lowering::attention_streamed`] needs of one attention op.
struct StreamedAttention {
    index: usize,
    out: ValueId,
    /// (queries S, head size D, keys T, value width E).
    sizes: (u32, u32, u32, u32),
    /// Query rows per tile.
    qr: u32,
    key_block: u32,
    precision: Precision,
    causal: bool,
    scale: f32,
}

impl Lowering<'_> {
    /// The run on `tile` that writes the transpose of the `rows x cols` block at `from`
    /// (row-major) to `to`.
    fn transpose_run(
        &mut self,
        tile: u32,
        precision: Precision,
        (rows, cols): (u32, u32),
        (from, to): (Place, Place),
    ) -> Run {
        Run {
            tile,
            kernel: self.program.kernel(KernelSpec::Transpose {
                precision,
                rows,
                cols,
            }),
            args: vec![Arg::Address(from), Arg::Address(to)],
        }
    }

    /// The scratch of an attention op's two tile-local GEMMs, `Q K^T` (`qk` shape) and `P V`
    /// (`pv` shape), on `tiles`.
    fn attention_scratch(
        &mut self,
        index: usize,
        (qk, pv): ((u32, u32, u32), (u32, u32, u32)),
        precision: Precision,
        tiles: &[u32],
    ) -> (GemmScratch, GemmScratch) {
        let name = self.provenance(index);
        (
            self.gemm_scratch(
                &format!("{name}.qk"),
                qk,
                (precision, precision),
                MemoryClass::Standard,
                tiles,
            ),
            self.gemm_scratch(
                &format!("{name}.pv"),
                pv,
                (precision, precision),
                MemoryClass::Standard,
                tiles,
            ),
        )
    }

    /// Appends to `runs` the scores of one tile: the `keys x d` key rows at `k` transposed
    /// into `k_t`, then `scores = q k_t` (tile-local GEMM).
    fn push_scores(
        &mut self,
        runs: &mut Vec<Run>,
        tile: u32,
        (keys, d, precision): (u32, u32, Precision),
        (q, k, k_t, scores): (BufferId, BufferId, BufferId, BufferId),
        scratch: &GemmScratch,
    ) {
        let transpose = self.transpose_run(
            tile,
            precision,
            (keys, d),
            (Place::at(k, 0), Place::at(k_t, 0)),
        );
        runs.push(transpose);
        local_gemm(
            self,
            runs,
            tile,
            precision,
            (Place::at(q, 0), Place::at(k_t, 0), Place::at(scores, 0)),
            scratch,
        );
    }

    /// Attention materialized on a (batch-head, query block, key block) tile grid, the
    /// planner's `attention_materialized` plan: tile (h, i, j) fetches query block i and key
    /// block j of head h (and all of the head's values) and computes its `qr x tk` score block
    /// (`S = Q K_j^T`, scaled); one exchange phase reshards the scores to whole rows (tile
    /// (h, i, j) takes row group j of query block i, every key), which the tile runs through
    /// the (causal) row softmax and multiplies by the values. The result is a row grid of
    /// `qr / gt` rows per tile, in tile order. With one key block (`gt = 1`: whole score rows
    /// per tile, the `attention_blocked` plan) the score block is the tile's rows: no reshard.
    fn attention_materialized(
        &mut self,
        shape: &MaterializedAttention,
        batches: u32,
        (qb, kb, vb): (&Blocks, &Blocks, &Blocks),
    ) -> Result<(), LowerError> {
        let MaterializedAttention {
            index,
            out,
            sizes: (s, d, t, ev),
            grid: (gs, gt),
            precision,
            causal,
            scale,
        } = *shape;
        let (qr, tk) = (s / gs, t / gt);
        let rs = qr / gt;
        let e = precision.bytes();
        let tiles: Vec<u32> = (0..batches * gs * gt).collect();
        let q_rm = self.op_buffer(index, "q", &tiles, qr * d * e);
        let k_rm = self.op_buffer(index, "k", &tiles, tk * d * e);
        let k_t = self.op_buffer(index, "k_t", &tiles, d * tk * e);
        // The head's values in interleaved memory (the tile-local GEMM packs them from there).
        let v_rm = self.program.buffer(
            format!("{}.v", self.provenance(index)),
            MemoryClass::Interleaved,
            t * ev * e,
            tiles.clone(),
        );
        let scores = self.op_buffer(index, "scores", &tiles, qr * tk * e);
        // With one key block a tile's score block is already its whole rows.
        let rows = if gt == 1 {
            scores
        } else {
            self.op_buffer(index, "score_rows", &tiles, rs * t * e)
        };
        let probabilities = self.op_buffer(index, "p", &tiles, rs * t * e);
        let grid = row_grid(batches * s, ev, rs);
        let result = self.result_buffer(index, &grid, precision);
        let name = self.provenance(index);
        let (qk, pv) = self.attention_scratch(index, ((qr, d, tk), (rs, t, ev)), precision, &tiles);
        let tile_of = |h: u32, i: u32, j: u32| (h * gs + i) * gt + j;
        let mut transfers = Transfers::default();
        for h in 0..batches {
            for i in 0..gs {
                for j in 0..gt {
                    let tile = tile_of(h, i, j);
                    let fetches = [
                        (qb, (h * s + i * qr, qr), d, q_rm),
                        (kb, (h * t + j * tk, tk), d, k_rm),
                        (vb, (h * t, t), ev, v_rm),
                    ];
                    for (source, (r0, count), cols, buffer) in fetches {
                        transfers.gather(
                            source,
                            Fetch::rows(tile, (r0, count), cols, Place::at(buffer, 0)),
                        );
                    }
                }
            }
        }
        let mut runs = self.flush(transfers);
        for &tile in &tiles {
            self.push_scores(
                &mut runs,
                tile,
                (tk, d, precision),
                (q_rm, k_rm, k_t, scores),
                &qk,
            );
            runs.push(Run {
                tile,
                kernel: self.program.kernel(KernelSpec::Scale {
                    precision,
                    elements: qr * tk,
                }),
                args: vec![
                    address(scores, 0),
                    address(scores, 0),
                    Arg::Value(scale.to_bits()),
                ],
            });
        }
        runs.sort_by_key(|r| r.tile);
        self.program.run.push(TileStep::Compute {
            provenance: format!("{name}.scores"),
            runs,
        });
        // The score blocks as a value: query block (h, i) x key block j on tile (h, i, j).
        let score_blocks = Blocks {
            grid: GemmGrid {
                m: batches * s,
                k: t,
                n: t,
                cb: tk,
                nb: gt,
                mb: batches * gs,
                rows_padded: qr,
                kb: t,
                k_steps: 1,
            },
            buffer: scores,
            precision,
        };
        let mut transfers = Transfers::default();
        for &tile in tiles.iter().filter(|_| gt > 1) {
            let r0 = tile * rs;
            transfers.gather(
                &score_blocks,
                Fetch::rows(tile, (r0, rs), t, Place::at(rows, 0)),
            );
        }
        let mut runs = self.flush(transfers);
        for &tile in &tiles {
            // The tile's first query row within its batch-head, for the causal mask.
            let row_in_head = (tile * rs) % s;
            runs.push(Run {
                tile,
                kernel: self.program.kernel(KernelSpec::Softmax {
                    precision,
                    rows: rs,
                    cols: t,
                    causal,
                }),
                args: vec![
                    address(rows, 0),
                    address(probabilities, 0),
                    Arg::Value(row_in_head),
                ],
            });
            local_gemm(
                self,
                &mut runs,
                tile,
                precision,
                (
                    Place::at(probabilities, 0),
                    Place::at(v_rm, 0),
                    Place::at(result, 0),
                ),
                &pv,
            );
        }
        if gt == 1 {
            info!(
                op = index,
                tiles = tiles.len(),
                query_rows = qr,
                "attention lowered with whole score rows, one tile per batch-head query block"
            );
        } else {
            info!(
                op = index,
                grid = ?[batches, gs, gt],
                query_rows = qr,
                key_block = tk,
                rows_after = rs,
                "attention lowered materialized on a query x key tile grid"
            );
        }
        let blocks = Blocks {
            grid,
            buffer: result,
            precision,
        };
        self.finish(index, "ipu.attention", runs, out, blocks);
        Ok(())
    }

    /// Attention with the keys streamed through in blocks (flash-style): per tile (batch-head,
    /// query block) the running row maximum, row sum and unnormalized output start empty;
    /// each key block is one exchange phase bringing that block's keys and values to every
    /// tile of the head, then `S = Q K_blk^T` (transpose, tile-local GEMM) and the
    /// online-softmax update (`AttentionBlock`); `AttentionFinish` divides by the row sums.
    /// A tile holds its queries, one key block and its output: the S x T scores never exist.
    fn attention_streamed(
        &mut self,
        a: &StreamedAttention,
        grid: &GemmGrid,
        (qb, kb, vb): (&Blocks, &Blocks, &Blocks),
    ) -> Result<(), LowerError> {
        let index = a.index;
        let (s, d, t, ev) = a.sizes;
        let (qr, tb, precision) = (a.qr, a.key_block.min(t), a.precision);
        let op_tiles = grid.tiles();
        let e = precision.bytes();
        let q_rm = self.op_buffer(index, "q", &op_tiles, qr * d * e);
        let k_blk = self.op_buffer(index, "k_block", &op_tiles, tb * d * e);
        let k_t = self.op_buffer(index, "k_block_t", &op_tiles, d * tb * e);
        let v_blk = self.op_buffer(index, "v_block", &op_tiles, tb * ev * e);
        let scores = self.op_buffer(index, "scores", &op_tiles, qr * tb * e);
        let row_max = self.op_buffer(index, "row_max", &op_tiles, qr * 4);
        let row_sum = self.op_buffer(index, "row_sum", &op_tiles, qr * 4);
        let acc = self.op_buffer(index, "acc", &op_tiles, qr * ev * 4);
        let result = self.result_buffer(index, grid, precision);
        let name = self.provenance(index);
        // One GEMM scratch per distinct key-block width (the last block may be narrower).
        let mut scratches: BTreeMap<u32, GemmScratch> = BTreeMap::new();
        let blocks: Vec<(u32, u32)> = (0..t.div_ceil(tb))
            .map(|b| (b * tb, tb.min(t - b * tb)))
            .collect();
        for &(_, width) in &blocks {
            if let std::collections::btree_map::Entry::Vacant(slot) = scratches.entry(width) {
                slot.insert(self.gemm_scratch(
                    &format!("{name}.qk{width}"),
                    (qr, d, width),
                    (precision, precision),
                    MemoryClass::Standard,
                    &op_tiles,
                ));
            }
        }
        // The state starts empty: m = -inf, l = 0, o = 0.
        let fill =
            |lowering: &mut Self, tile: u32, buffer: BufferId, elements: u32, bits: u32| Run {
                tile,
                kernel: lowering.program.kernel(KernelSpec::Fill {
                    precision: Precision::F32,
                    elements,
                }),
                args: vec![address(buffer, 0), Arg::Value(bits)],
            };
        // Tile i holds rows [i * rows_padded, (i + 1) * rows_padded) of the batch-heads'
        // stacked queries: one query block of `qr` rows, or, with more batch-heads than tiles,
        // several whole heads (qr = S), run one after the other ("waves", reusing the
        // tile's buffers) into their places in the result block.
        let waves = (grid.rows_padded / qr).max(1);
        let rows_total = grid.m;
        let chunk = |i: u32, wave: u32| {
            let r0 = i * grid.rows_padded + wave * qr;
            (r0 < rows_total).then_some((grid.tile(i, 0), r0 / s, r0 % s))
        };
        let mut runs = Vec::new();
        for wave in 0..waves {
            if wave > 0 {
                // The previous wave's finish runs before this wave's fetches.
                runs.sort_by_key(|r: &Run| r.tile);
                self.program.run.push(TileStep::Compute {
                    provenance: format!("{name}.wave{}", wave - 1),
                    runs: std::mem::take(&mut runs),
                });
            }
            let mut init = Vec::new();
            for i in 0..grid.mb {
                let Some((tile, _, _)) = chunk(i, wave) else {
                    continue;
                };
                init.push(fill(self, tile, row_max, qr, f32::NEG_INFINITY.to_bits()));
                init.push(fill(self, tile, row_sum, qr, 0));
                init.push(fill(self, tile, acc, qr * ev, 0));
            }
            for (step, &(k0, width)) in blocks.iter().enumerate() {
                let mut transfers = Transfers::default();
                for i in 0..grid.mb {
                    let Some((tile, head, q0)) = chunk(i, wave) else {
                        continue;
                    };
                    if step == 0 {
                        let r0 = head * s + q0;
                        transfers.gather(qb, Fetch::rows(tile, (r0, qr), d, Place::at(q_rm, 0)));
                    }
                    let keys = (head * t + k0, width);
                    transfers.gather(kb, Fetch::rows(tile, keys, d, Place::at(k_blk, 0)));
                    transfers.gather(vb, Fetch::rows(tile, keys, ev, Place::at(v_blk, 0)));
                }
                let mut step_runs = self.flush(transfers);
                if step == 0 {
                    step_runs.append(&mut init);
                }
                let scratch = &scratches[&width];
                for i in 0..grid.mb {
                    let Some((tile, _, q0)) = chunk(i, wave) else {
                        continue;
                    };
                    self.push_scores(
                        &mut step_runs,
                        tile,
                        (width, d, precision),
                        (q_rm, k_blk, k_t, scores),
                        scratch,
                    );
                    step_runs.push(Run {
                        tile,
                        kernel: self.program.kernel(KernelSpec::AttentionBlock {
                            precision,
                            rows: qr,
                            keys: width,
                            width: ev,
                            causal: a.causal,
                        }),
                        args: vec![
                            address(scores, 0),
                            address(v_blk, 0),
                            address(row_max, 0),
                            address(row_sum, 0),
                            address(acc, 0),
                            Arg::Value(a.scale.to_bits()),
                            Arg::Value(q0),
                            Arg::Value(k0),
                        ],
                    });
                }
                step_runs.sort_by_key(|r| r.tile);
                self.program.run.push(TileStep::Compute {
                    provenance: format!("{name}.key_block{step}"),
                    runs: step_runs,
                });
            }
            for i in 0..grid.mb {
                let Some((tile, _, _)) = chunk(i, wave) else {
                    continue;
                };
                runs.push(Run {
                    tile,
                    kernel: self.program.kernel(KernelSpec::AttentionFinish {
                        precision,
                        rows: qr,
                        width: ev,
                    }),
                    args: vec![
                        address(acc, 0),
                        address(row_sum, 0),
                        address(result, wave * qr * ev * precision.bytes()),
                    ],
                });
            }
        }
        info!(
            op = index,
            tiles = grid.mb,
            query_rows = qr,
            heads_per_tile = waves,
            key_block = tb,
            key_blocks = blocks.len(),
            "attention lowered with keys streamed in blocks (online softmax), one tile per batch-head query block"
        );
        let blocks = Blocks {
            grid: grid.clone(),
            buffer: result,
            precision,
        };
        self.finish(index, "ipu.attention", runs, a.out, blocks);
        Ok(())
    }
}
