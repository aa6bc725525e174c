//! Lowering of `ipu.matmul` to tiles.
//!
//! ## Decomposition
//! C[M x N] = A[M x K] B[K x N]. Output columns split into `nb = N / cb` column blocks (`cb`
//! the largest of 64, 48, 32, 16 dividing N, or the plan's) and rows into `mb` row blocks of
//! `rows_padded` rows (the last block padded with zero rows), `mb * nb <= tiles`; tile
//! `i * nb + j` owns C block (i, j).
//!
//! Every input element is converted (FP8 cast under the fp8 policy, rearrange into its AMP
//! order) exactly once, where it lands from the host, and the exchange moves converted bytes:
//! * A's row block i is cut into K chunks of whole 16-column groups ([`a_chunks`]), chunk j
//!   streamed to tile (i, j). An AMP-left operand is K-group major, so each converted chunk is
//!   a contiguous range of the AMP-left block, written in place; one exchange phase
//!   broadcasts every chunk along its grid row, to the same place.
//! * B's column block j (row-major K x cb, one piece per K row) is cut into K-row chunks inside
//!   its K blocks ([`b_chunks`]), chunk i on tile (i, j) (owners rotate with the K block).
//!   Each converts its chunk into AMP-right order; column group g of the chunk is contiguous
//!   and belongs at `(s kb cb + (g kb + row in block) 16)` of the AMP-right operand, where the
//!   owner copies it and the same phase sends it down grid column j.
//!
//! Then, per tile: one GEMM call per K block (the first initializes C, the others accumulate)
//! and a rearrange of C back to row-major dropping the padded rows.
//!
//! K blocks: the GEMM kernel widens B into a `k * c` element buffer, at most
//! `GEMM_MAX_WEIGHT_ELEMENTS`, so K runs in `k_steps` blocks of `kb` (a multiple of 16). An
//! AMP-left A is K-group major, so K block s of A is contiguous at element
//! `s * kb * rows_padded`; B's K blocks are rearranged one by one, so they are contiguous too.

use ipu_device::kernels::describe::default_partials;
use ipu_device::kernels::spec::ElementOrder;
use ipu_device::{KernelSpec, MemoryClass, Precision};

use super::program::{
    push_move, Arg, BufferId, HostPiece, Move, Place, Run, TileProgram, TileStep,
};
pub use crate::strategies::gemm::{GemmGrid, A_PANEL_BYTES};

/// Host chunk buffers larger than this go to interleaved memory.
pub const HOST_CHUNKS_STANDARD_BYTES: u32 = 32 * 1024;

/// The precisions of one GEMM.
#[derive(Debug, Clone, Copy)]
pub struct GemmPrecision {
    /// Of the host tensors A and B.
    pub host: Precision,
    /// Of the AMP inputs (FP8 under the fp8 policy).
    pub input: Precision,
    /// FP8 scale exponent of both inputs.
    pub scale_exp: i32,
}

impl GemmPrecision {
    pub fn partials(&self) -> Precision {
        default_partials(self.input)
    }

    /// The cast of `elements` host elements to the AMP input precision.
    fn cast(&self, elements: u32) -> KernelSpec {
        KernelSpec::Cast {
            from: self.host,
            to: self.input,
            elements,
        }
    }

    /// The FP8 scale argument of the casts and GEMM calls.
    fn scale_arg(&self) -> Arg {
        Arg::Value(self.scale_exp as u32)
    }
}

/// The K chunks of A's row blocks: `(j, k0, k1)` means tile column j converts columns
/// `[k0, k1)` of the padded K (whole 16-column groups, at most `nb` chunks); the real columns
/// of a chunk are `[k0, min(k1, k))`, the rest is zero padding.
pub fn a_chunks(grid: &GemmGrid) -> Vec<(u32, u32, u32)> {
    a_panel_chunks(grid)
        .into_iter()
        .map(|(_, j, k0, k1)| (j, k0, k1))
        .collect()
}

