//! `ipu.attention` in the rows formulation ([`crate::strategies::attention_rows`]): the homes
//! the host writes, per key block the multicast of its keys and values, the two GEMM calls,
//! the block's softmax and the merge of every tile, and the conversion whose rows the host
//! reads in place.

use super::*;
use crate::strategies::attention_rows::{self, Moved, RowsGrid};
use crate::strategies::split_gemm::panel_pieces;
use ipu_dialects::plan::AttentionPlan;

/// The buffers of one rows-formulation attention, on every tile of its grid.
struct RowsBuffers {
    queries: BufferId,
    key_homes: BufferId,
    value_homes: BufferId,
    keys: BufferId,
    values: BufferId,
    scores: BufferId,
    probabilities: BufferId,
    products: BufferId,
    block_maxima: BufferId,
    block_sums: BufferId,
    maxima: BufferId,
    sums: BufferId,
    output: BufferId,
    result: BufferId,
}

impl Lowering<'_> {
    /// Attention `index` as its pinned `attention_flash_rows` plan says (the module docs of
    /// the strategy): host operands, the result read only by the host.
    pub(super) fn attention_rows(
        &mut self,
        index: usize,
        (causal, scale): (bool, Option<f64>),
        plan: &AttentionPlan,
    ) -> Result<(), LowerError> {
        let whole = OperatorPlan::Attention(plan.clone());
        let fail = |why: String| not_followed("ipu.attention", index, Some(&whole), why);
        let op = &self.graph.ops[index];
        let (q, k, v, out) = (
            op.operands[0],
            op.operands[1],
            op.operands[2],
            op.results[0],
        );
        for (value, role) in [(q, "query"), (k, "key"), (v, "value")] {
            self.host(index, value, "ipu.attention", role)?;
        }
        if !self.prefix.is_empty() {
            return Err(fail("an attention in a repeat body".into()));
        }
        let (sizes, precision) = attention_rows::operand_sizes(self.graph, op).map_err(fail)?;
        let grid = RowsGrid::planned(sizes, (precision, causal), plan, self.tiles).map_err(fail)?;
        let scale = scale.unwrap_or(1.0 / f64::from(grid.d).sqrt()) as f32;
        let provenance = self.provenance(index);
        let buffers = self.rows_buffers(&grid, &provenance);
        let [q_pieces, k_pieces, v_pieces] = home_pieces(&grid, &buffers);
        self.stream(q, q_pieces)?;
        self.stream(k, k_pieces)?;
        self.stream(v, v_pieces)?;

        for (block, &(first_key, keys)) in grid.key_blocks().iter().enumerate() {
            let block = block as u32;
            self.rows_phase(&grid, &buffers, block);
            let steps = self.rows_block_steps(&grid, &buffers, (block, first_key, keys), scale);
            // The GEMM steps carry the op's own name (the profile plan's), the vector steps
            // their kernel's.
            for (what, runs) in ["", ".softmax", "", ".merge"].into_iter().zip(steps) {
                self.push_compute(format!("{provenance}{what}"), runs);
            }
        }
        let mut finish = Vec::new();
        let mut read = Vec::new();
        let eb = precision.bytes();
        for head in 0..grid.heads {
            for i in 0..grid.query_blocks {
                let tile = grid.tile(head, i);
                let (first, rows) = grid.query_block(i);
                finish.push(Run {
                    tile,
                    kernel: self.program.kernel(grid.finish(rows)),
                    args: vec![
                        Arg::Address(Place::at(buffers.output, 0)),
                        Arg::Address(Place::at(buffers.result, 0)),
                        Arg::Value(0),
                    ],
                });
                // The block's rows are whole rows of the result: one contiguous range.
                read.push(HostPiece::contiguous(
                    tile,
                    Place::at(buffers.result, 0),
                    (u64::from(head) * u64::from(grid.s) + u64::from(first))
                        * u64::from(grid.e)
                        * u64::from(eb),
                    rows * grid.e * eb,
                ));
            }
        }
        self.push_compute(format!("{provenance}.finish"), finish);
        self.program
            .ops
            .push((provenance, "ipu.attention".into(), 0));
        self.read_back.insert(out, read);
        Ok(())
    }

    /// The buffers on every tile of the grid.
    fn rows_buffers(&mut self, grid: &RowsGrid, provenance: &str) -> RowsBuffers {
        let tiles: Vec<u32> = (0..grid.tiles()).collect();
        let (rows, kp) = (grid.rows, grid.key_block.div_ceil(16) * 16);
        let (eb, pb) = (grid.precision.bytes(), grid.partials().bytes());
        let [k_slot, v_slot] = grid.slot_bytes();
        let slots = grid.home_slots();
        let mut buffer = |name: &str, bytes: u32| {
            self.program.buffer(
                format!("{provenance}.{name}"),
                MemoryClass::Standard,
                bytes,
                tiles.clone(),
            )
        };
        RowsBuffers {
            queries: buffer("q.amp_left", rows * grid.dp() * eb),
            key_homes: buffer("k.home", slots * k_slot),
            value_homes: buffer("v.home", slots * v_slot),
            keys: buffer("k.block", k_slot),
            values: buffer("v.block", v_slot),
            scores: buffer("s", rows * kp * pb),
            probabilities: buffer("p", rows * kp * eb),
            products: buffer("pv", rows * grid.ep() * pb),
            block_maxima: buffer("m_blk", rows * 4),
            block_sums: buffer("l_blk", rows * 4),
            maxima: buffer("m", rows * 4),
            sums: buffer("l", rows * 4),
            output: buffer("o", rows * grid.e * 4),
            result: buffer("result", rows * grid.e * eb),
        }
    }

    /// The exchange phase of key block `block`: keys then values from their homes.
    fn rows_phase(&mut self, grid: &RowsGrid, buffers: &RowsBuffers, block: u32) {
        let [k_slot, v_slot] = grid.slot_bytes();
        let mut moves = Vec::new();
        grid.for_each_move(block, |from, to, bytes, moved| {
            let (source, destination) = match moved {
                Moved::Keys { head, block } => (
                    Place::at(buffers.key_homes, grid.home(head, block).1 * k_slot),
                    Place::at(buffers.keys, 0),
                ),
                Moved::Values { head, block } => (
                    Place::at(buffers.value_homes, grid.home(head, block).1 * v_slot),
                    Place::at(buffers.values, 0),
                ),
            };
            moves.push(super::super::program::Move::between(
                (from, source),
                (to, destination),
                bytes,
            ));
        });
        self.push_exchange(moves);
    }

    /// The four compute steps of key block `block` (`keys` keys from `first_key`): the score
    /// GEMM, the block's softmax, the product GEMM and the merge, each a run per tile.
    fn rows_block_steps(
        &mut self,
        grid: &RowsGrid,
        buffers: &RowsBuffers,
        (block, first_key, keys): (u32, u32, u32),
        scale: f32,
    ) -> [Vec<Run>; 4] {
        let [k_slot, v_slot] = grid.slot_bytes();
        let scores = self.program.kernel(grid.scores(keys));
        let products = self.program.kernel(grid.products(keys));
        let counts = grid.row_counts();
        // Per row count (the GEMMs' entries) the block's softmax and merge.
        let vector: Vec<(u32, u32)> = counts
            .iter()
            .map(|&rows| {
                (
                    self.program.kernel(grid.update(rows, keys)),
                    self.program.kernel(grid.merge(rows, block as usize)),
                )
            })
            .collect();
        let mut steps: [Vec<Run>; 4] = Default::default();
        let at = |buffer: BufferId| Arg::Address(Place::at(buffer, 0));
        for head in 0..grid.heads {
            let (home, slot) = grid.home(head, block);
            for i in 0..grid.query_blocks {
                let tile = grid.tile(head, i);
                let (first, rows) = grid.query_block(i);
                let entry = counts.iter().position(|&c| c == rows).unwrap_or(0) as u32;
                // The home reads its own block in place.
                let (k_place, v_place) = if tile == home {
                    (
                        Place::at(buffers.key_homes, slot * k_slot),
                        Place::at(buffers.value_homes, slot * v_slot),
                    )
                } else {
                    (Place::at(buffers.keys, 0), Place::at(buffers.values, 0))
                };
                let gemm = |kernel, a, b: Place, c| Run {
                    tile,
                    kernel,
                    args: vec![
                        at(a),
                        Arg::Address(b),
                        at(c),
                        Arg::Value(entry),
                        Arg::Value(0),
                        Arg::Value(0),
                    ],
                };
                steps[0].push(gemm(scores, buffers.queries, k_place, buffers.scores));
                steps[1].push(Run {
                    tile,
                    kernel: vector[entry as usize].0,
                    args: vec![
                        at(buffers.scores),
                        at(buffers.probabilities),
                        at(buffers.block_maxima),
                        at(buffers.block_sums),
                        Arg::Value(scale.to_bits()),
                        Arg::Value(first),
                        Arg::Value(first_key),
                    ],
                });
                steps[2].push(gemm(
                    products,
                    buffers.probabilities,
                    v_place,
                    buffers.products,
                ));
                steps[3].push(Run {
                    tile,
                    kernel: vector[entry as usize].1,
                    args: vec![
                        at(buffers.products),
                        at(buffers.block_maxima),
                        at(buffers.block_sums),
                        at(buffers.maxima),
                        at(buffers.sums),
                        at(buffers.output),
                    ],
                });
            }
        }
        steps
    }
}

