//! The beam over the program: ops in program order, every surviving partial plan extended by
//! every candidate of the next op, branches over the per-tile budget dropped, and per group of
//! partial plans whose live values have the same formats (what later ops see) only the Pareto
//! front over (cycles, exchange cycles, peak standard, peak interleaved, peak total) kept, at
//! most `beam_width` per group and `beam_width^2` in all.
//!
//! The accounting of one step ([`super::step`]) is the only cost model: [`evaluate`] replays
//! it for a fixed choice of plans, so a finalist's reported costs can be recomputed exactly.
//!
//! Memory is per tile and conservative: the busiest tile's bytes of each buffer are added as if
//! one tile were the busiest for all of them (plans spread evenly, so this is close).
//! Exchange: each op's operand moves form one phase priced by the endpoint rule of the target
//! table (`exchange_phase_cycles`), plus the op's internal phases.

use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use ipu_device::{MemoryClass, Target};

use super::candidates::{self, Candidate, Need};
use super::cost::{MemoryUse, ValueFormat};
use super::graph::{Graph, OpKind, Origin, ValueId};
use super::layout::{PhaseLoad, Shards};
use super::step::{GroupKey, Loads, OperandMoves, Shortfall, State, TransferMemo};
use super::{PlannerError, PlannerOptions};
use crate::strategies::repeat::{self, PlannedBody};

/// Whole-program estimate (the fields of the `retained operator-plan finalist` line).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, PartialOrd, Ord)]
pub struct ProgramEstimate {
    pub cycles: u64,
    pub exchange_cycles: u64,
    /// Encoded exchange-row bytes of the busiest tile, summed over phases.
    pub exchange_row_bytes: u64,
    pub peak_standard: u64,
    pub peak_interleaved: u64,
    pub peak_total: u64,
    pub maximum_standard_allocation: u64,
}

/// One op's share (written as its `#ipu.estimate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OpEstimate {
    pub cycles: u64,
    pub exchange_cycles: u64,
    /// Per-tile memory while the op runs.
    pub memory: MemoryUse,
}

/// A format change of an operand before its consumer (an inserted `ipu.cast` and/or
/// `ipu.rearrange`).
#[derive(Debug, Clone, PartialEq)]
pub struct Conversion {
    pub op: usize,
    pub operand: usize,
    pub value: ValueId,
    pub from: ValueFormat,
    pub to: ValueFormat,
}

/// A complete plan of a program.
#[derive(Debug, Clone, PartialEq)]
pub struct Finalist {
    /// Index of the chosen candidate per op (into the op's candidate list).
    pub choices: Vec<usize>,
    pub plans: Vec<Arc<Candidate>>,
    pub estimate: ProgramEstimate,
    pub ops: Vec<OpEstimate>,
    /// Where each value lives (its home blocks and format); `None` for unused values.
    pub homes: Vec<Option<Arc<Need>>>,
    pub conversions: Vec<Conversion>,
    pub active_tile_counts: BTreeSet<u32>,
    pub padding_group_counts: BTreeMap<u64, u32>,
    /// For each `ipu.repeat` op: its body's plan.
    pub bodies: BTreeMap<usize, Finalist>,
}

/// The planner's result.
#[derive(Debug, Clone)]
pub struct Planned {
    pub finalists: Vec<Finalist>,
    /// The candidates considered per op (after constraints and the per-op budget).
    pub candidates: Vec<Vec<Arc<Candidate>>>,
    /// States kept after each op.
    pub frontier_sizes: Vec<usize>,
}

fn dominates(a: &[u64; 5], b: &[u64; 5]) -> bool {
    a.iter().zip(b).all(|(x, y)| x <= y) && a != b
}

fn order_key(state: &State) -> ([u64; 5], (usize, usize)) {
    (state.objectives(), state.lineage)
}