/// The K chunks of A per K panel: `(s, j, k0, k1)`: in panel s, tile column j converts
/// columns `[k0, k1)` (whole 16-column groups of the panel, at most `nb` chunks; the owners
/// rotate with the panel so every tile column converts).
pub fn a_panel_chunks(grid: &GemmGrid) -> Vec<(u32, u32, u32, u32)> {
    let groups = grid.kb / 16;
    let count = grid.nb.min(groups).max(1);
    let mut out = Vec::new();
    for s in 0..grid.k_steps {
        let base = s * grid.kb;
        for c in 0..count {
            out.push((
                s,
                (c + s * count) % grid.nb,
                base + c * groups / count * 16,
                base + (c + 1) * groups / count * 16,
            ));
        }
    }
    out
}

/// Element offset of each A chunk in its tile column's host buffer (chunks of one column
/// follow each other, `rows_padded x columns` each) and the largest buffer in elements.
fn a_slots(grid: &GemmGrid) -> (Vec<u32>, u32) {
    let mut next = vec![0u32; grid.nb as usize];
    let mut slots = Vec::new();
    for (_, j, k0, k1) in a_panel_chunks(grid) {
        slots.push(next[j as usize]);
        next[j as usize] += grid.rows_padded * chunk_columns(grid, k0, k1);
    }
    let widest = next.into_iter().max().unwrap_or(0);
    (slots, widest)
}

/// Real columns of the chunk `[k0, k1)`.
fn chunk_columns(grid: &GemmGrid, k0: u32, k1: u32) -> u32 {
    k1.min(grid.k).saturating_sub(k0)
}

/// The K-row chunks of B's column blocks: `(i, s, r0, r1)` means grid row i converts rows
/// `[r0, r1)` of the padded K, inside K block s (at most `mb` chunks per K block); the real
/// rows are `[r0, min(r1, k))`.
pub fn b_chunks(grid: &GemmGrid) -> Vec<(u32, u32, u32, u32)> {
    let mut out = Vec::new();
    for s in 0..grid.k_steps {
        let count = grid.mb.min(grid.kb).max(1);
        for c in 0..count {
            let r0 = s * grid.kb + c * grid.kb / count;
            let r1 = s * grid.kb + (c + 1) * grid.kb / count;
            if r1 > r0 {
                // Rotate the owners with the K block so every grid row converts.
                out.push(((c + s * count) % grid.mb, s, r0, r1));
            }
        }
    }
    out
}

/// Real rows of the B chunk `[r0, r1)`.
fn chunk_rows(grid: &GemmGrid, r0: u32, r1: u32) -> u32 {
    r1.min(grid.k).saturating_sub(r0)
}

/// Slot of each B chunk in its owner's host buffer: chunks of one tile follow each other.
fn b_slots(grid: &GemmGrid) -> (Vec<u32>, u32) {
    let mut next = vec![0u32; grid.mb as usize];
    let mut slots = Vec::new();
    for (i, _, r0, r1) in b_chunks(grid) {
        slots.push(next[i as usize]);
        next[i as usize] += r1 - r0;
    }
    let widest = next.into_iter().max().unwrap_or(0);
    (slots, widest)
}

/// The host pieces of B streamed as K-row chunks into `buffer` (row-major chunk rows x cb
/// on tile (i, j) for column block j), one piece per K row.
pub fn b_chunk_pieces(grid: &GemmGrid, buffer: BufferId, host: u32) -> Vec<HostPiece> {
    let (slots, _) = b_slots(grid);
    let mut pieces = Vec::new();
    for j in 0..grid.nb {
        for (&(i, _, r0, r1), &slot) in b_chunks(grid).iter().zip(&slots) {
            for r in 0..chunk_rows(grid, r0, r1) {
                pieces.push(HostPiece {
                    tile: grid.tile(i, j),
                    place: Place::at(buffer, (slot + r) * grid.cb * host),
                    tensor_offset: u64::from(((r0 + r) * grid.n + j * grid.cb) * host),
                    bytes: grid.cb * host,
                    runs: 1,
                    stride: 0,
                    pad: 0,
                });
            }
        }
    }
    pieces
}

/// The host pieces of A streamed as K chunks into `chunk` (row-major `rows(i) x columns` on
/// tile (i, j)), with `host` bytes per element.
pub fn a_chunk_pieces(grid: &GemmGrid, chunk: BufferId, host: u32) -> Vec<HostPiece> {
    let mut pieces = Vec::new();
    let (slots, _) = a_slots(grid);
    for i in 0..grid.mb {
        for (&(_, j, k0, k1), &slot) in a_panel_chunks(grid).iter().zip(&slots) {
            let columns = chunk_columns(grid, k0, k1);
            if columns == 0 {
                continue;
            }
            for r in 0..grid.rows(i) {
                pieces.push(HostPiece {
                    tile: grid.tile(i, j),
                    place: Place::at(chunk, (slot + r * columns) * host),
                    tensor_offset: u64::from(((grid.first_row(i) + r) * grid.k + k0) * host),
                    bytes: columns * host,
                    runs: 1,
                    stride: 0,
                    pad: 0,
                });
            }
        }
    }
    pieces
}

