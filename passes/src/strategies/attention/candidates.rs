//! Candidates of `ipu.attention`: whole score rows, keys streamed in blocks (flash), or
//! materialized on a query x key grid, each priced from its tiles' kernel calls
//! ([`StreamedTile`], [`MaterializedTile`]).

use ipu_device::{MemoryClass, Target};
use ipu_dialects::plan::{AttentionPlan, AttentionSchedule, OperatorPlan};

use super::{
    columns_key_block, heads_per_tile, materialized_fits, query_blocks_allowed, split_grids,
    streamed_key_block, wave_key_block, DistributedKeys, KeySplit, MaterializedTile, RaggedHeads,
    StreamedTile,
};
use crate::strategies::local_gemm::pad16;
use crate::tiling::candidate::{
    all_valid, divisors, grids, op_vector_precision, u32_of, Candidate, InternalPhase, Need,
};
use crate::tiling::layout::{block_size, canonical_dims, split_is_exact_cover, PhaseLoad, Shards};
use crate::tiling::{Graph, MemoryUse, Op, PlannerOptions, ValueFormat};

/// Attention `softmax(q k^T) v` per batch-head. `attention_blocked` (flash-style: each tile
/// owns a block of query rows and streams every key and value through its own score block,
/// so the S x T matrix never exists as a whole); `attention_materialized` (scores computed on
/// a (query, key) tile grid, exchanged to whole rows for the softmax, then multiplied by v).
/// Every plan is priced with the lowering's own kernel model (whole score rows per tile, the
/// materialized grid, or, when a tile's whole rows do not fit, the keys streamed in blocks
/// through the online-softmax kernels: `attention_flash`), and generated only in the shapes
/// the lowering follows. A `key_block` a plan constraint pins (a replay's) replaces the
/// streamed plans' own and makes every query-block grid streamed; a pin that is not a whole
/// number of 16-key panels within the keys gives no streamed candidate.
pub fn candidates(
    graph: &Graph,
    op: &Op,
    causal: bool,
    active: &[u32],
    (options, key_block): (&PlannerOptions, Option<u32>),
    target: &Target,
) -> Vec<Candidate> {
    let shape = AttentionShape::of(graph, op, causal, options);
    let (q, s, t) = (shape.q, shape.q[1], shape.k[1]);
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
        let shaped: Vec<Vec<u32>> = match (shape.heads_per_tile, materialized) {
            (None, false) => head_grids(q[0], s, active),
            (None, true) => grids(active, &shapes),
            (Some(heads), false) => vec![vec![u32_of(q[0].div_ceil(u64::from(heads))), 1]],
            (Some(_), true) => Vec::new(),
        };
        for grid in shaped {
            // Query-block grids are also offered with the column formulation's larger key
            // block (a candidate of its own: more memory, fewer blocks), unless one is pinned.
            let wide: &[bool] = if materialized || key_block.is_some() {
                &[false]
            } else {
                &[false, true]
            };
            out.extend(wide.iter().filter_map(|&wide| {
                let settings = (options, key_block, wide);
                grid_candidate(&shape, grid.clone(), materialized, settings, target)
            }));
        }
    }
    if shape.heads_per_tile.is_none() {
        let most = active.iter().copied().max().unwrap_or(1);
        for grid in split_grids(u32_of(q[0]), u32_of(s), u32_of(t), most) {
            out.extend(split_candidate(&shape, grid, key_block, target));
        }
    }
    out
}