/// Keeps the Pareto front of each group, at most `beam_width` per group and `beam_width^2`,
/// and the state holding the least memory into the ops after it (resident weights and live
/// values: a lineage that later, larger ops can still fit beside, when the fronts chose by
/// cycles and peaks so far), ranked by their choices for the next step's ties.
fn prune(states: Vec<State>, beam_width: usize) -> Vec<State> {
    let leanest = states
        .iter()
        .min_by_key(|state| (state.live_total(), order_key(state)))
        .cloned();
    let mut groups: HashMap<GroupKey, Vec<State>> = HashMap::new();
    let mut tile_counts = HashMap::new();
    for state in states {
        groups
            .entry(state.group_key(&mut tile_counts))
            .or_default()
            .push(state);
    }
    let mut kept = Vec::new();
    for (_, mut group) in groups {
        group.sort_by_key(order_key);
        let mut front: Vec<State> = Vec::new();
        for state in group {
            let objectives = state.objectives();
            if front.iter().any(|kept| {
                dominates(&kept.objectives(), &objectives) || kept.objectives() == objectives
            }) {
                continue;
            }
            front.push(state);
            if front.len() >= beam_width.max(1) {
                break;
            }
        }
        kept.extend(front);
    }
    // Lineages are distinct, so this order does not depend on the groups' order.
    kept.sort_by_key(order_key);
    kept.truncate(beam_width.max(1) * beam_width.max(1));
    if let Some(leanest) = leanest {
        if kept.iter().all(|state| state.lineage != leanest.lineage) {
            kept.push(leanest);
        }
    }
    let mut by_choices: Vec<usize> = (0..kept.len()).collect();
    by_choices.sort_by_key(|&i| kept[i].lineage);
    for (rank, i) in by_choices.into_iter().enumerate() {
        kept[i].rank = rank;
    }
    kept
}

pub use crate::tiling::constraints::op_key;

/// A standalone score for pre-ranking an op's candidates: compute, internal exchange and the
/// exchange of replicating its operands from one copy of each block.
fn standalone_score(candidate: &Candidate, target: &Target) -> u64 {
    let mut phase = PhaseLoad::new(candidate.tiles);
    for need in &candidate.needs {
        let home = super::layout::host_home(&need.shards, need.shards.element_bytes);
        phase.add(&home, &need.shards);
    }
    candidate.compute_cycles + candidate.internal_exchange_cycles + phase.cycles(target)
}

