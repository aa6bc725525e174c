//! Lowering a split GEMM on its grid: the host's A and B pieces, the K-panel phases, the
//! reduce-scatter of the partials, and the result's ranges.

use super::rows::Piece;
use super::*;
use crate::strategies::gemm::GemmGrid;
use crate::tiling::program::push_move;

/// The buffers and host pieces of one split GEMM's operands, made before the host writes.
pub struct SplitInputs {
    /// None when A is gathered from a device value ([`SplitEnv::a_device`]).
    pub a_home: Option<BufferId>,
    pub b_home: BufferId,
    pub a_pieces: Vec<HostPiece>,
    pub b_pieces: Vec<HostPiece>,
}

/// Allocates the homes of A and B and their host pieces (see the module docs).
pub fn inputs(
    program: &mut TileProgram,
    grid: &SplitGrid,
    precision: Precision,
    provenance: &str,
) -> SplitInputs {
    let eb = precision.bytes();
    let all = grid.all_tiles();
    let HomeSlots {
        a: a_slot,
        b: b_slot,
    } = HomeSlots::new(grid, eb);
    let a_home = (!grid.env.a_device).then(|| {
        program.buffer(
            format!("{provenance}.a.home"),
            grid.classes.a_home,
            (a_slot * grid.panels).max(eb),
            all.clone(),
        )
    });
    let b_home = program.buffer(
        format!("{provenance}.b.home"),
        grid.classes.b_home,
        (b_slot * grid.panels).max(eb),
        all,
    );
    let mut a_pieces = Vec::new();
    let mut b_pieces = Vec::new();
    if grid.env.b_resident {
        // Every tile's whole B block, panel by panel (module docs, "Resident weights").
        for l in 0..grid.gk {
            for (p, &(k0, kp)) in grid.panels_of(l).iter().enumerate() {
                if kp == 0 {
                    continue;
                }
                for (j, &(col0, cols)) in grid.cols.blocks.iter().enumerate() {
                    for i in 0..grid.gm {
                        panel_pieces(
                            grid.tile(i, j as u32, l),
                            Place::at(b_home, p as u32 * b_slot),
                            (0, kp * cols),
                            kp,
                            (k0, col0),
                            (grid.k_real, grid.n_real),
                            eb,
                            &mut b_pieces,
                        );
                    }
                }
            }
        }
    }
    for p in 0..grid.panels {
        grid.panel_ranges(p, |range| {
            let (home, slot, real, pieces) = match (range.operand, a_home) {
                (Operand::A, Some(a_home)) => {
                    (a_home, a_slot, (grid.m, grid.k_real), &mut a_pieces)
                }
                (Operand::A, None) => return,
                (Operand::B, _) => (b_home, b_slot, (grid.k_real, grid.n_real), &mut b_pieces),
            };
            panel_pieces(
                range.home,
                Place::at(home, p * slot),
                (range.first, range.len),
                range.panel_rows,
                range.origin,
                real,
                eb,
                pieces,
            );
        });
    }
    SplitInputs {
        a_home,
        b_home,
        a_pieces,
        b_pieces,
    }
}

/// A device value a split GEMM's left operand is gathered from: another split GEMM's result
/// ranges, or another op's row-major blocks (module docs, "Row-major neighbours").
#[derive(Debug, Clone, Copy)]
pub enum DeviceA<'a> {
    Ranged(&'a Ranged),
    Blocks {
        grid: &'a GemmGrid,
        buffer: BufferId,
        precision: Precision,
    },
}

