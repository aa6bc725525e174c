//! The split GEMM's candidates: its cheapest grids for a product over the active tile counts
//! (and a grid pinned by a constraint), each priced by [`SplitGrid::estimate`] and carrying
//! its exchange phases as explicit transfers.

use ipu_device::kernels::spec::ElementOrder;
use ipu_device::{MemoryClass, Precision, Target};
use ipu_dialects::format::PlanValue;
use ipu_dialects::plan::{GemmPlan, GemmTileGrid, OperatorPlan, Orientation};

use super::{device_split_dims, ranges_max, split_dims, SplitEnv, SplitGrid};
use crate::element;
use crate::tiling::candidate::operand_scales;
use crate::tiling::candidate::{
    generated_phases, Candidate, InternalPhase, Need, PhaseSource, PhaseTransfers,
};
use crate::tiling::layout::Shards;
use crate::tiling::{Graph, MemoryUse, Op, Origin, PlannerOptions, ValueFormat};

/// Candidates of a matmul the split GEMM lowering implements exactly
/// ([`crate::strategies::split_gemm`]): both operands host tensors in the AMP input precision, one
/// matrix each, K and N in whole 16-groups (or padded by the host: "Padding" in the module
/// docs), the result only returned; in a repeat body too (a right operand from the host is
/// then a constant or a scan's slice, streamed each iteration).
/// Each is one of the lowering's cheapest grids, priced by the lowering's own model (the
/// kernel calls and copies it emits, its exchange phases as explicit transfers), so the
/// selection's refined estimate prices the program the lowering builds. The operands' homes
/// are where the host streams them (each element once, in AMP order), so the beam moves
/// nothing before the op.
pub fn candidates(
    graph: &Graph,
    op: &Op,
    (input, scales): (Precision, [i64; 2]),
    active: &[u32],
    options: &PlannerOptions,
    target: &Target,
) -> Option<Vec<Candidate>> {
    let index = graph.index_of(op)?;
    // Taken by the ranged chains, or offered beside the general matmul with its result
    // converted to a row grid ("Row-major neighbours").
    let (dims, row_major) = match split_dims(graph, index, input) {
        Some(dims) => (dims, false),
        None => (device_split_dims(graph, index, input)?, true),
    };
    let limit = options.candidates_per_op.max(1);
    let weights = options.weight_memory.unwrap_or(MemoryClass::Interleaved);
    // The lowering's surroundings of the op (`Lowering::split_env`): A gathered from a
    // device value (live across the op: [`device_a_share`]), and a result that a later
    // split GEMM sends when anything uses it.
    let (a, c) = (op.operands[0], op.results[0]);
    let a_device = !graph.from_host(a);
    let used = graph.ops.iter().any(|o| o.operands.contains(&c));
    // Under the FP8 policy a device A (F16 partials) is cast to FP8 on its owners first, at
    // the policy's scale, into a copy that is live across the op too.
    let a_element = graph.values[a].element;
    let a_cast = a_device && a_element != input;
    let env = SplitEnv {
        weights,
        a_device,
        result: (used && !row_major).then(|| SplitEnv::chained_result_class(weights)),
        reserved: [
            if a_device {
                device_a_share(dims, options.tiles, (a_element, input))
            } else {
                0
            },
            0,
        ],
        b_resident: false,
        row_major,
    };
    // A constant B may instead stay resident: written by the host at initialization where
    // each tile reads it (no B exchange per run, its replicas' memory for the whole program).
    let b_constant = graph.values[op.operands[1]].origin == Origin::Constant;
    let envs: Vec<SplitEnv> = [false, true]
        .into_iter()
        .filter(|&resident| !resident || b_constant)
        .map(|b_resident| SplitEnv { b_resident, ..env })
        .collect();
    let scales = if a_cast {
        [options.fp8_scale.unwrap_or(0), scales[1]]
    } else {
        scales
    };
    let mut grids = Vec::new();
    for &tiles in active {
        for env in &envs {
            grids.extend(SplitGrid::ranked(dims, tiles, input, env, target, limit));
        }
    }
    if let Some(grid) = pinned_grid(index, dims, (input, &env, b_constant), options, target) {
        if !grids.contains(&grid) {
            grids.push(grid);
        }
    }
    let mut out = Vec::new();
    for grid in grids {
        let estimate = grid.estimate(input, target);
        let (phases, exchange_cycles, row_bytes) = exchange_phases(&grid, input, target);
        let (standard, interleaved) = grid.transient_bytes(input);
        let transient = MemoryUse::of(standard, MemoryClass::Standard)
            .plus(MemoryUse::of(interleaved, MemoryClass::Interleaved));
        let (gm, gn, gk) = (grid.gm, grid.gn, grid.gk);
        // The calls the lowering emits, checked as it emits them.
        let mut kernels = vec![grid.gemm_call(input, grid.kp, grid.call_columns, grid.panels > 1)];
        if gk > 1 {
            let [sum, add_own] = grid.reduce_calls(
                input,
                ranges_max(grid.rows.largest() * grid.cols.largest(), gk),
            );
            kernels.extend([sum, add_own]);
        }
        let plan = OperatorPlan::Gemm(GemmPlan {
            grid: GemmTileGrid {
                batch: 1,
                rows: gm,
                cols: gn,
                k_split: gk,
            },
            tiles: grid.tiles(),
            k_block: grid.kp,
            c_block: grid.call_columns,
            orientation: Orientation::Normal,
            weights: element::memory(grid.classes.b_panel),
            left: element::memory(grid.classes.a_panel),
            precision: input,
            k_steps: grid.panels,
            weights_resident: grid.env.b_resident,
            host_order: true,
            scales: input.is_fp8().then(|| operand_scales(scales)),
        });
        let (operand_needs, result_need) = needs(&grid, dims, input, scales);
        out.push(Candidate {
            compute_cycles: estimate.gemm + grid.home_copy_cycles(input, target) + estimate.reduce,
            internal_exchange_cycles: exchange_cycles,
            internal_row_bytes: row_bytes,
            internal_phases: phases,
            resident_weights: grid.env.b_resident,
            transient,
            kernels,
            // A gathered from a device value's ranges inside the panels' phases (under FP8
            // cast on its owners first: the beam prices that conversion).
            follows: a_device.then_some((0, None)),
            ..Candidate::new(plan, grid.tiles(), operand_needs, result_need)
        });
    }
    (!out.is_empty()).then_some(out)
}