/// Candidates of op `index` after constraints and the per-op budget.
fn op_candidates(
    graph: &Graph,
    index: usize,
    prefix: &str,
    options: &PlannerOptions,
    target: &Target,
) -> Result<Vec<Arc<Candidate>>, PlannerError> {
    let op = &graph.ops[index];
    let mut all = match &op.kind {
        OpKind::Repeat {
            count,
            name,
            body,
            iterated,
        } => {
            // Stacks written once (parameters, constants) stay resident; arguments are
            // streamed by the host each iteration.
            let resident: Vec<bool> = iterated
                .iter()
                .map(|&v| prefix.is_empty() && graph.values[v].origin == Origin::Constant)
                .collect();
            let repeat = RepeatOp {
                count: *count,
                name,
                body,
                carried: op.operands.len(),
                resident: &resident,
            };
            repeat_candidates(&repeat, options, target)?
                .into_iter()
                .map(Arc::new)
                .collect()
        }
        _ => candidates::memoized(graph, index, options, target).to_vec(),
    };
    if all.is_empty() {
        let rule = match op.kind {
            OpKind::Add | OpKind::Gelu { .. } | OpKind::Cast { .. } => {
                crate::strategies::pointwise::why_unplannable(graph, op, options)
            }
            OpKind::Softmax | OpKind::LayerNorm { .. } => {
                crate::strategies::rows::why_unplannable(graph, op, options)
            }
            OpKind::Repeat {
                count,
                ref name,
                ref body,
                ..
            } => repeat::repeat_shape(name, count, body.outputs.len(), op.operands.len()).err(),
            _ => None,
        };
        return Err(PlannerError::NoCandidate {
            op: index,
            name: op.kind.name().into(),
            detail: rule.unwrap_or_else(|| {
                "no kernel supports its shapes and precision on the active tile counts".into()
            }),
        });
    }
    let key = op_key(prefix, index);
    if let Some(constraint) = options.constraints.get(&key) {
        if options.fp8_scale.is_none() {
            let pins_scales = candidates::SCALE_PARAMS
                .iter()
                .any(|name| constraint.params.contains_key(*name));
            // Shared with the memo: copied only where a scale is pinned.
            if pins_scales {
                for candidate in all.iter_mut().filter(|c| c.plan.scales().is_some()) {
                    candidates::pin_scales(Arc::make_mut(candidate), constraint);
                }
            }
        }
        // A repeat's `body_choices` are positions in its body ops' candidate lists, which the
        // body's own constraints (its ops' recorded plans) filter: the body is pinned by those,
        // so the repeat is matched on its kind and count.
        let mut constraint = constraint.clone();
        if matches!(op.kind, OpKind::Repeat { .. }) {
            constraint.params.remove("body_choices");
        }
        all.retain(|candidate| constraint.admits(&candidate.plan));
        if all.is_empty() {
            // The owning strategy says why it does not offer the pinned plan, when it can.
            let why = constraint.kind.as_ref().and_then(|kind| {
                let pinned = ipu_dialects::format::Plan {
                    kind: kind.clone(),
                    params: constraint.params.clone(),
                };
                let active = options.active_tile_counts();
                crate::strategies::why_not_offered(graph, op, &pinned, &active)
            });
            return Err(PlannerError::NoCandidate {
                op: index,
                name: op.kind.name().into(),
                detail: match why {
                    Some(why) => format!("the plan pinned for op {key} is not offered: {why}"),
                    None => format!("no candidate satisfies the constraint on op {key}"),
                },
            });
        }
    }
    // Candidates that cannot fit even alone are dropped (one is kept if none fits, so the
    // beam reports its shortfall); the budget is split between the cheapest and, for a
    // quarter of it, the smallest in memory, so tight programs keep options that fit.
    // Standard data beyond its budget spills into interleaved memory (as in the beam).
    let fits = |c: &Candidate| {
        let memory = candidates::standalone_memory(c);
        memory.interleaved <= options.interleaved_budget && memory.total() <= options.total_budget
    };
    let mut scored: Vec<(u64, u64, String, Arc<Candidate>)> = all
        .into_iter()
        .map(|c| {
            (
                standalone_score(&c, target),
                candidates::standalone_memory(&c).total(),
                c.plan.to_string(),
                c,
            )
        })
        .collect();
    scored.sort_by(|a, b| (a.0, &a.2).cmp(&(b.0, &b.2)));
    if scored.iter().any(|(.., c)| fits(c)) {
        scored.retain(|(.., c)| fits(c));
    } else {
        scored.sort_by(|a, b| (a.1, &a.2).cmp(&(b.1, &b.2)));
        scored.truncate(1);
    }
    let budget = options.candidates_per_op.max(1);
    let by_memory = budget / 4;
    let mut smallest: Vec<usize> = (0..scored.len()).collect();
    smallest.sort_by(|&a, &b| {
        let (a, b) = (&scored[a], &scored[b]);
        (a.1, a.0, &a.2).cmp(&(b.1, b.0, &b.2))
    });
    let mut kept: Vec<usize> = smallest.into_iter().take(by_memory).collect();
    for entry in 0..scored.len() {
        if kept.len() >= budget {
            break;
        }
        if !kept.iter().any(|&k| scored[k].2 == scored[entry].2) {
            kept.push(entry);
        }
    }
    kept.sort_by(|&a, &b| {
        let (a, b) = (&scored[a], &scored[b]);
        (a.0, &a.2).cmp(&(b.0, &b.2))
    });
    let mut scored: Vec<Option<Arc<Candidate>>> =
        scored.into_iter().map(|(.., c)| Some(c)).collect();
    Ok(kept.into_iter().filter_map(|k| scored[k].take()).collect())
}

/// An `ipu.repeat` (or `ipu.scan`) op as its planning sees it.
struct RepeatOp<'g> {
    count: u64,
    name: &'g str,
    body: &'g Graph,
    /// Carried operands (the body's first arguments).
    carried: usize,
    /// Per iterated stack (the body's arguments after the carried ones): whether it is
    /// resident (written once) rather than streamed per iteration.
    resident: &'g [bool],
}