/// Emits the panels and the reduction of one split GEMM (see the module docs); A comes from
/// its homes, or gathered from `a_value` with [`SplitEnv::a_device`]. Returns C, held as
/// ranges on their owners (in the partials' precision).
pub fn lower(
    program: &mut TileProgram,
    grid: &SplitGrid,
    (precision, scales): (Precision, [i32; 2]),
    homes: &SplitInputs,
    a_value: Option<DeviceA<'_>>,
    provenance: &str,
) -> Ranged {
    let mut lowering = SplitLowering {
        program,
        grid,
        precision,
        partials: ipu_device::kernels::describe::default_partials(precision),
        scales,
        row_entries: grid.row_entries(),
        provenance,
    };
    let buffers = lowering.panel_buffers(homes);
    let gathered = a_value.map(|value| match value {
        DeviceA::Ranged(ranged) => GatheredA::Ranged {
            value: ranged,
            segments: ranged.segments_by_group(),
        },
        DeviceA::Blocks {
            grid,
            buffer,
            precision,
        } => GatheredA::Blocks {
            grid,
            buffer,
            precision,
        },
    });
    let mut started = vec![false; grid.tiles() as usize];
    for panel in 0..grid.panels {
        lowering.panel_phase(panel, homes, &buffers, gathered.as_ref(), &mut started);
    }
    if grid.gk == 1 {
        lowering.partial_blocks(buffers.partials)
    } else {
        lowering.reduce_scatter(buffers.partials)
    }
}

/// C (`value`, a split GEMM's result ranges) converted to its row grid
/// ([`SplitGrid::rows_grid`]) in a new buffer of `class`: one exchange phase moving every
/// run of a row to its row block's tile, and a compute step of the copies that stay on a
/// tile. Returns the buffer.
pub fn convert_to_rows(
    program: &mut TileProgram,
    grid: &SplitGrid,
    value: &Ranged,
    class: MemoryClass,
    provenance: &str,
) -> BufferId {
    let rows = grid.rows_grid();
    let eb = value.precision.bytes();
    let buffer = program.buffer(
        format!("{provenance}.c.rows"),
        class,
        (rows.rows_padded * rows.n * eb).max(eb),
        rows.tiles(),
    );
    let mut moves = Vec::new();
    let mut runs = Vec::new();
    let row_major = grid.c_row_major();
    super::rows::ranges_to_rows(&value.ranges, value.n, &rows, row_major, |piece| {
        let places = (value.buffer, buffer, eb);
        send_piece(
            program,
            piece,
            places,
            &[piece.tile],
            (&mut moves, &mut runs),
        );
    });
    if !moves.is_empty() {
        let phase = program.exchange_phases() as u32;
        program.run.push(TileStep::Exchange { phase, moves });
    }
    if !runs.is_empty() {
        runs.sort_by_key(|run| run.tile);
        program.run.push(TileStep::Compute {
            provenance: format!("{provenance}.rows"),
            runs,
        });
    }
    buffer
}

/// Bytes of one K panel's slot in the A and B homes (see [`inputs`]).
struct HomeSlots {
    /// A's slot: the largest home range of an A panel.
    a: u32,
    /// B's slot ([`SplitGrid::b_slot`]).
    b: u32,
}

impl HomeSlots {
    /// The slots of `grid`'s homes for elements of `element_bytes` bytes.
    fn new(grid: &SplitGrid, element_bytes: u32) -> HomeSlots {
        HomeSlots {
            a: ranges_max(grid.rows.largest() * grid.kp, grid.gn) * element_bytes,
            b: grid.b_slot(element_bytes),
        }
    }
}

/// The per-tile buffers the GEMM calls of every panel read and write.
struct PanelBuffers {
    /// The AMP-left A panel.
    a_panel: BufferId,
    /// The AMP-right B panel; with resident weights, the B home itself.
    b_panel: BufferId,
    /// Bytes from one panel to the next in `b_panel`: a home slot with resident weights (the
    /// calls read each panel in place), else 0 (every panel reuses the buffer).
    b_panel_step: u32,
    /// The tile's partial block, AMP-output order in the partials' precision.
    partials: BufferId,
}

/// A device value A is gathered from: ranges with their segments by 16-column group, or
/// row-major blocks.
enum GatheredA<'a> {
    Ranged {
        value: &'a Ranged,
        segments: Vec<Vec<Segment>>,
    },
    Blocks {
        grid: &'a GemmGrid,
        buffer: BufferId,
        precision: Precision,
    },
}