/// The candidate with the keys split over tiles on `grid` (`[batch-heads, query blocks,
/// splits]`, [`KeySplit`]): the column formulation on every tile over its split's keys (in
/// the column formulation's key block, or the pinned one), keys and values homed over each
/// head's tiles and multicast to each split's tiles, then the merge; `None` when the
/// formulation does not take the tile or the queries do not split exactly.
fn split_candidate(
    shape: &AttentionShape,
    grid: Vec<u32>,
    pinned_key_block: Option<u32>,
    target: &Target,
) -> Option<Candidate> {
    let (s, d, t, e) = (shape.q[1], shape.q[2], shape.k[1], shape.v[2]);
    let [gb, gs, gk] = <[u32; 3]>::try_from(grid.as_slice()).ok()?;
    if u64::from(gb) != shape.q[0] || !s.is_multiple_of(u64::from(gs)) {
        return None;
    }
    let precision = shape.element;
    let mut tile = StreamedTile {
        rows: u32_of(s) / gs,
        d: u32_of(d),
        keys: u32_of(t),
        width: u32_of(e),
        key_block: 16,
        precision,
        causal: shape.causal,
        home_keys: None,
        columns: false,
        splits: gk,
    };
    let most = tile.split_range(0).1;
    tile.key_block = match pinned_key_block {
        Some(block) if block >= 16 && block.is_multiple_of(16) && block <= pad16(tile.keys) => {
            block
        }
        Some(_) => return None,
        None => columns_key_block((tile.rows, tile.d, most, tile.width), precision)?,
    };
    let keys = DistributedKeys::of(gb, gs * gk, tile)?.packed();
    if !keys.tile.columns {
        return None;
    }
    let tile = keys.tile;
    let split = KeySplit {
        heads: gb,
        queries: u32_of(s),
        query_blocks: gs,
        splits: gk,
        width: tile.width,
        precision: shape.vector,
    };
    let mut kernels = tile.column_kernels();
    kernels.push(split.merge());
    if !all_valid(&kernels) {
        return None;
    }
    let (mut phases, key_cycles, key_rows) = keys.exchange_phases(target);
    let (merge_phases, merge_cycles, merge_rows) = split.exchange_phases(target);
    phases.extend(merge_phases);
    // Keys and values homed as a query-block grid's; the queries each tile fetches and the
    // merged result's row grid are the split's own.
    let (mut operand_needs, mut result_need) = needs(shape, &grid, false, Some(keys.home_tiles));
    let bytes = shape.vector.bytes();
    operand_needs[0].shards = split.query_need(&tile, shape.q, bytes);
    result_need.shards = Shards::needed_by_grid(
        shape.out,
        bytes,
        &[gb, split.result_blocks()],
        &[Some(0), Some(1)],
    );
    let plan = OperatorPlan::Attention(AttentionPlan {
        schedule: AttentionSchedule::Flash {
            key_block: tile.key_block,
        },
        grid: grid.clone(),
        tiles: split.tiles(),
        causal: shape.causal,
        precision: shape.vector,
    });
    Some(Candidate {
        compute_cycles: tile.cycles(target) + split.merge_cycles(target),
        internal_exchange_cycles: key_cycles + merge_cycles,
        internal_row_bytes: key_rows + merge_rows,
        internal_phases: phases,
        k_steps: u32::try_from(tile.key_blocks().len()).unwrap_or(u32::MAX),
        step_slices: vec![None, None, None],
        transient: MemoryUse::of(
            tile.working_bytes() + split.merge_bytes(),
            MemoryClass::Standard,
        ),
        kernels,
        ..Candidate::new(plan, split.tiles(), operand_needs, result_need)
    })
}

/// The `[batch-heads, query blocks]` grids of the query-block plans: one batch-head per grid
/// row and every exact split of its `queries` whose `heads x blocks` tiles fit the largest
/// active count (the op runs on those tiles; it need not fill the count), plus the ragged
/// splits (blocks of `ceil(queries / blocks)` rows, the last shorter: [`RaggedHeads`]) that
/// fill the count, half of it and a quarter of it.
fn head_grids(heads: u64, queries: u64, active: &[u32]) -> Vec<Vec<u32>> {
    let most = u64::from(active.iter().copied().max().unwrap_or(1));
    let (Ok(heads), Ok(queries)) = (u32::try_from(heads), u32::try_from(queries)) else {
        return Vec::new();
    };
    let fits = |blocks: u32| u64::from(heads) * u64::from(blocks) <= most;
    let mut blocks: Vec<u32> = divisors(queries).into_iter().filter(|&b| fits(b)).collect();
    let widest = u32::try_from(most / u64::from(heads.max(1)))
        .unwrap_or(u32::MAX)
        .min(queries);
    for share in [1, 2, 4] {
        // The fewest blocks of the same rows: exact cover, no empty block.
        let rows = queries.div_ceil((widest / share).max(1));
        let count = queries.div_ceil(rows);
        if count > 0 && fits(count) && !blocks.contains(&count) {
            blocks.push(count);
        }
    }
    blocks.sort_unstable();
    blocks.into_iter().map(|b| vec![heads, b]).collect()
}