/// An `ipu.repeat` is planned through its body, once: each body finalist becomes a candidate
/// costing `count` iterations, plus moving the carried values from where the body leaves them
/// to where it reads them, between iterations.
fn repeat_candidates(
    repeat: &RepeatOp,
    options: &PlannerOptions,
    target: &Target,
) -> Result<Vec<Candidate>, PlannerError> {
    let &RepeatOp {
        count,
        name,
        body,
        carried,
        resident,
    } = repeat;
    if repeat::repeat_shape(name, count, body.outputs.len(), carried).is_err() {
        return Ok(Vec::new());
    }
    let mut body_options = PlannerOptions {
        in_body: true,
        ..options.clone()
    };
    let mut planned = plan_with_prefix(body, &body_options, target, &format!("body:{name}:"))?;
    // The body reads the carried values as its first arguments; the arguments after them
    // are the per-iteration slices, streamed into the body by the host (not carried).
    let all_arguments: Vec<ValueId> = (0..body.values.len())
        .filter(|&v| body.values[v].origin == Origin::Argument)
        .collect();
    let arguments = &all_arguments[..carried.min(all_arguments.len())];
    let stack_slices: Vec<ValueId> = all_arguments
        .iter()
        .skip(carried)
        .zip(resident)
        .filter(|(_, &resident)| resident)
        .map(|(&v, _)| v)
        .collect();
    let (mut out, mut stores) = repeat_finalists(
        repeat,
        (&planned, body_options.total_budget),
        (arguments, &stack_slices),
        options,
        target,
    );
    // Resident stacks take memory the body's plan did not know of: when no finalist fits
    // beside its stores, the body is planned again within what the stores leave, then
    // tightened by what the best still overruns (a few times at most; a body that no
    // longer fits keeps the plans before, and their shortfall).
    for attempt in 0..4 {
        if stack_slices.is_empty() {
            break;
        }
        // What a candidate needs in the program: its peak beside the carried values' homes
        // and its results' (the program holds those).
        let overrun = out
            .iter()
            .map(|c| {
                let held = c
                    .needs
                    .iter()
                    .chain([&c.output])
                    .chain(&c.extra_outputs)
                    .fold(c.transient, |m, need| m.plus(candidates::need_memory(need)));
                held.total()
                    .saturating_sub(options.total_budget)
                    .max(held.interleaved.saturating_sub(options.interleaved_budget))
            })
            .min()
            .unwrap_or(0);
        if overrun == 0 {
            break;
        }
        let budget = if attempt == 0 {
            let least = stores.iter().copied().min().unwrap_or(0);
            options.total_budget.saturating_sub(least)
        } else {
            body_options.total_budget.saturating_sub(overrun)
        };
        if budget >= body_options.total_budget {
            break;
        }
        body_options.total_budget = budget;
        match plan_with_prefix(body, &body_options, target, &format!("body:{name}:")) {
            Ok(again) => planned = again,
            Err(_) => break,
        }
        (out, stores) = repeat_finalists(
            repeat,
            (&planned, body_options.total_budget),
            (arguments, &stack_slices),
            options,
            target,
        );
    }
    Ok(out)
}