/// The host-side input buffers of a GEMM: A's K chunks (when A comes from the host) and B's
/// row-major column blocks, which host bindings fill before [`lower_matmul`] runs.
pub fn input_buffers(
    program: &mut TileProgram,
    grid: &GemmGrid,
    precision: GemmPrecision,
    provenance: &str,
    a_from_host: bool,
) -> (Option<BufferId>, BufferId) {
    let host = precision.host.bytes();
    let all = grid.tiles();
    let standard = MemoryClass::Standard;
    // The host chunks live until the last panel is converted: large ones go to the bigger
    // interleaved region.
    let class = |bytes: u32| {
        if bytes > HOST_CHUNKS_STANDARD_BYTES {
            MemoryClass::Interleaved
        } else {
            standard
        }
    };
    let a = a_from_host.then(|| {
        let (_, widest) = a_slots(grid);
        let bytes = (widest * host).max(host);
        program.buffer(format!("{provenance}.a"), class(bytes), bytes, all.clone())
    });
    let (_, widest) = b_slots(grid);
    let bytes = (widest * grid.cb * host).max(host);
    let b_rm = program.buffer(format!("{provenance}.b"), class(bytes), bytes, all);
    (a, b_rm)
}

/// Where a GEMM's left operand is when [`lower_matmul`] starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ASource {
    /// K chunks streamed from the host (see [`a_chunks`], [`a_chunk_pieces`]).
    Chunks(BufferId),
    /// The output of an earlier product: row-major blocks over `grid`, block (i, q) in
    /// `buffer` on `grid.tile(i, q)`. This GEMM's row blocks split `grid`'s evenly; its K is
    /// `grid`'s columns, `kb / grid.cb` column blocks per panel.
    Gathered { buffer: BufferId, grid: GemmGrid },
}

/// Zeros for `elements` of `precision` at `destination` on `tile` (a chunk that is only padding).
fn push_zeros(
    program: &mut TileProgram,
    runs: &mut Vec<Run>,
    tile: u32,
    precision: Precision,
    elements: u32,
    destination: Place,
) {
    runs.push(Run {
        tile,
        kernel: program.kernel(KernelSpec::Fill {
            precision,
            elements,
        }),
        args: vec![Arg::Address(destination), Arg::Value(0)],
    });
}

/// A chunk's conversion on `tile`: when the policy narrows, the cast (`spec`, into the start
/// of `buffer`, with the scale argument), then `rearrange` from wherever the data is into
/// `destination`.
fn push_conversion(
    program: &mut TileProgram,
    runs: &mut Vec<Run>,
    tile: u32,
    source: Place,
    cast: Option<(KernelSpec, BufferId, Arg)>,
    rearrange: KernelSpec,
    destination: Place,
) {
    let mut from = source;
    if let Some((spec, buffer, scale)) = cast {
        runs.push(Run {
            tile,
            kernel: program.kernel(spec),
            args: vec![
                Arg::Address(source),
                Arg::Address(Place::at(buffer, 0)),
                scale,
            ],
        });
        from = Place::at(buffer, 0);
    }
    runs.push(Run {
        tile,
        kernel: program.kernel(rearrange),
        args: vec![Arg::Address(from), Arg::Address(destination)],
    });
}