/// The bytes per tile a device left operand of an `m x k` product is taken to hold while the
/// product runs on at most `tiles` tiles (the planner does not know its layout yet): its
/// share of a tenth fewer tiles, with a 16-element row of slack, in its element type `host`
/// plus, when it is cast to the input precision `input` first, its cast copy.
pub fn device_a_share(
    (m, k, _): (u32, u32, u32),
    tiles: u32,
    (host, input): (Precision, Precision),
) -> u32 {
    let share = (u64::from(m) * u64::from(k))
        .div_ceil((u64::from(tiles) * 9).div_ceil(10).max(1))
        .next_multiple_of(16)
        + 16;
    let bytes = u64::from(host.bytes())
        + if host != input {
            u64::from(input.bytes())
        } else {
            0
        };
    u32::try_from(share * bytes).unwrap_or(u32::MAX)
}

/// The grid a plan constraint pins for op `index` (its `grid`, `weights` and
/// `weights_resident`), whatever its rank, in the op's surroundings `env`; `None` without such
/// a pin, or when the split GEMM cannot build it (logged with why: the planner then reports that
/// no candidate satisfies the constraint).
fn pinned_grid(
    index: usize,
    dims: (u32, u32, u32),
    (input, env, b_constant): (Precision, &SplitEnv, bool),
    options: &PlannerOptions,
    target: &Target,
) -> Option<SplitGrid> {
    let weights = env.weights;
    let env = *env;
    // A grid pinned by a plan constraint is a candidate whatever its rank (with the
    // weights' class the constraint pins, if any).
    let constraint = options
        .constraints
        .ops
        .get(&crate::tiling::constraints::op_key("", index));
    let pinned_weights = constraint
        .and_then(|constraint| match constraint.params.get("weights") {
            Some(PlanValue::Str(class)) => [MemoryClass::Standard, MemoryClass::Interleaved]
                .into_iter()
                .find(|c| c.name() == class),
            _ => None,
        })
        .unwrap_or(weights);
    let pinned = constraint.and_then(|constraint| match constraint.params.get("grid") {
        Some(PlanValue::Ints(grid)) if grid.len() == 4 && grid[0] == 1 => Some(
            (1..4)
                .map(|d| u32::try_from(grid[d]).ok())
                .collect::<Option<Vec<u32>>>()?,
        ),
        _ => None,
    });
    let pinned_resident = constraint
        .and_then(
            |constraint| match constraint.params.get("weights_resident") {
                Some(PlanValue::Bool(resident)) => Some(*resident),
                _ => None,
            },
        )
        .unwrap_or(false)
        && b_constant;
    if let Some(g) = pinned {
        let env = SplitEnv {
            weights: pinned_weights,
            b_resident: pinned_resident,
            result: env
                .result
                .map(|_| SplitEnv::chained_result_class(pinned_weights)),
            ..env
        };
        match SplitGrid::within(dims, (g[0], g[1], g[2]), input, &env, target) {
            Ok(grid) if grid.tiles() <= options.tiles => return Some(grid),
            Ok(grid) => tracing::warn!(
                op = index,
                grid = ?g,
                tiles = grid.tiles(),
                allowed = options.tiles,
                "the pinned split GEMM grid needs more tiles than the program has"
            ),
            Err(reason) => tracing::warn!(
                op = index,
                grid = ?g,
                %reason,
                "the pinned grid is not one the split GEMM lowering builds"
            ),
        }
    }
    None
}