/// The repeat candidates of a body's finalists, planned within `body_budget` per tile, and the
/// store bytes per tile of the resident stacks `stack_slices` each reads.
fn repeat_finalists(
    repeat: &RepeatOp,
    (planned, body_budget): (&Planned, u64),
    (arguments, stack_slices): (&[ValueId], &[ValueId]),
    options: &PlannerOptions,
    target: &Target,
) -> (Vec<Candidate>, Vec<u64>) {
    let &RepeatOp { count, body, .. } = repeat;
    let slices = u32::try_from(count).unwrap_or(u32::MAX);
    let mut out = Vec::new();
    let mut stores = Vec::new();
    for finalist in &planned.finalists {
        let home_of = |value: ValueId| -> Need {
            finalist.homes[value]
                .as_deref()
                .cloned()
                .unwrap_or_else(|| {
                    let v = &body.values[value];
                    Need {
                        shards: Shards::homed(
                            super::layout::canonical_dims(&v.shape),
                            [1, 1, 1],
                            v.element.bytes(),
                            0,
                        ),
                        format: ValueFormat::row_major(v.element),
                    }
                })
        };
        let reads: Vec<Need> = arguments.iter().map(|&v| home_of(v)).collect();
        let mut leaves: Vec<Need> = body.outputs.iter().map(|&v| home_of(v)).collect();
        if leaves.is_empty() {
            leaves.push(home_of(0));
        }
        let estimate = finalist.estimate;
        // Where the body's ops read each resident stack's slice (unread slices cost nothing).
        // Each with the first op reading it: the lowering moves a slice's pieces in that op's
        // exchange phase.
        let stack_homes: Vec<(&Shards, u32, usize)> = stack_slices
            .iter()
            .filter_map(|&v| {
                let reader = body.ops.iter().position(|op| op.operands.contains(&v))?;
                Some((&finalist.homes[v].as_deref()?.shards, slices, reader))
            })
            .collect();
        let stacks = repeat::ResidentStacks::of(&stack_homes, options.tiles, target);
        stores.push(stacks.store_bytes);
        let planned_body = PlannedBody {
            cycles: estimate.cycles,
            exchange_cycles: estimate.exchange_cycles,
            exchange_row_bytes: estimate.exchange_row_bytes,
            // The body's peak total (standard beyond its budget spills into interleaved
            // memory, so the total at the busiest op is what must fit), its interleaved peak.
            memory: MemoryUse {
                standard: estimate
                    .peak_total
                    .saturating_sub(estimate.peak_interleaved),
                interleaved: estimate.peak_interleaved,
                largest_standard: estimate.maximum_standard_allocation,
            },
            reads,
            leaves,
            tiles: finalist
                .active_tile_counts
                .iter()
                .copied()
                .max()
                .unwrap_or(1),
            kernels: finalist
                .plans
                .iter()
                .flat_map(|plan| plan.kernels.clone())
                .collect(),
            choices: finalist.choices.clone(),
            stacks,
        };
        out.push(Candidate {
            body_budget: Some(body_budget),
            ..repeat::candidate(count, planned_body, options.tiles, target)
        });
    }
    (out, stores)
}

/// Plans `graph`: the finalists (best first), the candidates and the frontier sizes.
pub fn plan(
    graph: &Graph,
    options: &PlannerOptions,
    target: &Target,
) -> Result<Planned, PlannerError> {
    plan_with_prefix(graph, options, target, "")
}

fn plan_with_prefix(
    graph: &Graph,
    options: &PlannerOptions,
    target: &Target,
    prefix: &str,
) -> Result<Planned, PlannerError> {
    graph.check()?;
    // The ops' candidate lists do not depend on the beam: generated for every op at once,
    // in parallel (a repeat's are planned through its body, in the beam's order).
    (0..graph.ops.len())
        .into_par_iter()
        .filter(|&index| !matches!(graph.ops[index].kind, OpKind::Repeat { .. }))
        .for_each(|index| {
            candidates::memoized(graph, index, options, target);
        });
    let last_uses = graph.last_uses();
    let mut states = vec![State::empty()];
    let mut memo = TransferMemo::default();
    let mut all_candidates = Vec::with_capacity(graph.ops.len());
    let mut frontier_sizes = Vec::with_capacity(graph.ops.len());
    for index in 0..graph.ops.len() {
        let candidates = op_candidates(graph, index, prefix, options, target)?;
        let operands = &graph.ops[index].operands;
        let mut next = Vec::new();
        let mut best_shortfall: Option<Shortfall> = None;
        // States sharing their operands' homes share each candidate's moves. One candidate
        // at a time, so a step holds one candidate's moves (an op may have a thousand
        // candidates; the moves' pointers are valid while their candidate's are held).
        let homes: Vec<Vec<*const Need>> = states
            .iter()
            .map(|state| {
                operands
                    .iter()
                    .map(|&v| state.home(v).map_or(std::ptr::null(), Arc::as_ptr))
                    .collect()
            })
            .collect();
        for (choice, candidate) in candidates.iter().enumerate() {
            let mut moves: HashMap<&[*const Need], OperandMoves> = HashMap::new();
            let mut loads = Loads::new(&mut memo);
            for (state, homes) in states.iter().zip(&homes) {
                let moves = moves.entry(homes).or_insert_with(|| {
                    OperandMoves::of(
                        graph,
                        index,
                        candidate,
                        |v| state.home(v),
                        (target, options.in_body),
                        &mut loads,
                    )
                });
                match state.extend(graph, index, choice, moves, &last_uses, (options, target)) {
                    Ok(extended) => next.push(extended),
                    Err(shortfall) => {
                        if best_shortfall.as_ref().is_none_or(|best| {
                            shortfall.short < best.short
                                || (shortfall.short == best.short
                                    && shortfall.candidate.plan.to_string()
                                        < best.candidate.plan.to_string())
                        }) {
                            best_shortfall = Some(shortfall);
                        }
                    }
                }
            }
        }
        if next.is_empty() {
            let name = graph.ops[index].kind.name().to_string();
            return Err(match best_shortfall {
                Some(s) => PlannerError::OutOfMemory {
                    op: index,
                    name,
                    class: s.class,
                    short: s.short,
                    needed: s.needed,
                    budget: s.budget,
                    plan: s.candidate.plan.to_string(),
                },
                None => PlannerError::NoCandidate {
                    op: index,
                    name,
                    detail: "no candidate could be applied".into(),
                },
            });
        }
        states = prune(next, options.beam_width);
        frontier_sizes.push(states.len());
        all_candidates.push(candidates);
    }
    let mut finalists: Vec<Finalist> = states.iter().map(|state| state.finalist(graph)).collect();
    finalists.sort_by(|a, b| {
        (a.estimate.cycles, a.estimate.peak_total, &a.choices).cmp(&(
            b.estimate.cycles,
            b.estimate.peak_total,
            &b.choices,
        ))
    });
    finalists.truncate(options.finalists.max(1));
    for finalist in &mut finalists {
        attach_bodies(graph, finalist, options, target, prefix)?;
    }
    Ok(Planned {
        finalists,
        candidates: all_candidates,
        frontier_sizes,
    })
}

