//! Candidates of `ipu.attention`: whole score rows, keys streamed in blocks (flash), or
//! materialized on a query x key grid, each priced from its tiles' kernel calls
//! ([`StreamedTile`], [`MaterializedTile`]).

use ipu_device::{MemoryClass, Target};
use ipu_dialects::plan::{AttentionPlan, AttentionSchedule, OperatorPlan};

use super::{
    heads_per_tile, materialized_fits, streamed_key_block, wave_key_block, MaterializedTile,
    StreamedTile,
};
use crate::element;
use crate::planner::candidates::{
    all_valid, grids, op_vector_precision, u32_of, Candidate, InternalPhase, Need,
};
use crate::planner::layout::{block_size, canonical_dims, split_is_exact_cover, PhaseLoad, Shards};
use crate::planner::{Graph, MemoryUse, Op, PlannerOptions, ValueFormat};

/// Attention `softmax(q k^T) v` per batch-head. `attention_blocked` (flash-style: each tile
/// owns a block of query rows and streams every key and value through its own score block,
/// so the S x T matrix never exists as a whole); `attention_materialized` (scores computed on
/// a (query, key) tile grid, exchanged to whole rows for the softmax, then multiplied by v).
/// Every plan is priced with the lowering's own kernel model (whole score rows per tile, the
/// materialized grid, or, when a tile's whole rows do not fit, the keys streamed in blocks
/// through the online-softmax kernels: `attention_flash`), and generated only in the shapes
/// the lowering follows.
pub fn candidates(
    graph: &Graph,
    op: &Op,
    causal: bool,
    active: &[u32],
    options: &PlannerOptions,
    target: &Target,
) -> Vec<Candidate> {
    let q = canonical_dims(&graph.values[op.operands[0]].shape);
    let k = canonical_dims(&graph.values[op.operands[1]].shape);
    let v = canonical_dims(&graph.values[op.operands[2]].shape);
    let out_dims = canonical_dims(&graph.values[op.results[0]].shape);
    let (s, d, t, e) = (q[1], q[2], k[1], v[2]);
    // The attention lowering computes in the operands' own element type (one for q, k, v and
    // the result), whatever the policy.
    let vector = op_vector_precision(graph, op, options.precision);
    let input = vector;
    // The lowering fetches each operand's rows as they are (row-major, in its own element
    // type; the tile-local GEMMs pack them, priced in the kernel model): queries and keys in
    // standard memory, the values in interleaved.
    let in_format = |position: usize, memory| ValueFormat {
        memory,
        ..ValueFormat::row_major(graph.values[op.operands[position]].element)
    };
    let out_format = ValueFormat::row_major(vector);
    let mut out = Vec::new();
    for materialized in [false, true] {
        let shapes: Vec<u64> = if materialized {
            vec![q[0], s, t]
        } else {
            vec![q[0], s]
        };
        // The lowering runs one batch-head per grid row and splits the queries exactly. With
        // more batch-heads than tiles it runs `ceil(heads / tiles)` whole heads per tile, one
        // after the other, keys streamed: only that shape (`attention_flash` on grid
        // [ceil(heads / per tile), 1]) is priced then.
        let heads_per_tile = heads_per_tile(u32_of(q[0]), options.tiles);
        let one_head_per_row = heads_per_tile.is_none();
        let shaped: Vec<Vec<u32>> = match (heads_per_tile, materialized) {
            (None, _) => grids(active, &shapes),
            (Some(heads), false) => vec![vec![u32_of(q[0].div_ceil(u64::from(heads))), 1]],
            (Some(_), true) => Vec::new(),
        };
        for grid in shaped {
            let tiles: u32 = grid.iter().product();
            let (gb, gs) = (grid[0], grid[1]);
            let gt = if materialized { grid[2] } else { 1 };
            if (one_head_per_row && u64::from(gb) != q[0]) || !s.is_multiple_of(u64::from(gs)) {
                continue;
            }
            let bb = block_size(q[0], gb);
            let sb = block_size(s, gs);
            let tb = block_size(t, gt);
            let mut internal = PhaseLoad::new(tiles);
            let mut internal_phases = Vec::new();
            let rows_after = if materialized {
                block_size(s, gs * gt).max(1)
            } else {
                sb
            };
            let tile = MaterializedTile {
                rows: u32_of(sb),
                d: u32_of(d),
                key_rows: u32_of(tb),
                keys: u32_of(t),
                width: u32_of(e),
                rows_after: u32_of(rows_after),
                precision: graph.values[op.operands[0]].element,
                causal,
            };
            if materialized {
                // The shapes the lowering's materialized attention takes (one batch-head
                // per grid row, exact query and key splits).
                let fits = materialized_fits(
                    (u32_of(q[0]), u32_of(s), u32_of(t)),
                    (gb, gs, gt),
                    options.tiles,
                ) && tile.fits(target);
                if !fits || !split_is_exact_cover(s, gs * gt) {
                    continue;
                }
                let scores_home = Shards::needed_by_grid(
                    [q[0], s, t],
                    vector.bytes(),
                    &grid,
                    &[Some(0), Some(1), Some(2)],
                );
                let scores_rows = Shards::homed([q[0], s, t], [gb, gs * gt, 1], vector.bytes(), 0);
                internal.add(&scores_home, &scores_rows);
                internal_phases.push(InternalPhase::Reshard {
                    from: scores_home,
                    to: scores_rows,
                });
            }
            // Priced from the calls the lowering runs per tile; whole score rows per tile are the
            // materialized case with one key block (key_rows = t, rows_after = sb).
            let mut kernels = tile.kernels();
            let mut compute = tile.cycles(target);
            if !all_valid(&kernels) {
                continue;
            }
            let q_need = Shards::needed_by_grid(q, input.bytes(), &grid, &[Some(0), Some(1), None]);
            let kv_axes: Vec<Option<usize>> = if materialized {
                vec![Some(0), None, Some(1)]
            } else {
                vec![Some(0), None]
            };
            let k_need = Shards::needed_by_grid(k, input.bytes(), &grid, &kv_axes);
            // The value rows a tile multiplies by are all keys of its batch.
            let v_need = Shards::needed_by_grid(
                v,
                input.bytes(),
                &grid,
                &[Some(0), None, None][..grid.len()],
            );
            let output = if materialized {
                Shards::homed(out_dims, [gb, gs * gt, 1], vector.bytes(), 0)
            } else {
                Shards::needed_by_grid(out_dims, vector.bytes(), &grid, &[Some(0), Some(1)])
            };
            let mut score_bytes = bb * sb * tb * u64::from(vector.bytes())
                + 2 * bb * rows_after * t * u64::from(vector.bytes());
            let mut schedule = if materialized {
                AttentionSchedule::Materialized
            } else {
                AttentionSchedule::Blocked
            };
            // A tile whose whole score rows, keys and values do not fit streams the keys in
            // blocks (flash-style, online softmax): priced with the lowering's own model, one
            // exchange phase per key block.
            let element = graph.values[op.operands[0]].element;
            let sizes = (u32_of(sb), u32_of(d), u32_of(t), u32_of(e));
            let mut k_steps = 1;
            // Several heads per tile: whole heads in waves (their own model).
            let streamed = match heads_per_tile {
                Some(_) => Some(wave_key_block(sizes, element)),
                None => streamed_key_block(sizes, element),
            };
            if let (false, true, Some(block)) =
                (materialized, bb == 1 || !one_head_per_row, streamed)
            {
                let blocks = t.div_ceil(u64::from(block));
                schedule = AttentionSchedule::Flash { key_block: block };
                let streamed_tile = StreamedTile {
                    rows: sizes.0,
                    d: sizes.1,
                    keys: sizes.2,
                    width: sizes.3,
                    key_block: block,
                    precision: element,
                    causal,
                };
                compute = match heads_per_tile {
                    Some(heads) => streamed_tile.waves_cycles(heads, target),
                    None => streamed_tile.cycles(target),
                };
                k_steps = u32_of(blocks * u64::from(heads_per_tile.unwrap_or(1)));
                kernels = vec![streamed_tile.update(block.min(sizes.2))];
                let eb = u64::from(element.bytes());
                score_bytes = (sb * u64::from(block) + u64::from(block) * (2 * d + e)) * eb
                    + sb * e * 4
                    + 8 * sb;
            }
            let plan = OperatorPlan::Attention(AttentionPlan {
                schedule,
                grid: grid.clone(),
                tiles,
                causal,
                precision: element::element(input),
            });
            let panel_phases =
                u64::from(k_steps - 1) * u64::from(target.exchange.phase_cycles.value);
            out.push(Candidate {
                compute_cycles: compute,
                internal_exchange_cycles: internal.cycles(target) + panel_phases,
                internal_row_bytes: internal.max_row_bytes(),
                internal_phases,
                k_steps,
                transient: MemoryUse::of(score_bytes, MemoryClass::Standard),
                kernels,
                ..Candidate::new(
                    plan,
                    tiles,
                    vec![
                        Need {
                            shards: q_need,
                            format: in_format(0, MemoryClass::Standard),
                        },
                        Need {
                            shards: k_need,
                            format: in_format(1, MemoryClass::Standard),
                        },
                        Need {
                            shards: v_need,
                            format: in_format(2, MemoryClass::Interleaved),
                        },
                    ],
                    Need {
                        shards: output,
                        format: out_format,
                    },
                )
            });
        }
    }
    out
}