/// Emits the steps of one GEMM (see the module docs) reading A from `a` and B's K-row
/// chunks from `b_rm`; returns the row-major C buffer. K runs in panels of `kb` (one per K
/// block): per panel one compute step converts that panel's chunks (each element once), one
/// exchange phase sends the converted bytes, and one compute step runs the GEMM calls (the
/// first initializes C, the others accumulate).
pub fn lower_matmul(
    program: &mut TileProgram,
    grid: &GemmGrid,
    precision: GemmPrecision,
    (a, b_rm): (ASource, BufferId),
    provenance: &str,
) -> BufferId {
    let buffers = GemmBuffers::new(program, grid, precision, &a, provenance);
    let steps = GemmSteps {
        grid,
        precision,
        buffers: &buffers,
        a_slots: a_slots(grid).0,
        b_slots: b_slots(grid).0,
    };
    for s in 0..grid.k_steps {
        let mut runs = Vec::new();
        let mut moves = Vec::new();
        match &a {
            ASource::Chunks(chunk) => {
                convert_a_panel(program, &steps, s, *chunk, (&mut runs, &mut moves));
            }
            ASource::Gathered {
                buffer: produced, ..
            } => gather_a_panel(program, &steps, s, *produced, (&mut runs, &mut moves)),
        }
        convert_b_block(program, &steps, s, b_rm, (&mut runs, &mut moves));
        // Stable: each tile keeps its casts before its rearranges.
        runs.sort_by_key(|r| r.tile);
        program.run.push(TileStep::Compute {
            provenance: format!("{provenance}.convert"),
            runs,
        });
        if !moves.is_empty() {
            let phase = program.exchange_phases() as u32;
            program.run.push(TileStep::Exchange { phase, moves });
        }
        let runs = gemm_runs(program, &steps, s);
        program.run.push(TileStep::Compute {
            provenance: provenance.to_string(),
            runs,
        });
    }
    unpack_output(program, grid, precision, buffers.c_amp, provenance)
}

/// The buffers of one GEMM's steps, on all its tiles.
struct GemmBuffers {
    /// One panel of each AMP operand, both in interleaved memory (the standard region is
    /// small and holds the host chunks and C).
    a_amp: BufferId,
    b_amp: BufferId,
    c_amp: BufferId,
    /// Cast copies of one chunk, when the policy narrows.
    a_cast: Option<BufferId>,
    b_cast: Option<BufferId>,
    /// Staging for B chunks that are not a whole K block.
    b_stage: Option<BufferId>,
    /// A gathered panel (the producer's blocks of the panel, block-major) and the producer's
    /// grid.
    gathered_panel: Option<(BufferId, GemmGrid)>,
}

impl GemmBuffers {
    fn new(
        program: &mut TileProgram,
        grid: &GemmGrid,
        precision: GemmPrecision,
        a: &ASource,
        provenance: &str,
    ) -> GemmBuffers {
        let host = precision.host.bytes();
        let input = precision.input.bytes();
        let pb = precision.partials().bytes();
        let all = grid.tiles();
        let rp = grid.rows_padded;
        let (cb, kb) = (grid.cb, grid.kb);
        let standard = MemoryClass::Standard;
        let narrowing = precision.input != precision.host;
        // One panel of each AMP operand, both in interleaved memory (the standard region is small
        // and holds the host chunks and C).
        let a_amp = program.buffer(
            format!("{provenance}.a.amp_left"),
            MemoryClass::Interleaved,
            rp * kb * input,
            all.clone(),
        );
        let b_amp = program.buffer(
            format!("{provenance}.b.amp_right"),
            MemoryClass::Interleaved,
            kb * cb * input,
            all.clone(),
        );
        // Casts and staging hold one panel's chunk at a time (a tile owns at most one A chunk and
        // one B chunk per column block and panel).
        let a_chunk_max = a_panel_chunks(grid)
            .iter()
            .map(|&(_, _, k0, k1)| rp * chunk_columns(grid, k0, k1))
            .max()
            .unwrap_or(0);
        let b_chunk_max = b_chunks(grid)
            .iter()
            .map(|&(_, _, r0, r1)| r1 - r0)
            .max()
            .unwrap_or(0);
        let a_cast = narrowing.then(|| {
            let elements = match a {
                ASource::Chunks(_) => a_chunk_max,
                ASource::Gathered { .. } => rp * kb,
            };
            program.buffer(
                format!("{provenance}.a.cast"),
                standard,
                (elements * input).max(input),
                all.clone(),
            )
        });
        let b_cast = narrowing.then(|| {
            program.buffer(
                format!("{provenance}.b.cast"),
                standard,
                (b_chunk_max * cb * input).max(input),
                all.clone(),
            )
        });
        // A chunk that is a whole K block is already in its final layout: it is rearranged in
        // place and sent as one range. Partial chunks go through a staging buffer.
        let partial = b_chunks(grid).iter().any(|&(_, _, r0, r1)| r1 - r0 != kb);
        let b_stage = partial.then(|| {
            program.buffer(
                format!("{provenance}.b.amp_chunk"),
                standard,
                (b_chunk_max * cb * input).max(input),
                all.clone(),
            )
        });
        let c_amp = program.buffer(
            format!("{provenance}.c.amp_output"),
            standard,
            rp * cb * pb,
            all.clone(),
        );
        // A gathered panel: the producer's blocks of the panel, block-major.
        let gathered_panel = match a {
            ASource::Gathered { grid: producer, .. } => Some(program.buffer(
                format!("{provenance}.a.gathered"),
                MemoryClass::Interleaved,
                rp * kb * host,
                all.clone(),
            ))
            .map(|buffer| (buffer, producer.clone())),
            ASource::Chunks(_) => None,
        };
        GemmBuffers {
            a_amp,
            b_amp,
            c_amp,
            a_cast,
            b_cast,
            b_stage,
            gathered_panel,
        }
    }
}

