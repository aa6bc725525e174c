//! Lowering of the general matmul: batched, transposed or device-operand products, one result
//! block per tile, each running the tile-local GEMM, as the strategy
//! ([`crate::strategies::general_matmul`]) plans them.

use super::*;
use crate::strategies::general_matmul::{
    general_batches_per_tile, general_input, general_matmul_blocks, general_source_cast,
    GeneralTile,
};

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

    /// `ipu.matmul` off the fast path: batches, transposes, device right operands, and any
    /// matmul planned `gemm_general` (`plan`: its `rows` x `cols` blocks are followed).
    pub(in crate::lower::graph) fn general_matmul(
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
                .step_by(scratch.gemm.k_block() as usize)
                .map(|k0| (k0, scratch.gemm.k_block().min(k - k0)))
                .collect();
            let stage = (!constant).then(|| {
                let most = (0..rows_per_group as usize)
                    .map(|p| {
                        blocks
                            .iter()
                            .map(|&(_, block)| {
                                crate::strategies::split_gemm::ranges(block * cb, rows_per_group)[p]
                                    .1
                                    * ie
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
                            Some(_) => crate::strategies::split_gemm::ranges(
                                block * cb,
                                readers.len() as u32,
                            ),
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
            local_gemm(self, &mut runs, tile, (a_at, b_at, c_at), &scratch);
        }
        let blocks = Blocks {
            grid,
            buffer: result,
            precision: partials,
        };
        self.finish(index, "ipu.matmul", runs, out, blocks);
        Ok(())
    }
}