/// A split GEMM grid at an input precision, as the source of its exchange phases; with
/// `a_home`, a left operand gathered from row-major blocks is sent from the tiles that hold
/// them ([`gather_phases`]), else modelled as sent from outside each A group.
#[derive(Debug, PartialEq)]
struct SplitPhases {
    grid: SplitGrid,
    precision: Precision,
    a_home: Option<Shards>,
}

impl PhaseTransfers for SplitPhases {
    fn transfers(&self, phase: u32, visit: &mut dyn FnMut(u32, &[u32], u64)) {
        let Some(home) = self.a_home.as_ref().filter(|_| phase < self.grid.panels) else {
            self.grid
                .for_each_exchange_transfer(self.precision, phase, visit);
            return;
        };
        // B's ranges as the grid sends them; A from its owners' blocks.
        self.grid
            .exchange_transfers(self.precision, phase, false, visit);
        self.grid
            .for_each_gather_transfer(home, self.precision, phase, visit);
    }
}

/// The op's internal exchange phases (each panel's and the reduction's, those that move
/// anything): the phases, their cycles by the endpoint rule over the transfers the lowering
/// emits, and the encoded row bytes of the tile with the most over all of them.
pub(super) fn exchange_phases(
    grid: &SplitGrid,
    input: Precision,
    target: &Target,
) -> (Vec<InternalPhase>, u64, u64) {
    let source: std::sync::Arc<dyn PhaseSource> = std::sync::Arc::new(SplitPhases {
        grid: grid.clone(),
        precision: input,
        a_home: None,
    });
    generated_phases(source, 0..=grid.panels + 1, grid.tiles(), target)
}