/// The host pieces of the queries (AMP-left on their tiles), the keys (transposed, AMP-right:
/// the weights of `Q K^T`) and the values (AMP-right) on their homes; zero padding.
fn home_pieces(grid: &RowsGrid, buffers: &RowsBuffers) -> [Vec<HostPiece>; 3] {
    let eb = grid.precision.bytes();
    let (dp, ep) = (grid.dp(), grid.ep());
    let [k_slot, v_slot] = grid.slot_bytes();
    let (mut q, mut k, mut v) = (Vec::new(), Vec::new(), Vec::new());
    for head in 0..grid.heads {
        for i in 0..grid.query_blocks {
            let (first, rows) = grid.query_block(i);
            let row0 = head * grid.s + first;
            panel_pieces(
                grid.tile(head, i),
                Place::at(buffers.queries, 0),
                (0, rows * dp),
                rows,
                (row0, 0),
                (row0 + rows, grid.d),
                eb,
                &mut q,
            );
        }
        for (block, &(first_key, keys)) in grid.key_blocks().iter().enumerate() {
            let (tile, slot) = grid.home(head, block as u32);
            let kp = keys.div_ceil(16) * 16;
            let key0 = head * grid.t + first_key;
            transposed_panel_pieces(
                tile,
                Place::at(buffers.key_homes, slot * k_slot),
                (key0, keys),
                (grid.d, dp),
                eb,
                &mut k,
            );
            panel_pieces(
                tile,
                Place::at(buffers.value_homes, slot * v_slot),
                (0, kp * ep),
                kp,
                (key0, 0),
                (key0 + keys, grid.e),
                eb,
                &mut v,
            );
        }
    }
    [q, k, v]
}