impl GatheredA<'_> {
    fn buffer(&self) -> BufferId {
        match self {
            GatheredA::Ranged { value, .. } => value.buffer,
            GatheredA::Blocks { buffer, .. } => *buffer,
        }
    }

    fn precision(&self) -> Precision {
        match self {
            GatheredA::Ranged { value, .. } => value.precision,
            GatheredA::Blocks { precision, .. } => *precision,
        }
    }

    /// The pieces of rows `[row0, row0 + rows)` and K columns `[k0, k0 + kp)` of A, at their
    /// places in the panel (AMP-left: 16-column group after group, each `rows x 16`; or, for
    /// blocks with `row_major` ([`SplitGrid::a_row_major`]), row-major), in panel order
    /// (`tile` unused).
    fn panel_pieces(
        &self,
        (row0, rows): (u32, u32),
        (k0, kp): (u32, u32),
        row_major: bool,
        visit: impl FnMut(Piece),
    ) {
        match self {
            GatheredA::Blocks { grid, .. } => {
                super::rows::block_panel_pieces(grid, (row0, rows), (k0, kp), row_major, visit)
            }
            GatheredA::Ranged { segments, .. } => {
                let mut visit = visit;
                for g in k0 / 16..(k0 + kp) / 16 {
                    let column = g - k0 / 16;
                    for seg in &segments[g as usize] {
                        let lo = seg.row.max(row0);
                        let hi = (seg.row + seg.rows).min(row0 + rows);
                        if lo >= hi {
                            continue;
                        }
                        visit(Piece {
                            owner: seg.tile,
                            source: seg.offset + (lo - seg.row) * 16,
                            tile: 0,
                            destination: (column * rows + (lo - row0)) * 16,
                            len: (hi - lo) * 16,
                        });
                    }
                }
            }
        }
    }
}

/// One split GEMM being lowered into `program`.
struct SplitLowering<'a> {
    program: &'a mut TileProgram,
    grid: &'a SplitGrid,
    /// The operands' element type.
    precision: Precision,
    /// The partials' (and so C's) element type.
    partials: Precision,
    /// The FP8 scales of A and B, passed to every GEMM call.
    scales: [i32; 2],
    /// The distinct row-block sizes: the row entries of the GEMM kernels.
    row_entries: Vec<u32>,
    provenance: &'a str,
}