/// What every candidate of one attention op shares.
struct AttentionShape {
    /// Canonical `[batch-heads, rows, columns]` of the query, key, value and result.
    q: [u64; 3],
    k: [u64; 3],
    v: [u64; 3],
    out: [u64; 3],
    /// The query's element type: the lowering computes in it (one for q, k, v and the
    /// result), whatever the policy.
    element: ipu_device::Precision,
    /// The element type the planner gives the op's values (the same for a well-typed op).
    vector: ipu_device::Precision,
    causal: bool,
    heads_per_tile: Option<u32>,
    /// The formats the lowering fetches the query, key and value in (row-major, in their own
    /// element type; the tile-local GEMMs pack them): queries and keys in standard memory, the
    /// values in interleaved.
    operand_formats: [ValueFormat; 3],
}

impl AttentionShape {
    fn of(graph: &Graph, op: &Op, causal: bool, options: &PlannerOptions) -> AttentionShape {
        let dims = |value: usize| canonical_dims(&graph.values[value].shape);
        let q = dims(op.operands[0]);
        let format = |position: usize, memory| ValueFormat {
            memory,
            ..ValueFormat::row_major(graph.values[op.operands[position]].element)
        };
        AttentionShape {
            q,
            k: dims(op.operands[1]),
            v: dims(op.operands[2]),
            out: dims(op.results[0]),
            element: graph.values[op.operands[0]].element,
            vector: op_vector_precision(graph, op, options.precision),
            causal,
            heads_per_tile: heads_per_tile(u32_of(q[0]), options.tiles),
            operand_formats: [
                format(0, MemoryClass::Standard),
                format(1, MemoryClass::Standard),
                format(2, MemoryClass::Interleaved),
            ],
        }
    }
}