/// Re-derives complete plans recorded in the constraints form (one set per finalist): every
/// op's candidates are generated once and shared by all sets; each set must pin one candidate
/// per op (the first by standalone cost when it pins several). Graphs with repeats fall back
/// to planning each set.
pub fn derive(
    graph: &Graph,
    options: &PlannerOptions,
    target: &Target,
    sets: &[super::Constraints],
) -> Result<Vec<Finalist>, PlannerError> {
    graph.check()?;
    if graph
        .ops
        .iter()
        .any(|op| matches!(op.kind, OpKind::Repeat { .. }))
    {
        // The sets are planned independently, in parallel (results in set order).
        return sets
            .par_iter()
            .map(|set| {
                // The finalist count stays: a repeat's candidates are its body's finalists,
                // and the pinned body choices may name any of them.
                let mut pinned = options.clone();
                pinned.constraints = set.clone();
                plan(graph, &pinned, target)?
                    .finalists
                    .into_iter()
                    .next()
                    .ok_or_else(|| PlannerError::Constraints("no plan".into()))
            })
            .collect();
    }
    let all: Vec<Vec<(u64, String, Arc<Candidate>)>> = (0..graph.ops.len())
        .map(|index| {
            let mut scored: Vec<(u64, String, Arc<Candidate>)> =
                candidates::candidates(graph, index, options, target)
                    .into_iter()
                    .flat_map(|c| {
                        // One copy per distinct pinned scale among the sets.
                        let mut copies: Vec<Candidate> = Vec::new();
                        if options.fp8_scale.is_none() {
                            for set in sets {
                                let Some(constraint) = set.get(&op_key("", index)) else {
                                    continue;
                                };
                                if c.plan.scales().is_some()
                                    && candidates::SCALE_PARAMS
                                        .iter()
                                        .any(|name| constraint.params.contains_key(*name))
                                {
                                    let mut pinned = c.clone();
                                    candidates::pin_scales(&mut pinned, constraint);
                                    if pinned != c && !copies.contains(&pinned) {
                                        copies.push(pinned);
                                    }
                                }
                            }
                        }
                        copies.push(c);
                        copies
                    })
                    .map(|c| {
                        (
                            standalone_score(&c, target),
                            c.plan.to_string(),
                            Arc::new(c),
                        )
                    })
                    .collect();
            scored.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
            scored
        })
        .collect();
    sets.iter()
        .map(|set| {
            let mut chosen = Vec::with_capacity(graph.ops.len());
            for (index, candidates) in all.iter().enumerate() {
                let key = op_key("", index);
                let found = candidates.iter().position(|(.., c)| {
                    set.get(&key)
                        .is_none_or(|constraint| constraint.admits(&c.plan))
                });
                let Some(position) = found else {
                    return Err(PlannerError::NoCandidate {
                        op: index,
                        name: graph.ops[index].kind.name().into(),
                        detail: format!("no candidate satisfies the constraint on op {key}"),
                    });
                };
                chosen.push((position, candidates[position].2.clone()));
            }
            evaluate(graph, &chosen, options, target)
        })
        .collect()
}