/// What every step of one GEMM reads: its grid, precisions, buffers, and where each host
/// chunk sits in its tile's host buffer.
struct GemmSteps<'a> {
    grid: &'a GemmGrid,
    precision: GemmPrecision,
    buffers: &'a GemmBuffers,
    a_slots: Vec<u32>,
    b_slots: Vec<u32>,
}

fn address(buffer: BufferId, offset: u32) -> Arg {
    Arg::Address(Place::at(buffer, offset))
}

/// A's panel `s` from its host chunks in `chunk`: each chunk's owner converts it (cast, then
/// AMP-left) into its place in the panel and sends it along its grid row.
fn convert_a_panel(
    program: &mut TileProgram,
    steps: &GemmSteps,
    s: u32,
    chunk: BufferId,
    (runs, moves): (&mut Vec<Run>, &mut Vec<Move>),
) {
    let &GemmSteps {
        grid,
        precision,
        buffers,
        ..
    } = steps;
    let host = precision.host.bytes();
    let input = precision.input.bytes();
    let rp = grid.rows_padded;
    let kb = grid.kb;
    let scale = precision.scale_arg();
    let cast = |elements| precision.cast(elements);
    let &GemmBuffers { a_amp, a_cast, .. } = buffers;
    for (&(panel, j, k0, k1), &slot) in a_panel_chunks(grid).iter().zip(&steps.a_slots) {
        if panel != s {
            continue;
        }
        let columns = chunk_columns(grid, k0, k1);
        let within = (k0 - s * kb) * rp * input;
        for i in 0..grid.mb {
            let tile = grid.tile(i, j);
            if columns == 0 {
                push_zeros(
                    program,
                    runs,
                    tile,
                    precision.input,
                    rp * (k1 - k0),
                    Place::at(a_amp, within),
                );
            } else {
                let spec = KernelSpec::Rearrange {
                    order: ElementOrder::AmpLeft,
                    to_amp: true,
                    precision: precision.input,
                    offset: 0,
                    rows: grid.rows(i),
                    rows_padded: rp,
                    cols: columns,
                    cols_padded: k1 - k0,
                };
                push_conversion(
                    program,
                    runs,
                    tile,
                    Place::at(chunk, slot * host),
                    a_cast.map(|b| (cast(grid.rows(i) * columns), b, scale)),
                    spec,
                    Place::at(a_amp, within),
                );
            }
            let destinations: Vec<u32> = (0..grid.nb)
                .map(|jj| grid.tile(i, jj))
                .filter(|&t| t != tile)
                .collect();
            push_move(
                moves,
                (tile, Place::at(a_amp, within)),
                destinations,
                Place::at(a_amp, within),
                (k1 - k0) * rp * input,
            );
        }
    }
}