/// The candidate on `grid` (`[batch-heads, query blocks]`, or with a key-block axis when
/// `materialized`), priced from its tiles' calls; `None` for a shape the lowering does not take.
/// `wide`: streamed in the column formulation's larger key block ([`columns_key_block`]), and
/// only when that is larger than the streamed plan's own and the tile takes the formulation.
fn grid_candidate(
    shape: &AttentionShape,
    grid: Vec<u32>,
    materialized: bool,
    (options, pinned_key_block, wide): (&PlannerOptions, Option<u32>, bool),
    target: &Target,
) -> Option<Candidate> {
    let (q, s, d, t, e) = (shape.q, shape.q[1], shape.q[2], shape.k[1], shape.v[2]);
    let precision = shape.element;
    let tiles: u32 = grid.iter().product();
    let (gb, gs) = (grid[0], grid[1]);
    let gt = if materialized { grid[2] } else { 1 };
    let one_head_per_row = shape.heads_per_tile.is_none();
    // Queries that do not split exactly run in ragged blocks (the last shorter), streamed, with
    // each head's queries and result homed whole ([`RaggedHeads`]).
    let ragged = !s.is_multiple_of(u64::from(gs));
    let streamable = !materialized && one_head_per_row;
    if (one_head_per_row && u64::from(gb) != q[0])
        || !query_blocks_allowed(u32_of(s), gs, streamable)
    {
        return None;
    }
    let (bb, sb, tb) = (block_size(q[0], gb), block_size(s, gs), block_size(t, gt));
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
        precision,
        causal: shape.causal,
    };
    let mut internal = PhaseLoad::new(tiles);
    let mut internal_phases = Vec::new();
    if materialized {
        // The shapes the lowering's materialized attention takes (one batch-head per grid
        // row, exact query and key splits), the scores resharded to whole rows.
        let fits = materialized_fits(
            (u32_of(q[0]), u32_of(s), u32_of(t)),
            (gb, gs, gt),
            options.tiles,
        ) && tile.fits(target);
        if !fits || !split_is_exact_cover(s, gs * gt) {
            return None;
        }
        let scores_home = Shards::needed_by_grid(
            [q[0], s, t],
            shape.vector.bytes(),
            &grid,
            &[Some(0), Some(1), Some(2)],
        );
        let scores_rows = Shards::homed([q[0], s, t], [gb, gs * gt, 1], shape.vector.bytes(), 0);
        internal.add(&scores_home, &scores_rows);
        internal_phases.push(InternalPhase::Reshard {
            from: scores_home,
            to: scores_rows,
        });
    }
    // Priced from the calls the lowering runs per tile; whole score rows per tile are the
    // materialized case with one key block (key_rows = t, rows_after = sb).
    let mut kernels = tile.kernels();
    if !all_valid(&kernels) {
        return None;
    }
    let mut compute = tile.cycles(target);
    let mut score_bytes =
        (bb * sb * tb + 2 * bb * rows_after * t) * u64::from(shape.vector.bytes());
    let mut schedule = if materialized {
        AttentionSchedule::Materialized
    } else {
        AttentionSchedule::Blocked
    };
    // A tile whose whole score rows, keys and values do not fit streams the keys in blocks
    // (flash-style, online softmax), one exchange phase per key block; several heads per tile
    // run in waves.
    let sizes = (u32_of(sb), u32_of(d), u32_of(t), u32_of(e));
    let mut k_steps = 1;
    let mut step_slices = Vec::new();
    let mut keys_exchange = None;
    // Tiles homing each head's keys and values when they are distributed.
    let mut distributed = None;
    let mut panel_bytes = 0;
    let streamed = match (pinned_key_block, shape.heads_per_tile) {
        (Some(block), _) if materialized => Some(block),
        (Some(block), _) => {
            if block < 16 || !block.is_multiple_of(16) || block > sizes.2.next_multiple_of(16) {
                return None;
            }
            Some(block)
        }
        (None, Some(_)) if wide => return None,
        (None, Some(_)) => Some(wave_key_block(sizes, precision)),
        (None, None) if ragged => Some(wave_key_block(sizes, precision)),
        (None, None) => streamed_key_block(sizes, precision),
    };
    let streamed = match (wide, streamed) {
        (false, streamed) => streamed,
        (true, Some(own)) => Some(columns_key_block(sizes, precision).filter(|&w| w > own)?),
        (true, None) => return None,
    };
    if let (false, true, Some(block)) = (materialized, bb == 1 || !one_head_per_row, streamed) {
        schedule = AttentionSchedule::Flash { key_block: block };
        let mut streamed_tile = StreamedTile {
            rows: sizes.0,
            d: sizes.1,
            keys: sizes.2,
            width: sizes.3,
            key_block: block,
            precision,
            causal: shape.causal,
            home_keys: None,
            columns: false,
            splits: 1,
        };
        compute = match shape.heads_per_tile {
            Some(heads) => streamed_tile.waves_cycles(heads, target),
            None => streamed_tile.cycles(target),
        };
        // One batch-head per grid row: its keys and values are homed over its tiles and each
        // key block multicast to them (no tile holds a whole head).
        if let Some(keys) = DistributedKeys::of(gb, gs, streamed_tile).filter(|_| one_head_per_row)
        {
            let keys = keys.packed();
            if keys.panels && !keys.tile.columns {
                // Each panel's tile gathers its 16 keys before packing them (the column
                // formulation counts its panel buffers in its working bytes).
                panel_bytes = 16 * u64::from(keys.tile.d) * u64::from(precision.bytes());
            }
            streamed_tile = keys.tile;
            compute = streamed_tile.cycles(target);
            let (phases, cycles, row_bytes) = keys.exchange_phases(target);
            internal_phases.extend(phases);
            keys_exchange = Some((cycles, row_bytes));
            distributed = Some(keys.home_tiles);
        }
        if wide && !distributed.is_some_and(|_| streamed_tile.columns) {
            return None;
        }
        if ragged {
            let heads = RaggedHeads {
                heads: gb,
                tiles_per_head: gs,
                queries: u32_of(s),
                d: u32_of(d),
                width: u32_of(e),
                precision,
            };
            let (phases, cycles, row_bytes) = heads.exchange_phases(target);
            internal_phases.extend(phases);
            let (keys_cycles, keys_rows) = keys_exchange.unwrap_or((0, 0));
            let key_phases = u64::from(u32_of(t.div_ceil(u64::from(block))) - 1)
                * u64::from(target.exchange.phase_cycles.value);
            keys_exchange = Some((cycles + keys_cycles.max(key_phases), row_bytes + keys_rows));
        }
        k_steps =
            u32_of(t.div_ceil(u64::from(block)) * u64::from(shape.heads_per_tile.unwrap_or(1)));
        if shape.heads_per_tile.is_none() {
            // The queries move with the first key block; each key block's phase moves that
            // block of the keys and values (the key axis of [batch-heads, keys, width]).
            // Keys and values homed over the head's tiles are moved there first, whole (the
            // key blocks are multicast from there in the internal phases).
            let keys = distributed.is_none().then_some((1, u64::from(block)));
            step_slices = vec![None, keys, keys];
        }
        if streamed_tile.columns {
            kernels = streamed_tile.column_kernels();
        } else {
            kernels = vec![streamed_tile.update(block.min(sizes.2))];
            kernels.extend(streamed_tile.pack_home().into_iter().flatten());
        }
        if !all_valid(&kernels) {
            return None;
        }
        score_bytes = streamed_tile.working_bytes() + panel_bytes;
    }
    let plan = OperatorPlan::Attention(AttentionPlan {
        schedule,
        grid: grid.clone(),
        tiles,
        causal: shape.causal,
        precision: shape.vector,
    });
    let panel_phases = keys_exchange.map_or_else(
        || u64::from(k_steps - 1) * u64::from(target.exchange.phase_cycles.value),
        |(cycles, _)| cycles,
    );
    let (mut operand_needs, mut result_need) = needs(shape, &grid, materialized, distributed);
    if ragged {
        // Each head's queries and result whole on tile `head`.
        let bytes = shape.vector.bytes();
        operand_needs[0].shards = Shards::homed(shape.q, [gb, 1, 1], bytes, 0);
        result_need.shards = Shards::homed(shape.out, [gb, 1, 1], bytes, 0);
    }
    Some(Candidate {
        compute_cycles: compute,
        internal_exchange_cycles: internal.cycles(target) + panel_phases,
        // Every phase's rows are in a tile's exchange code at once.
        internal_row_bytes: internal.max_row_bytes()
            + keys_exchange.map_or(0, |(_, row_bytes)| row_bytes),
        internal_phases,
        k_steps,
        step_slices,
        transient: MemoryUse::of(score_bytes, MemoryClass::Standard),
        kernels,
        ..Candidate::new(plan, tiles, operand_needs, result_need)
    })
}