impl SplitLowering<'_> {
    /// Allocates the A panel, the B panel (unless the weights are resident) and the partials.
    fn panel_buffers(&mut self, homes: &SplitInputs) -> PanelBuffers {
        let grid = self.grid;
        let element_bytes = self.precision.bytes();
        let all = grid.all_tiles();
        let (rows, cols) = (grid.rows.largest(), grid.cols.largest());
        let provenance = self.provenance;
        let order = if grid.a_row_major() {
            "row_major"
        } else {
            "amp_left"
        };
        let a_panel = self.program.buffer(
            format!("{provenance}.a.{order}"),
            grid.classes.a_panel,
            rows * grid.kp * element_bytes,
            all.clone(),
        );
        let (b_panel, b_panel_step) = if grid.env.b_resident {
            (homes.b_home, grid.b_slot(element_bytes))
        } else {
            let b_panel = self.program.buffer(
                format!("{provenance}.b.amp_right"),
                grid.classes.b_panel,
                grid.kp * cols * element_bytes,
                all.clone(),
            );
            (b_panel, 0)
        };
        let partials = self.program.buffer(
            format!("{provenance}.c.amp_output"),
            grid.classes.partials,
            rows * cols * self.partials.bytes(),
            all,
        );
        PanelBuffers {
            a_panel,
            b_panel,
            b_panel_step,
            partials,
        }
    }

    /// Emits one K panel: one exchange phase bringing the A and B panels to their tiles,
    /// then one compute step of the homes' own copies and the GEMM calls, per tile.
    fn panel_phase(
        &mut self,
        panel: u32,
        homes: &SplitInputs,
        buffers: &PanelBuffers,
        gathered: Option<&GatheredA>,
        started: &mut [bool],
    ) {
        let mut moves = Vec::new();
        let mut runs = Vec::new();
        // A gathered K padded to whole groups: zero the last group first (the gathers write
        // its real columns).
        let fills = self.grid.pad_fills(panel);
        if !fills.is_empty() {
            let kernel = self.program.kernel(KernelSpec::Fill {
                precision: self.precision,
                elements: fills[0].2,
            });
            let eb = self.precision.bytes();
            let mut fill_runs: Vec<Run> = fills
                .iter()
                .map(|&(tile, first, elements)| Run {
                    tile,
                    kernel: if elements == fills[0].2 {
                        kernel
                    } else {
                        self.program.kernel(KernelSpec::Fill {
                            precision: self.precision,
                            elements,
                        })
                    },
                    args: vec![address(buffers.a_panel, first * eb), Arg::Value(0)],
                })
                .collect();
            fill_runs.sort_by_key(|run| run.tile);
            self.program.run.push(TileStep::Compute {
                provenance: self.provenance.to_string(),
                runs: fill_runs,
            });
        }
        if let Some(gathered) = gathered {
            gather_a_panel(
                self.program,
                self.grid,
                panel,
                gathered,
                buffers.a_panel,
                &mut moves,
                &mut runs,
            );
        }
        self.push_home_ranges(panel, homes, buffers, &mut moves, &mut runs);
        if !moves.is_empty() {
            let phase = self.program.exchange_phases() as u32;
            self.program.run.push(TileStep::Exchange { phase, moves });
        }
        self.push_gemm_calls(panel, buffers, started, &mut runs);
        // Stable: each tile's copies stay before its GEMM calls.
        runs.sort_by_key(|run| run.tile);
        self.program.run.push(TileStep::Compute {
            provenance: self.provenance.to_string(),
            runs,
        });
    }

    /// Appends the home ranges of one K panel: each home copies its range into its own panel
    /// buffer and sends it to the other tiles of its group.
    fn push_home_ranges(
        &mut self,
        panel: u32,
        homes: &SplitInputs,
        buffers: &PanelBuffers,
        moves: &mut Vec<Move>,
        runs: &mut Vec<Run>,
    ) {
        let element_bytes = self.precision.bytes();
        let slots = HomeSlots::new(self.grid, element_bytes);
        let program = &mut *self.program;
        self.grid.panel_ranges(panel, |range| {
            let (home, slot, panel_buffer) = match (range.operand, homes.a_home) {
                (Operand::A, Some(a_home)) => (a_home, slots.a, buffers.a_panel),
                (Operand::A, None) => return,
                (Operand::B, _) => (homes.b_home, slots.b, buffers.b_panel),
            };
            let source = Place::at(home, panel * slot);
            let destination = Place::at(panel_buffer, range.first * element_bytes);
            let bytes = range.len * element_bytes;
            runs.push(Run {
                tile: range.home,
                kernel: program.kernel(KernelSpec::Copy { bytes }),
                args: vec![Arg::Address(source), Arg::Address(destination)],
            });
            push_move(
                moves,
                (range.home, source),
                range.destinations,
                destination,
                bytes,
            );
        });
    }

    /// Appends the GEMM calls of one K panel, one per column chunk of every tile whose K slice
    /// has the panel; a tile's first call initializes its partials (`started`), the others
    /// accumulate.
    fn push_gemm_calls(
        &mut self,
        panel: u32,
        buffers: &PanelBuffers,
        started: &mut [bool],
        runs: &mut Vec<Run>,
    ) {
        let grid = self.grid;
        let (element_bytes, partial_bytes) = (self.precision.bytes(), self.partials.bytes());
        let b_panel_offset = panel * buffers.b_panel_step;
        for l in 0..grid.gk {
            let (_, kp) = grid.panels_of(l)[panel as usize];
            if kp == 0 {
                continue;
            }
            for (i, &(_, rows)) in grid.rows.blocks.iter().enumerate() {
                let row_entry = self.row_entry(rows);
                for j in 0..grid.gn {
                    let tile = grid.tile(i as u32, j, l);
                    let accumulate = started[tile as usize];
                    started[tile as usize] = true;
                    for (first, columns) in grid.chunks(j) {
                        let call = grid.gemm_call(self.precision, kp, columns, accumulate);
                        runs.push(Run {
                            tile,
                            kernel: self.program.kernel(call),
                            args: vec![
                                address(buffers.a_panel, 0),
                                address(
                                    buffers.b_panel,
                                    b_panel_offset + first * kp * element_bytes,
                                ),
                                address(buffers.partials, first * rows * partial_bytes),
                                Arg::Value(row_entry),
                                Arg::Value(self.scales[0] as u32),
                                Arg::Value(self.scales[1] as u32),
                            ],
                        });
                    }
                }
            }
        }
    }

    /// The GEMM kernels' row entry of a block of `rows` rows.
    fn row_entry(&self, rows: u32) -> u32 {
        self.row_entries.binary_search(&rows).unwrap_or(0) as u32
    }

    /// Without a K split, C is the partial blocks themselves: one whole block per tile.
    fn partial_blocks(&self, partials: BufferId) -> Ranged {
        let ranges = self.grid.result_ranges();
        self.result(partials, self.grid.classes.partials, ranges)
    }

    /// Reduce-scatter: range l of every partial block reduced onto tile (i, j, l), in one
    /// exchange phase into the owners' stacks and one compute step; C is the reduced ranges.
    fn reduce_scatter(&mut self, partials: BufferId) -> Ranged {
        let grid = self.grid;
        let partial_bytes = self.partials.bytes();
        let all = grid.all_tiles();
        let provenance = self.provenance;
        let slice = ranges_max(grid.rows.largest() * grid.cols.largest(), grid.gk);
        let buffers = ReduceBuffers {
            partials,
            stack: self.program.buffer(
                format!("{provenance}.c.partials"),
                grid.classes.stack,
                slice * (grid.gk - 1) * partial_bytes,
                all.clone(),
            ),
            reduced: self.program.buffer(
                format!("{provenance}.c"),
                grid.classes.reduced,
                slice * partial_bytes,
                all,
            ),
        };
        let mut moves = Vec::new();
        let mut runs = Vec::new();
        let mut ranges = Vec::new();
        grid.reduce_ranges(|range| {
            ranges.push(self.reduce_range(range, &buffers, &mut moves, &mut runs));
        });
        let phase = self.program.exchange_phases() as u32;
        self.program.run.push(TileStep::Exchange { phase, moves });
        runs.sort_by_key(|run| run.tile);
        self.program.run.push(TileStep::Compute {
            provenance: format!("{provenance}.reduce"),
            runs,
        });
        self.result(buffers.reduced, grid.classes.reduced, ranges)
    }

    /// Appends the moves and runs that reduce one range onto its owner; returns the range.
    fn reduce_range(
        &mut self,
        range: ReduceRange,
        buffers: &ReduceBuffers,
        moves: &mut Vec<Move>,
        runs: &mut Vec<Run>,
    ) -> OwnedRange {
        let partial_bytes = self.partials.bytes();
        let bytes = range.len * partial_bytes;
        // Slot s of the stack comes from the s-th other tile of the group; the owner adds
        // its own range to their sum.
        for (slot, &source_tile) in range.sources.iter().enumerate() {
            moves.push(Move {
                source_tile,
                source: Place::at(buffers.partials, range.first * partial_bytes),
                destinations: vec![range.owner],
                destination: Place::at(buffers.stack, slot as u32 * bytes),
                bytes,
            });
        }
        let [sum, add_own] = self.grid.reduce_calls(self.precision, range.len);
        runs.push(Run {
            tile: range.owner,
            kernel: self.program.kernel(sum),
            args: vec![address(buffers.stack, 0), address(buffers.reduced, 0)],
        });
        runs.push(Run {
            tile: range.owner,
            kernel: self.program.kernel(add_own),
            args: vec![
                address(buffers.reduced, 0),
                address(buffers.partials, range.first * partial_bytes),
                address(buffers.reduced, 0),
            ],
        });
        OwnedRange {
            tile: range.owner,
            first: range.first,
            len: range.len,
            rows: range.rows,
            cols: range.cols,
            origin: range.origin,
        }
    }

    /// C as a [`Ranged`] value: `ranges` of `buffer` (of `class`) in the partials' precision.
    fn result(&self, buffer: BufferId, class: MemoryClass, ranges: Vec<OwnedRange>) -> Ranged {
        Ranged {
            m: self.grid.m,
            n: self.grid.n,
            n_real: self.grid.n_real,
            precision: self.partials,
            buffer,
            class,
            ranges,
        }
    }
}