/// Re-derives each repeat op's body plan from its recorded choices.
fn attach_bodies(
    graph: &Graph,
    finalist: &mut Finalist,
    options: &PlannerOptions,
    target: &Target,
    prefix: &str,
) -> Result<(), PlannerError> {
    let _ = prefix;
    for (index, op) in graph.ops.iter().enumerate() {
        if let (OpKind::Repeat { name, body, .. }, Some(choices)) =
            (&op.kind, finalist.plans[index].body_choices.clone())
        {
            let body_prefix = format!("body:{name}:");
            // The body's candidates as its planning listed them (`repeat_candidates`), so
            // the recorded choices name the same candidates.
            let body_options = PlannerOptions {
                in_body: true,
                total_budget: finalist.plans[index]
                    .body_budget
                    .unwrap_or(options.total_budget),
                ..options.clone()
            };
            let candidates: Vec<Vec<Arc<Candidate>>> = (0..body.ops.len())
                .map(|i| op_candidates(body, i, &body_prefix, &body_options, target))
                .collect::<Result<_, _>>()?;
            let chosen: Vec<(usize, Arc<Candidate>)> = choices
                .iter()
                .enumerate()
                .filter_map(|(i, &c)| candidates[i].get(c).map(|cand| (c, cand.clone())))
                .collect();
            // Evaluated as it was planned: in a body (its arguments are device values, not
            // host streams) and within the body's budget.
            finalist
                .bodies
                .insert(index, evaluate(body, &chosen, &body_options, target)?);
        }
    }
    Ok(())
}

/// Replays the accounting for a fixed plan per op: `(choice index, candidate)` in op order.
pub fn evaluate(
    graph: &Graph,
    chosen: &[(usize, Arc<Candidate>)],
    options: &PlannerOptions,
    target: &Target,
) -> Result<Finalist, PlannerError> {
    let last_uses = graph.last_uses();
    let mut state = State::empty();
    for (index, (choice, candidate)) in chosen.iter().enumerate() {
        let moves = OperandMoves::of(
            graph,
            index,
            candidate,
            |v| state.home(v),
            (target, options.in_body),
            &mut Loads::new(&mut TransferMemo::default()),
        );
        state = state
            .extend(graph, index, *choice, &moves, &last_uses, (options, target))
            .map_err(|s| PlannerError::OutOfMemory {
                op: index,
                name: graph.ops[index].kind.name().into(),
                class: s.class,
                short: s.short,
                needed: s.needed,
                budget: s.budget,
                plan: s.candidate.plan.to_string(),
            })?;
    }
    Ok(state.finalist(graph))
}

/// The memory class name of a format, for `#ipu.format`.
pub fn memory_name(class: MemoryClass) -> &'static str {
    class.name()
}

#[cfg(test)]
mod prune_tests {
    use super::*;
    use crate::tiling::MemoryUse;
    use ipu_device::MemoryClass;

    #[test]
    fn the_state_holding_least_memory_outlives_the_fronts() {
        let live = |bytes| MemoryUse::of(bytes, MemoryClass::Interleaved);
        // One group (no homes): the front of width 1 keeps the fastest; the slowest holds
        // the least memory into the next op and is kept beside it.
        let states = vec![
            State::holding(100, live(300_000), (0, 0)),
            State::holding(200, live(200_000), (0, 1)),
            State::holding(300, live(10_000), (0, 2)),
        ];
        let kept = prune(states, 1);
        let mut lineages: Vec<(usize, usize)> = kept.iter().map(|s| s.lineage).collect();
        lineages.sort_unstable();
        assert_eq!(lineages, [(0, 0), (0, 2)]);
        // The leanest already in the front is not kept twice.
        let kept = prune(vec![State::holding(100, live(1), (0, 0))], 1);
        assert_eq!(kept.len(), 1);
    }
}