/// The blocks of the query, key and value each tile of `grid` fetches, and the result blocks
/// it leaves (a row grid after a materialized attention's reshard). With `home_tiles` the keys
/// and values are homed split over that many tiles per head ([`DistributedKeys`]: a row grid
/// `[batch-heads, home_tiles]`) and fetched block by block from there.
fn needs(
    shape: &AttentionShape,
    grid: &[u32],
    materialized: bool,
    home_tiles: Option<u32>,
) -> (Vec<Need>, Need) {
    let bytes = shape.vector.bytes();
    let kv = |shape: [u64; 3]| match home_tiles {
        Some(tiles) => Shards::needed_by_grid(shape, bytes, &[grid[0], tiles], &[Some(0), Some(1)]),
        None if materialized => {
            Shards::needed_by_grid(shape, bytes, grid, &[Some(0), None, Some(1)])
        }
        None => Shards::needed_by_grid(shape, bytes, grid, &[Some(0), None]),
    };
    // The value rows a tile multiplies by are all keys of its batch (or, split, its share).
    let values = match home_tiles {
        Some(_) => kv(shape.v),
        None => Shards::needed_by_grid(shape.v, bytes, grid, &[Some(0), None, None][..grid.len()]),
    };
    let shards = [
        Shards::needed_by_grid(shape.q, bytes, grid, &[Some(0), Some(1), None]),
        kv(shape.k),
        values,
    ];
    let operands = shards
        .into_iter()
        .zip(shape.operand_formats)
        .map(|(shards, format)| Need { shards, format })
        .collect();
    let output = if materialized {
        Shards::homed(shape.out, [grid[0], grid[1] * grid[2], 1], bytes, 0)
    } else {
        Shards::needed_by_grid(shape.out, bytes, grid, &[Some(0), Some(1)])
    };
    (
        operands,
        Need {
            shards: output,
            format: ValueFormat::row_major(shape.vector),
        },
    )
}