/// The host pieces writing rows `[key0, key0 + keys)` of a row-major tensor of `d` columns
/// transposed into AMP-right order at `place` (`dp` panel rows, the keys as columns in
/// 16-column groups: element (kk, j) at `((j / 16) * dp + kk) * 16 + j % 16` is tensor
/// element `(key0 + j) * d + kk`): one piece of strided single-element runs per panel row,
/// zeros for the padding keys and rows.
fn transposed_panel_pieces(
    tile: u32,
    place: Place,
    (key0, keys): (u32, u32),
    (d, dp): (u32, u32),
    eb: u32,
    out: &mut Vec<HostPiece>,
) {
    for g in 0..keys.div_ceil(16) {
        let real = (keys - g * 16).min(16);
        for kk in 0..dp {
            let at = Place::at(place.buffer, place.offset + ((g * dp + kk) * 16) * eb);
            if kk >= d {
                out.push(HostPiece::zeros(tile, at, 16 * eb));
                continue;
            }
            out.push(HostPiece {
                tile,
                place: at,
                tensor_offset: (u64::from(key0 + g * 16) * u64::from(d) + u64::from(kk))
                    * u64::from(eb),
                bytes: real * eb,
                runs: real,
                stride: if real > 1 {
                    u64::from(d) * u64::from(eb)
                } else {
                    0
                },
                pad: 0,
            });
            if real < 16 {
                out.push(HostPiece::zeros(
                    tile,
                    Place::at(at.buffer, at.offset + real * eb),
                    (16 - real) * eb,
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategies::split_gemm::tests::written;

    /// Keys 3..23 of a 5-wide tensor, transposed into AMP-right order with 16 panel rows
    /// (element (kk, j) at `((j / 16) * 16 + kk) * 16 + j % 16` is key 3 + j's element kk):
    /// the second group's last 12 keys and the rows past 5 are zeros, nothing else.
    #[test]
    fn transposed_pieces_place_each_key_element_once() {
        let (key0, keys, d, dp, eb) = (3u32, 20u32, 5u32, 16u32, 2u32);
        let mut pieces = Vec::new();
        transposed_panel_pieces(7, Place::at(1, 64), (key0, keys), (d, dp), eb, &mut pieces);
        let got = written(&pieces, eb);
        assert_eq!(got.len() as u32, 2 * dp * 16);
        for g in 0..2 {
            for kk in 0..dp {
                for lane in 0..16 {
                    let j = g * 16 + lane;
                    let at = 32 + (g * dp + kk) * 16 + lane;
                    let want = (j < keys && kk < d).then(|| u64::from((key0 + j) * d + kk));
                    assert_eq!(got[&at], want, "group {g} row {kk} lane {lane}");
                }
            }
        }
        assert!(pieces.iter().all(|piece| piece.tile == 7));
    }
}