/// The buffers of the reduce-scatter on every tile.
struct ReduceBuffers {
    /// The partial blocks the ranges are sent from.
    partials: BufferId,
    /// Where an owner receives the other tiles' ranges, one slot per other K slice.
    stack: BufferId,
    /// The owner's reduced range.
    reduced: BufferId,
}

/// An address argument: byte `offset` of `buffer`.
fn address(buffer: BufferId, offset: u32) -> Arg {
    Arg::Address(Place::at(buffer, offset))
}

/// The moves (and the owners' local copies) that gather the A panel `p` of every tile of
/// `grid` from the device value `value`: for every A group `(i, *, l)`, the value's pieces
/// inside the group's rows and panel columns ([`GatheredA::panel_pieces`]), each sent by its
/// owner to the group's tiles at its place in the AMP-left panel. Pieces contiguous on both
/// sides are merged into one move.
fn gather_a_panel(
    program: &mut TileProgram,
    grid: &SplitGrid,
    p: u32,
    value: &GatheredA,
    a_panel: BufferId,
    moves: &mut Vec<Move>,
    runs: &mut Vec<Run>,
) {
    let eb = value.precision().bytes();
    let buffer = value.buffer();
    for l in 0..grid.gk {
        let (k0, kp) = grid.panels_of(l)[p as usize];
        if kp == 0 {
            continue;
        }
        for (i, &(row0, rows)) in grid.rows.blocks.iter().enumerate() {
            let group: Vec<u32> = (0..grid.gn).map(|j| grid.tile(i as u32, j, l)).collect();
            let mut merge = super::rows::Merge::new(|piece: Piece| {
                send_piece(program, piece, (buffer, a_panel, eb), &group, (moves, runs));
            });
            value.panel_pieces((row0, rows), (k0, kp), grid.a_row_major(), |piece| {
                merge.push(piece)
            });
            merge.finish();
        }
    }
}