/// The internal phases of `candidate` (a split GEMM that gathers its left operand from a
/// device value's blocks: row-major, or a chained split GEMM's partial blocks) when that
/// operand lives at `home`, with its panel phases sending A from
/// the tiles of `home` instead of from outside each A group: the phases, their cycles and
/// row bytes ([`generated_phases`]; only the panel phases are generated again, the
/// reduction's and the conversion's stay). `None` for any other candidate.
pub fn gather_phases(
    candidate: &Candidate,
    home: &Shards,
    target: &Target,
) -> Option<(Vec<InternalPhase>, u64, u64)> {
    let Some(InternalPhase::Generated(first)) = candidate.internal_phases.first() else {
        return None;
    };
    let split = first.source.as_any().downcast_ref::<SplitPhases>()?;
    let grid = &split.grid;
    if !grid.env.a_device || home.dims[0] != 1 {
        return None;
    }
    if home.dims[1] != u64::from(grid.m) || home.dims[2] != u64::from(grid.k_real) {
        return None;
    }
    let source: std::sync::Arc<dyn PhaseSource> = std::sync::Arc::new(SplitPhases {
        grid: grid.clone(),
        precision: split.precision,
        a_home: Some(home.clone()),
    });
    let (_, modelled, modelled_rows) =
        generated_phases(first.source.clone(), 0..grid.panels, grid.tiles(), target);
    let (mut phases, cycles, row_bytes) =
        generated_phases(source, 0..grid.panels, grid.tiles(), target);
    phases.extend(
        candidate
            .internal_phases
            .iter()
            .filter(|phase| matches!(phase, InternalPhase::Generated(g) if g.phase >= grid.panels))
            .cloned(),
    );
    Some((
        phases,
        candidate.internal_exchange_cycles.saturating_sub(modelled) + cycles,
        // The panel phases' rows replaced (the reduction's kept): the busiest tile of the
        // whole may differ from each part's, so the parts' rows add up as an upper bound.
        candidate.internal_row_bytes.saturating_sub(modelled_rows) + row_bytes,
    ))
}

/// Where the operands start (their homes, or, resident, every tile's whole B block) and where
/// the result is left, in their AMP orders (under FP8 each operand at its scale, as the host
/// encodes it when it streams it).
fn needs(
    grid: &SplitGrid,
    dims: (u32, u32, u32),
    input: Precision,
    scales: [i64; 2],
) -> (Vec<Need>, Need) {
    let (gm, gn, gk) = (grid.gm, grid.gn, grid.gk);
    let partials = ipu_device::kernels::describe::default_partials(input);
    let format = |order, memory, scale| ValueFormat::operand(input, order, memory, scale);
    (
        vec![
            Need {
                shards: Shards::homed(
                    [1, u64::from(dims.0), u64::from(dims.1)],
                    [1, gm, gn * gk],
                    input.bytes(),
                    0,
                ),
                format: format(ElementOrder::AmpLeft, grid.classes.a_home, scales[0]),
            },
            Need {
                // Resident: every tile's whole (K slice, column block), replicated over
                // the row blocks; else one home range per tile.
                shards: if grid.env.b_resident {
                    Shards::needed_by_grid(
                        [1, u64::from(dims.1), u64::from(dims.2)],
                        input.bytes(),
                        &[1, gm, gn, gk],
                        &[None, None, Some(2), Some(1)],
                    )
                } else {
                    Shards::homed(
                        [1, u64::from(dims.1), u64::from(dims.2)],
                        [1, gk * gm, gn],
                        input.bytes(),
                        0,
                    )
                },
                format: format(ElementOrder::AmpRight, grid.classes.b_home, scales[1]),
            },
        ],
        if grid.env.row_major {
            // Converted to the row grid, row-major, in the class the result's ranges are
            // not in (the conversion phase reads those while it writes these).
            let rows = grid.rows_grid();
            Need {
                shards: Shards::needed_by_grid(
                    [1, u64::from(dims.0), u64::from(dims.2)],
                    partials.bytes(),
                    &[1, rows.mb, 1],
                    &[Some(0), Some(1), Some(2)],
                ),
                format: ValueFormat {
                    memory: grid.rows_class(),
                    ..ValueFormat::row_major(partials)
                },
            }
        } else {
            Need {
                shards: Shards::homed(
                    [1, u64::from(dims.0), u64::from(dims.2)],
                    [1, gm, gn * gk],
                    partials.bytes(),
                    0,
                ),
                format: ValueFormat {
                    precision: partials,
                    ..format(
                        ElementOrder::AmpOutput,
                        if gk > 1 {
                            grid.classes.reduced
                        } else {
                            grid.classes.partials
                        },
                        0,
                    )
                },
            }
        },
    )
}