/// A's panel `s` gathered from the producer's row-major blocks in `produced`: a tile that
/// holds one copies it, the others receive it (the rearrange waits for the exchange; see
/// [`gemm_runs`]).
fn gather_a_panel(
    program: &mut TileProgram,
    steps: &GemmSteps,
    s: u32,
    produced: BufferId,
    (runs, moves): (&mut Vec<Run>, &mut Vec<Move>),
) {
    let &GemmSteps {
        grid,
        precision,
        buffers,
        ..
    } = steps;
    let host = precision.host.bytes();
    let rp = grid.rows_padded;
    let kb = grid.kb;
    let gathered_panel = &buffers.gathered_panel;
    // Gather the panel's blocks: a tile that holds one copies it, the others
    // receive it; the rearrange waits for the exchange (see the GEMM step).
    let (panel, producer) = gathered_panel.as_ref().expect("gathered panel");
    let per_panel = kb / producer.cb;
    let block_bytes = rp * producer.cb * host;
    // Row block b of this GEMM is part b mod `split` of the producer's row block
    // b / split: contiguous rows of the producer's row-major block.
    let split = producer.rows_padded / rp;
    for q in 0..per_panel {
        let block = s * per_panel + q;
        if block >= producer.nb {
            break;
        }
        for b in 0..grid.mb {
            let source = producer.tile(b / split, block);
            let offset = (b % split) * rp * producer.cb * host;
            let bytes = grid.rows(b) * producer.cb * host;
            let mut destinations = Vec::new();
            for j in 0..grid.nb {
                let tile = grid.tile(b, j);
                if tile == source {
                    runs.push(Run {
                        tile,
                        kernel: program.kernel(KernelSpec::Copy { bytes }),
                        args: vec![address(produced, offset), address(*panel, q * block_bytes)],
                    });
                } else {
                    destinations.push(tile);
                }
            }
            push_move(
                moves,
                (source, Place::at(produced, offset)),
                destinations,
                Place::at(*panel, q * block_bytes),
                bytes,
            );
        }
    }
}

/// B's K block `s` from its host chunks in `b_rm` (see the comments inside).
fn convert_b_block(
    program: &mut TileProgram,
    steps: &GemmSteps,
    s: u32,
    b_rm: BufferId,
    (runs, moves): (&mut Vec<Run>, &mut Vec<Move>),
) {
    let &GemmSteps {
        grid,
        precision,
        buffers,
        ..
    } = steps;
    let host = precision.host.bytes();
    let input = precision.input.bytes();
    let (cb, kb) = (grid.cb, grid.kb);
    let scale = precision.scale_arg();
    let cast = |elements| precision.cast(elements);
    let &GemmBuffers {
        b_amp,
        b_cast,
        b_stage,
        ..
    } = buffers;
    let groups = cb / 16;
    // B's K block s: grid row i converts its K-row chunk of every column block into
    // AMP-right order; column group g of the chunk is contiguous and belongs at
    // `(g kb + row in block) 16` of the panel.
    for j in 0..grid.nb {
        for (&(i, block, r0, r1), &slot) in b_chunks(grid).iter().zip(&steps.b_slots) {
            if block != s {
                continue;
            }
            let tile = grid.tile(i, j);
            let rows = r1 - r0;
            let real = chunk_rows(grid, r0, r1);
            let whole = rows == kb;
            let (target_buffer, target_offset) = match (whole, b_stage) {
                (false, Some(stage)) => (stage, 0),
                _ => (b_amp, 0),
            };
            if real == 0 {
                push_zeros(
                    program,
                    runs,
                    tile,
                    precision.input,
                    rows * cb,
                    Place::at(target_buffer, target_offset),
                );
            } else {
                let spec = KernelSpec::Rearrange {
                    order: ElementOrder::AmpRight,
                    to_amp: true,
                    precision: precision.input,
                    offset: 0,
                    rows: real,
                    rows_padded: rows,
                    cols: cb,
                    cols_padded: cb,
                };
                push_conversion(
                    program,
                    runs,
                    tile,
                    Place::at(b_rm, slot * cb * host),
                    b_cast.map(|b| (cast(real * cb), b, scale)),
                    spec,
                    Place::at(target_buffer, target_offset),
                );
            }
            let destinations: Vec<u32> = (0..grid.mb)
                .map(|ii| grid.tile(ii, j))
                .filter(|&t| t != tile)
                .collect();
            if whole {
                push_move(
                    moves,
                    (tile, Place::at(b_amp, 0)),
                    destinations,
                    Place::at(b_amp, 0),
                    kb * cb * input,
                );
                continue;
            }
            let within = r0 - s * kb;
            for g in 0..groups {
                let from = target_offset + g * rows * 16 * input;
                let to = (g * kb + within) * 16 * input;
                let bytes = rows * 16 * input;
                // The owner places its own chunk with a copy; the others receive it.
                runs.push(Run {
                    tile,
                    kernel: program.kernel(KernelSpec::Copy { bytes }),
                    args: vec![address(target_buffer, from), address(b_amp, to)],
                });
                push_move(
                    moves,
                    (tile, Place::at(target_buffer, from)),
                    destinations.clone(),
                    Place::at(b_amp, to),
                    bytes,
                );
            }
        }
    }
}