/// Emits `piece` (elements of `eb` bytes from buffer `from` on its owner to buffer `to`) for
/// every tile of `tiles`: a local copy on the owner when it is one of them, one move (a
/// multicast) to the others.
fn send_piece(
    program: &mut TileProgram,
    piece: Piece,
    (from, to, eb): (BufferId, BufferId, u32),
    tiles: &[u32],
    (moves, runs): (&mut Vec<Move>, &mut Vec<Run>),
) {
    let source = Place::at(from, piece.source * eb);
    let destination = Place::at(to, piece.destination * eb);
    let bytes = piece.len * eb;
    let others: Vec<u32> = tiles
        .iter()
        .copied()
        .filter(|&t| t != piece.owner)
        .collect();
    if others.len() < tiles.len() {
        local_copy(program, piece.owner, source, destination, bytes, runs);
    }
    push_move(moves, (piece.owner, source), others, destination, bytes);
}

/// A local copy of `bytes` (a multiple of 32) on `tile`, as copies of power-of-two multiples
/// of 32 bytes, so that a program's copies of many sizes share a few kernel specializations.
pub(super) fn local_copy(
    program: &mut TileProgram,
    tile: u32,
    source: Place,
    destination: Place,
    bytes: u32,
    runs: &mut Vec<Run>,
) {
    let mut done = 0;
    while done < bytes {
        let left = bytes - done;
        let chunk = if left < 32 {
            left
        } else {
            1 << (31 - (left / 32).leading_zeros()) << 5
        };
        runs.push(Run {
            tile,
            kernel: program.kernel(KernelSpec::Copy { bytes: chunk }),
            args: vec![
                Arg::Address(Place::at(source.buffer, source.offset + done)),
                Arg::Address(Place::at(destination.buffer, destination.offset + done)),
            ],
        });
        done += chunk;
    }
}

