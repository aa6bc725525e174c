//! Keys split over tiles (`strategies::attention::KeySplit`): every tile of a query block runs
//! the column formulation over its split's keys (the block's query groups packed by its tiles
//! in turn when it has several) and leaves its output as the formulation does (whole 16-query
//! blocks) or finished into f32 rows; one exchange phase brings each merging tile its rows of
//! every split (with their maxima and sums) and the merge writes the result, a row grid over
//! the stacked heads.

use super::columns::{ColumnInputs, QuerySource};
use super::streamed::WaveSlot;
use super::*;

impl Lowering<'_> {
    /// `attention_flash` on `[batch-heads, query blocks, key splits]` (see the module docs).
    pub(super) fn attention_split_keys(
        &mut self,
        attention: &AttentionOp,
        plan: &AttentionPlan,
        inputs: &AttentionInputs,
    ) -> Result<(), LowerError> {
        let AttentionOp {
            index,
            batches,
            sizes: (s, _, t, ev),
            precision,
            ..
        } = *attention;
        let panels = t.div_ceil(16);
        let (gb, gs, gk) = match plan.grid.as_slice() {
            &[gb, gs, gk] => (gb, gs, gk),
            _ => (0, 0, 0),
        };
        let key_block = match plan.schedule {
            AttentionSchedule::Flash { key_block } => key_block,
            _ => 0,
        };
        let tiles = u64::from(gb) * u64::from(gs) * u64::from(gk);
        if gb != batches
            || gs == 0
            || !s.is_multiple_of(gs)
            || !(2..=panels).contains(&gk)
            || tiles > u64::from(self.tiles)
            || key_block < 16
            || !key_block.is_multiple_of(16)
            || key_block > 16 * panels
        {
            return Err(attention_not_followed(index, plan, format!(
                "keys split over tiles need attention_flash on grid [{batches}, query blocks dividing {s}, 2 to {panels} splits] within {} tiles, its key block whole 16-key panels within the keys",
                self.tiles
            )));
        }
        let (keys, values) = inputs.keys_and_values(index)?;
        let queries = match &inputs.queries {
            AttentionInput::Device(blocks) => QuerySource::Device(blocks),
            AttentionInput::Host(value) => QuerySource::Host(*value),
        };
        let mut shape = attention.streamed(s / gs, key_block);
        shape.splits = gk;
        shape.keys_home = distributed_keys(&shape, batches, gs * gk, (keys, values));
        if !shape.keys_home.is_some_and(|keys| keys.tile.columns) {
            return Err(attention_not_followed(index, plan, format!(
                "its keys and values must be homed over each head's {} tiles and its tiles take the column formulation (f16 or f32, one call of weights)",
                gs * gk
            )));
        }
        let split = KeySplit {
            heads: gb,
            queries: s,
            query_blocks: gs,
            splits: gk,
            width: ev,
            precision,
        };
        let rows = shape.query_rows;
        let work_tiles: Vec<u32> = (0..split.tiles()).collect();
        let slots: Vec<WaveSlot> = work_tiles
            .iter()
            .map(|&tile| WaveSlot {
                tile,
                head: tile / gk / gs,
                first_query: tile / gk % gs * rows,
                split: tile % gk,
            })
            .collect();
        // Finished into f32 rows first unless the merge reads the panels.
        let partial = (!split.panels())
            .then(|| self.op_buffer(index, "split_out", &work_tiles, rows * ev * 4));
        let inputs = ColumnInputs {
            queries,
            keys,
            values,
        };
        let op = self.column_op(&shape, inputs, (&work_tiles, &slots), partial)?;
        let finish = self.column_blocks(&op, &slots);
        if !finish.is_empty() {
            let provenance = format!("{}.split_finish", self.provenance(index));
            self.push_compute(provenance, finish);
        }
        // The merge reads each split's output in panels, or its finished f32 rows.
        let [row_max, row_sum, output] = op.state();
        let outputs = partial.unwrap_or(output);
        self.merge_splits(attention, &split, [outputs, row_max, row_sum]);
        info!(
            op = index,
            tiles = split.tiles(),
            query_rows = rows,
            splits = gk,
            key_block = key_block.min(shape.tile().split_range(0).1),
            key_blocks = shape.tile().key_blocks().len(),
            result_rows = split.result_rows(),
            query_packing = if shape.tile().shares_query_packing() {
                "shared by the block's tiles"
            } else {
                "per tile"
            },
            "attention lowered with its keys split over tiles (column formulation, cross-tile merge)"
        );
        Ok(())
    }

    /// The cross-tile merge: one exchange phase brings every merging tile its rows of each
    /// split's output (`sources`: the outputs, maxima and sums, as [`KeySplit::piece_moves`]
    /// lays them out), then the merge writes its rows of the result (a row grid of
    /// `result_rows` per tile).
    fn merge_splits(&mut self, attention: &AttentionOp, split: &KeySplit, sources: [BufferId; 3]) {
        let (index, (s, .., ev)) = (attention.index, attention.sizes);
        let result_grid = row_grid(attention.batches * s, ev, split.result_rows());
        let owners = result_grid.tiles();
        let [o_bytes, m_bytes, l_bytes] = split.merge_buffer_bytes();
        let places = [
            ("merge_o", o_bytes),
            ("merge_m", m_bytes),
            ("merge_l", l_bytes),
        ]
        .map(|(what, bytes)| self.op_buffer(index, what, &owners, bytes));
        let result = self.result_buffer(index, &result_grid, attention.precision);
        let mut transfers = Transfers::default();
        for owner in 0..split.result_tiles() {
            split.for_each_merge_piece(owner, |piece| {
                let moves = split.piece_moves(&piece);
                for ((from, to), (from_offset, to_offset, bytes)) in
                    sources.iter().zip(&places).zip(moves)
                {
                    transfers.add(
                        piece.source,
                        Place::at(*from, from_offset),
                        owner,
                        Place::at(*to, to_offset),
                        bytes,
                    );
                }
            });
        }
        let mut runs = self.flush(transfers);
        let merge = self.program.kernel(split.merge());
        let [merge_o, merge_m, merge_l] = places;
        runs.extend(owners.iter().map(|&tile| {
            Run {
                tile,
                kernel: merge,
                args: [merge_o, merge_m, merge_l, result]
                    .map(|buffer| address(buffer, 0))
                    .to_vec(),
            }
        }));
        let blocks = Blocks {
            grid: result_grid,
            buffer: result,
            precision: attention.precision,
        };
        self.finish(index, "ipu.attention", runs, attention.out, blocks);
    }
}