/// The GEMM step of K block `s` on every tile (a gathered panel is first put into AMP-left
/// order).
fn gemm_runs(program: &mut TileProgram, steps: &GemmSteps, s: u32) -> Vec<Run> {
    let &GemmSteps {
        grid,
        precision,
        buffers,
        ..
    } = steps;
    let host = precision.host.bytes();
    let input = precision.input.bytes();
    let rp = grid.rows_padded;
    let kb = grid.kb;
    let scale = precision.scale_arg();
    let cast = |elements| precision.cast(elements);
    let &GemmBuffers {
        a_amp,
        b_amp,
        c_amp,
        a_cast,
        ref gathered_panel,
        ..
    } = buffers;
    // The strategy's call for this K block: the one the planner priced.
    let kernel = program.kernel(grid.call(precision.input, s));
    let mut runs = Vec::new();
    for (i, j) in grid.grid() {
        let tile = grid.tile(i, j);
        if let Some((panel, producer)) = &gathered_panel {
            // The gathered panel into AMP-left order, block by block (each block is a
            // contiguous range of whole 16-column groups); padding columns are zeros.
            let per_panel = kb / producer.cb;
            let blocks = per_panel.min(producer.nb - s * per_panel);
            let mut source = (*panel, 0);
            if let Some(cast_buffer) = a_cast {
                runs.push(Run {
                    tile,
                    kernel: program.kernel(cast(rp * producer.cb * blocks)),
                    args: vec![address(*panel, 0), address(cast_buffer, 0), scale],
                });
                source = (cast_buffer, 0);
            }
            let element = if a_cast.is_some() { input } else { host };
            for q in 0..blocks {
                let spec = KernelSpec::Rearrange {
                    order: ElementOrder::AmpLeft,
                    to_amp: true,
                    precision: precision.input,
                    offset: 0,
                    rows: grid.rows(i),
                    rows_padded: rp,
                    cols: producer.cb,
                    cols_padded: producer.cb,
                };
                runs.push(Run {
                    tile,
                    kernel: program.kernel(spec),
                    args: vec![
                        address(source.0, source.1 + q * rp * producer.cb * element),
                        address(a_amp, q * producer.cb * rp * input),
                    ],
                });
            }
            if blocks < per_panel {
                push_zeros(
                    program,
                    &mut runs,
                    tile,
                    precision.input,
                    rp * producer.cb * (per_panel - blocks),
                    Place::at(a_amp, blocks * producer.cb * rp * input),
                );
            }
        }
        runs.push(Run {
            tile,
            kernel,
            args: vec![
                address(a_amp, 0),
                address(b_amp, 0),
                address(c_amp, 0),
                Arg::Value(0),
                scale,
                scale,
            ],
        });
    }
    runs
}

/// C back to row-major, the padded rows dropped; returns its buffer.
fn unpack_output(
    program: &mut TileProgram,
    grid: &GemmGrid,
    precision: GemmPrecision,
    c_amp: BufferId,
    provenance: &str,
) -> BufferId {
    let partials = precision.partials();
    let (rp, cb) = (grid.rows_padded, grid.cb);
    let all = grid.tiles();
    let standard = MemoryClass::Standard;
    let pb = partials.bytes();
    let c_rm = program.buffer(format!("{provenance}.c"), standard, rp * cb * pb, all);
    let mut runs = Vec::new();
    for (i, j) in grid.grid() {
        let spec = KernelSpec::Rearrange {
            order: ElementOrder::AmpOutput,
            to_amp: false,
            precision: partials,
            offset: 0,
            rows: grid.rows(i),
            rows_padded: rp,
            cols: cb,
            cols_padded: cb,
        };
        runs.push(Run {
            tile: grid.tile(i, j),
            kernel: program.kernel(spec),
            args: vec![address(c_amp, 0), address(c_rm, 0)],
        });
    }
    program.run.push(TileStep::Compute {
        provenance: format!("{provenance}.output"),
        runs,
    });
    c_rm
}