/// One range of a [`Ranged`] value on its owner: elements `[first, first + len)` of the
/// AMP-output order of the `rows x cols` block whose first element is tensor element
/// `origin` (row, column), stored from byte 0 of the value's buffer. (A split GEMM whose
/// result goes to its row grid keeps its blocks row-major instead:
/// [`SplitGrid::c_row_major`].)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OwnedRange {
    pub tile: u32,
    pub first: u32,
    pub len: u32,
    pub rows: u32,
    pub cols: u32,
    pub origin: (u32, u32),
}

/// A device value `[m x n]` held as a split GEMM's result: ranges of its blocks'
/// AMP-output order on their owner tiles ([`OwnedRange`], at most one per tile), all in
/// `buffer`. Pointwise ops work on the ranges in place; a later split GEMM gathers its A
/// panels from them: the AMP-output and AMP-left orders are the same 16-column panel order,
/// so a run of a group's rows is contiguous on both sides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ranged {
    pub m: u32,
    /// Columns in whole 16-groups; the tensor's are `n_real` (the rest zero padding).
    pub n: u32,
    pub n_real: u32,
    pub precision: Precision,
    pub buffer: BufferId,
    pub class: MemoryClass,
    pub ranges: Vec<OwnedRange>,
}

/// A run of rows of one 16-column group of a [`Ranged`] value on its owner: tensor rows
/// `[row, row + rows)` of column group `group`, at element `offset` of the owner's buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    pub tile: u32,
    pub offset: u32,
    pub row: u32,
    pub rows: u32,
    pub group: u32,
}

impl Ranged {
    /// Every segment, range by range.
    pub fn segments(&self, mut visit: impl FnMut(Segment)) {
        for range in &self.ranges {
            super::rows::range_segments(range, &mut visit);
        }
    }

    /// The segments of each 16-column group, by first row.
    pub fn segments_by_group(&self) -> Vec<Vec<Segment>> {
        let mut by_group = vec![Vec::new(); (self.n / 16) as usize];
        self.segments(|seg| by_group[seg.group as usize].push(seg));
        for segments in &mut by_group {
            segments.sort_by_key(|seg| seg.row);
        }
        by_group
    }

    /// Bytes of the buffer on every tile (the longest range).
    pub fn bytes(&self) -> u32 {
        self.ranges.iter().map(|r| r.len).max().unwrap_or(0) * self.precision.bytes()
    }

    /// The host pieces that read the value back (strided: one run per row of a group).
    pub fn read_pieces(&self) -> Vec<HostPiece> {
        let mut pieces = Vec::new();
        for range in &self.ranges {
            panel_pieces(
                range.tile,
                Place::at(self.buffer, 0),
                (range.first, range.len),
                range.rows,
                range.origin,
                (self.m, self.n_real),
                self.precision.bytes(),
                &mut pieces,
            );
        }
        pieces
    }
}
