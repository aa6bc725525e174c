//! Lowering of the general matmul: batched, transposed or device-operand products, one result
//! block per tile, each running the tile-local GEMM, as the strategy
//! ([`crate::strategies::general_matmul`]) plans them.

use super::*;
use crate::strategies::general_matmul::{
    general_batches_per_tile, general_casts_at_source, general_input, general_matmul_blocks,
    GeneralTile,
};
use crate::tiling::layout::{canonical_dims, host_cut_axis};

impl Lowering<'_> {
    /// The scratch buffers of a tile-local GEMM of `rows x k x n` on `tiles`.
    pub(super) fn gemm_scratch(
        &mut self,
        name: &str,
        gemm: LocalGemm,
        tiles: &[u32],
    ) -> GemmScratch {
        let (input, class) = (gemm.input, gemm.weights);
        let sizes = gemm.scratch();
        let ie = input.bytes();
        let mut buffer = |what: &str, bytes: u32| {
            self.program
                .buffer(format!("{name}.{what}"), class, bytes, tiles.to_vec())
        };
        let cast = sizes
            .cast
            .map(|(a, b)| (buffer("a_cast", a * ie), buffer("b_cast", b * ie)));
        let a_amp = buffer("a_amp", sizes.a_amp * ie);
        let b_amp = buffer("b_amp", sizes.b_amp * ie);
        let c_amp = buffer("c_amp", sizes.c_amp * gemm.partials().bytes());
        GemmScratch {
            gemm,
            scale_exp: self.options.fp8_scale,
            cast,
            a_amp,
            b_amp,
            c_amp,
        }
    }

    /// The operands, result and sizes of matmul `index` (`m x k` by `k x n` after the
    /// transposes, whole-batch broadcasting), or why it is not one.
    fn matmul_shape(&self, index: usize) -> Result<MatmulShape, LowerError> {
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
        Ok(MatmulShape {
            x,
            w,
            out,
            transposes: (transpose_lhs, transpose_rhs),
            m: to_u32(m)?,
            k: to_u32(k)?,
            n: to_u32(n)?,
            batches: (ba, bb, to_u32(bc)?),
        })
    }

    /// A packed right operand (see `general_b_packed`) streamed by the host: each tile's
    /// K x cols block, K block by K block in AMP-right order (16-column groups of the block's
    /// rows). A constant is written at initialization to every tile that reads it; an argument
    /// block is written once, cut into one contiguous range of its packed order per reading
    /// tile (as the planner homes host values), into a staging buffer from which the readers
    /// exchange their ranges (an all-gather per block column, per batch when B is batched; see
    /// `host_fetches` for why it is staged).
    fn stream_packed_b(
        &mut self,
        index: usize,
        packed: PackedB,
        grid: &GemmGrid,
        transfers: &mut Transfers,
    ) -> Result<(), LowerError> {
        let PackedB {
            value: w,
            dims: (k, n, cb),
            k_block,
            buffer: b_rm,
            encoding: (input, scale),
            ..
        } = packed;
        let nb = n / cb;
        let constant = self.graph.values[w].origin == crate::tiling::Origin::Constant;
        let ie = input.bytes();
        let groups = if packed.batched { packed.batches } else { 1 };
        let rows_per_group = grid.mb / groups;
        // Each block is cut among its readers as the planner homes host values
        // (`layout::host_home`): when no axis of the operand splits exactly into one piece
        // per reader, the first reader has the whole block written and multicasts it. A
        // resident stack's slice too: `strategies::repeat` prices its stores from that home
        // (the first reader gathers the block from the stack's holders, then multicasts it).
        let dims = canonical_dims(&self.graph.values[w].shape);
        let parts = [if dims[0] > 1 { groups } else { 1 }, 1, nb];
        let whole = host_cut_axis(dims, parts, rows_per_group).is_none();
        let cut = |elements: u32| {
            if whole {
                let mut cut = vec![(0, 0); rows_per_group as usize];
                cut[0] = (0, elements);
                cut
            } else {
                crate::strategies::split_gemm::ranges(elements, rows_per_group)
            }
        };
        let blocks: Vec<(u32, u32)> = (0..k)
            .step_by(k_block as usize)
            .map(|k0| (k0, k_block.min(k - k0)))
            .collect();
        let stage = (!constant).then(|| {
            let most = (0..rows_per_group as usize)
                .map(|p| {
                    blocks
                        .iter()
                        .map(|&(_, block)| cut(block * cb)[p].1 * ie)
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
                        Some(_) => cut(block * cb),
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
                        crate::strategies::split_gemm::panel_pieces(
                            reader,
                            written,
                            (first, len),
                            block,
                            (group * k + k0, j * cb),
                            (u32::MAX, n),
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
        self.stream_encoded(w, pieces, (input, if input.is_fp8() { scale } else { 0 }))
    }

    /// The column block, row block and products per tile of a general matmul of `bc`
    /// products of `m x k` by `k x n`: the plan's (checked against the shapes the strategy
    /// takes); without a `gemm_general` plan, column blocks of a divisor of N and row blocks of
    /// a divisor of M, the pair whose per-tile calls ([`GeneralTile`]) the cost model prices
    /// lowest among those that fit the tiles (ties: fewer tiles).
    fn general_blocks(
        &self,
        index: usize,
        plan: Option<&OperatorPlan>,
        (bc, m, k, n): (u32, u32, u32, u32),
        (transposes, b_host, precisions): ((bool, bool), bool, (Precision, Precision)),
    ) -> Result<(u32, u32, u32), LowerError> {
        let fail = |detail: String| unsupported("ipu.matmul", format!("op {index}: {detail}"));
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
                    let cycles = GeneralTile::new((rp, k, cb), transposes, b_host, precisions)
                        .cycles(target);
                    ((cycles, used), (cb, rp))
                })
                .min_by_key(|(key, _)| *key)
                .map(|(_, choice)| choice),
        };
        let Some((cb, rp)) = choice else {
            return Err(fail(format!("{bc} batches do not fit on {tiles} tiles")));
        };
        Ok((cb, rp, per_tile))
    }

    /// The transposes and the tile-local GEMM of one product block on its tile, into its
    /// place in `result` (`(host, partials)`: the fetched and the result precision).
    fn block_runs(
        &mut self,
        layout: &GeneralLayout,
        slot: &Slot,
        (host, partials): (Precision, Precision),
        (result, scratch): (BufferId, &GemmScratch),
        runs: &mut Vec<Run>,
    ) {
        let (rp, cb, k) = (layout.rows, layout.cols, layout.k);
        let e = host.bytes();
        let tile = layout.grid.tile(slot.row, slot.col);
        let (a_at, b_at) = layout.operand_places(slot.index);
        if let Some(t) = layout.a_t {
            let from = Place::at(t, slot.index * k * rp * e);
            runs.push(self.transpose_run(tile, host, (k, rp), (from, a_at)));
        }
        if let Some(t) = layout.b_t {
            let from = Place::at(t, slot.index * cb * k * e);
            runs.push(self.transpose_run(tile, host, (cb, k), (from, b_at)));
        }
        let c_at = Place::at(result, slot.index * rp * cb * partials.bytes());
        local_gemm(self, runs, tile, (a_at, b_at, c_at), scratch);
    }

    /// The element type of a general matmul's operands (`host`, which they must share) and
    /// the AMP input precision it computes in, or why there is none.
    fn general_precisions(
        &self,
        index: usize,
        (x, w, out): (ValueId, ValueId, ValueId),
    ) -> Result<(Precision, Precision), LowerError> {
        let fail = |detail: String| unsupported("ipu.matmul", format!("op {index}: {detail}"));
        let a_precision = match self.placed.get(&x) {
            Some(blocks) => blocks.precision,
            None => self.graph.values[x].element,
        };
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
        Ok((host, input))
    }

    /// A device operand's blocks, cast where they are (`name`d copies) when the strategy
    /// converts it at its source (`cast`: the input precision and FP8 scale).
    fn device_operand(
        &mut self,
        index: usize,
        value: ValueId,
        name: &str,
        cast: Option<(Precision, i32)>,
    ) -> Result<Blocks, LowerError> {
        let blocks = self.on_device(value)?;
        Ok(match cast {
            Some(encoding) => self.cast_blocks(index, name, &blocks, encoding),
            None => blocks,
        })
    }

    /// `ipu.matmul` off the fast path: batches, transposes, device right operands, and any
    /// matmul planned `gemm_general` (`plan`: its `rows` x `cols` blocks are followed).
    pub(in crate::lower::graph) fn general_matmul(
        &mut self,
        index: usize,
        plan: Option<&OperatorPlan>,
    ) -> Result<(), LowerError> {
        let MatmulShape {
            x,
            w,
            out,
            transposes,
            m,
            k,
            n,
            batches: (ba, bb, bc),
        } = self.matmul_shape(index)?;
        // Host operands are written by the host where the tiles read them (see
        // `host_fetches`); device operands are gathered from their blocks.
        let on_host = |v: ValueId| {
            !self.placed.contains_key(&v)
                && !matches!(self.graph.values[v].origin, crate::tiling::Origin::Op(_))
        };
        let a_host = on_host(x);
        // A right operand still on the host may be written straight into the AMP order its
        // GEMM calls read (see `general_b_packed`).
        let b_host = on_host(w);
        let (host, input) = self.general_precisions(index, (x, w, out))?;
        let partials = default_partials(input);
        let source_cast = general_casts_at_source(
            self.graph,
            &self.graph.ops[index],
            (host, input),
            transposes,
        );
        let scale = self.options.fp8_scale;
        let cast_at_source = source_cast.then_some((input, scale));
        let a = match a_host {
            true => None,
            false => Some(self.device_operand(index, x, "a8", cast_at_source)?),
        };
        // The precision the tiles fetch: the input precision when converted at the source.
        let host = if source_cast { input } else { host };
        let host_scale = if host.is_fp8() { scale } else { 0 };
        let (cb, rp, per_tile) = self.general_blocks(
            index,
            plan,
            (bc, m, k, n),
            (transposes, b_host, (host, input)),
        )?;
        let layout = GeneralLayout::new(
            self,
            index,
            (bc, m, k, n),
            (rp, cb, per_tile),
            transposes,
            (host, input),
        );
        let GeneralLayout { ref grid, b_rm, .. } = layout;
        let op_tiles = grid.tiles();
        let result = self.result_buffer(index, grid, partials);
        // Several products per tile fetch B like A (no host-packed blocks).
        let tile_work = GeneralTile::new(
            (rp, k, cb),
            transposes,
            b_host && per_tile == 1,
            (host, input),
        );
        let mut scratch = self.gemm_scratch(
            &self.provenance(index),
            LocalGemm {
                b_packed: false,
                ..tile_work.local_gemm()
            },
            &op_tiles,
        );
        scratch.gemm.b_packed = tile_work.b_packed;
        let mut transfers = Transfers::default();
        let b = if scratch.gemm.b_packed {
            self.stream_packed_b(
                index,
                PackedB {
                    value: w,
                    dims: (k, n, cb),
                    batched: bb != 1,
                    batches: bc,
                    k_block: scratch.gemm.k_block(),
                    buffer: b_rm,
                    encoding: (input, scale),
                },
                grid,
                &mut transfers,
            )?;
            None
        } else if b_host {
            None
        } else {
            Some(self.device_operand(index, w, "b8", cast_at_source)?)
        };
        let (mut a_fetches, mut b_fetches) = (Vec::new(), Vec::new());
        let slots = layout.slots();
        for slot in &slots {
            let (fetch_a, fetch_b) = layout.fetches_for(slot, (ba == 1, bb == 1));
            match &a {
                Some(a) => transfers.gather(a, fetch_a),
                None => a_fetches.push(fetch_a),
            }
            match &b {
                Some(b) => transfers.gather(b, fetch_b),
                None if !scratch.gemm.b_packed => b_fetches.push(fetch_b),
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
        for slot in &slots {
            self.block_runs(
                &layout,
                slot,
                (host, partials),
                (result, &scratch),
                &mut runs,
            );
        }
        let blocks = Blocks {
            grid: layout.grid,
            buffer: result,
            precision: partials,
        };
        self.finish(index, "ipu.matmul", runs, out, blocks);
        Ok(())
    }
}

/// A matmul's operands, result and sizes (see [`Lowering::matmul_shape`]).
struct MatmulShape {
    x: ValueId,
    w: ValueId,
    out: ValueId,
    transposes: (bool, bool),
    m: u32,
    k: u32,
    n: u32,
    /// Batch sizes of the left operand, the right operand and the result.
    batches: (u64, u64, u32),
}

/// A packed right operand the host streams (see [`Lowering::stream_packed_b`]).
struct PackedB {
    value: ValueId,
    /// `(k, n, cols)`: its rows and columns, and the column block of one tile.
    dims: (u32, u32, u32),
    /// One matrix for every batch (`false`), or one per batch of the result's `batches`.
    batched: bool,
    batches: u32,
    /// Rows of K per GEMM call (the packed order's K blocks).
    k_block: u32,
    /// Each tile's block of it.
    buffer: BufferId,
    /// The input precision and FP8 scale it is encoded at.
    encoding: (Precision, i32),
}

/// One product block of a general matmul: grid row and column of its tile, its slot among
/// the tile's products, and its row block among all products' row blocks.
struct Slot {
    row: u32,
    col: u32,
    index: u32,
    row_block: u32,
}

/// Where a general matmul's blocks are: its grid, block shape and per-tile operand buffers.
struct GeneralLayout {
    grid: GemmGrid,
    /// Rows and columns of a result block; products per tile; row blocks per product.
    rows: u32,
    cols: u32,
    per_tile: u32,
    per_batch: u32,
    /// One product's `m x k` by `k x n`, and the element bytes of the fetched operands.
    m: u32,
    k: u32,
    n: u32,
    element: u32,
    /// Per product on the tile: its operand blocks one after the other (and their transposed
    /// fetches when the op transposes them).
    a_rm: BufferId,
    b_rm: BufferId,
    a_t: Option<BufferId>,
    b_t: Option<BufferId>,
    a_bytes: u32,
    b_bytes: u32,
}

impl GeneralLayout {
    /// The grid of `bc` products in blocks of `rows x cols` (`per_tile` products per tile),
    /// with the operand blocks in interleaved memory (the GEMM calls feed their weights at full
    /// rate from there).
    fn new(
        lowering: &mut Lowering<'_>,
        index: usize,
        (bc, m, k, n): (u32, u32, u32, u32),
        (rows, cols, per_tile): (u32, u32, u32),
        (transpose_lhs, transpose_rhs): (bool, bool),
        (host, input): (Precision, Precision),
    ) -> GeneralLayout {
        let per_batch = m / rows;
        let grid = GemmGrid {
            m: bc * m,
            k,
            n,
            cb: cols,
            nb: n / cols,
            mb: (bc * per_batch).div_ceil(per_tile),
            rows_padded: rows * per_tile,
            kb: k,
            k_steps: 1,
        };
        let op_tiles = grid.tiles();
        let e = host.bytes();
        let provenance = lowering.provenance(index);
        let mut operand = |what: &str, bytes: u32| {
            lowering.program.buffer(
                format!("{provenance}.{what}"),
                MemoryClass::Interleaved,
                bytes,
                op_tiles.clone(),
            )
        };
        let (a_bytes, b_bytes) = (rows * k * e, k * cols * e.max(input.bytes()));
        let a_rm = operand("a", per_tile * a_bytes);
        let b_rm = operand("b", per_tile * b_bytes);
        let a_t = transpose_lhs.then(|| operand("a_t", per_tile * k * rows * e));
        let b_t = transpose_rhs.then(|| operand("b_t", per_tile * cols * k * e));
        GeneralLayout {
            grid,
            rows,
            cols,
            per_tile,
            per_batch,
            m,
            k,
            n,
            element: e,
            a_rm,
            b_rm,
            a_t,
            b_t,
            a_bytes,
            b_bytes,
        }
    }

    /// Every product block, tile by tile.
    fn slots(&self) -> Vec<Slot> {
        let products = self.grid.m / self.m * self.per_batch;
        let per_tile = self.per_tile;
        self.grid
            .grid()
            .flat_map(|(row, col)| {
                (0..per_tile).map(move |index| Slot {
                    row,
                    col,
                    index,
                    row_block: row * per_tile + index,
                })
            })
            .filter(|slot| slot.row_block < products)
            .collect()
    }

    /// Where a slot's left and right operand blocks are on its tile.
    fn operand_places(&self, slot: u32) -> (Place, Place) {
        (
            Place::at(self.a_rm, slot * self.a_bytes),
            Place::at(self.b_rm, slot * self.b_bytes),
        )
    }

    /// What a slot's tile fetches of the left and right operands (`single`: whether each is
    /// one matrix for every batch): rows of A (or its transposed block) and the K x cols block
    /// of B (or its transposed block).
    fn fetches_for(&self, slot: &Slot, (a_single, b_single): (bool, bool)) -> (Fetch, Fetch) {
        let (rp, cb, m, k, n, e) = (self.rows, self.cols, self.m, self.k, self.n, self.element);
        let tile = self.grid.tile(slot.row, slot.col);
        let (batch_index, block) = (
            slot.row_block / self.per_batch,
            slot.row_block % self.per_batch,
        );
        let ia = if a_single { 0 } else { batch_index };
        let ib = if b_single { 0 } else { batch_index };
        let r0 = block * rp;
        let (a_at, b_at) = self.operand_places(slot.index);
        let fetch_a = match self.a_t {
            None => Fetch::rows(tile, (ia * m + r0, rp), k, a_at),
            Some(t) => Fetch {
                tile,
                rows: (ia * k, ia * k + k),
                cols: (r0, r0 + rp),
                place: Place::at(t, slot.index * k * rp * e),
            },
        };
        let j = slot.col;
        let fetch_b = match self.b_t {
            None => Fetch {
                tile,
                rows: (ib * k, ib * k + k),
                cols: (j * cb, (j + 1) * cb),
                place: b_at,
            },
            Some(t) => Fetch {
                tile,
                rows: (ib * n + j * cb, ib * n + (j + 1) * cb),
                cols: (0, k),
                place: Place::at(t, slot.index * cb * k * e),
            },
        };
        (fetch_a, fetch_b)
    }
}
