//! A finalist expanded to what the tiles do: per op, the exchange phases as explicit
//! transfers (source tile, destination tiles, bytes) under a tile mapping, and the compute
//! cycles of the busiest tile. `ipu-select-finalist` screens mappings on this, models the
//! expansion with the physical endpoint rule and schedules its phases.

use ipu_device::{cost, Target};

use super::beam::Finalist;
use super::graph::{Graph, OpKind, Origin};
use super::layout::Shards;
use super::step::{host_home, host_streamed, host_writes_in_order};
use crate::exchange::TransferRequest;
use ipu_device::kernels::spec::ElementOrder;

/// One exchange phase of the expanded plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpandedPhase {
    /// The op (in program order) the phase belongs to; body ops of a repeat report the repeat.
    pub op: usize,
    pub transfers: Vec<TransferRequest>,
    /// How many times the phase runs (repeat bodies run `count` times).
    pub runs: u64,
}

/// The expanded plan.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ExpandedPlan {
    pub phases: Vec<ExpandedPhase>,
    /// Compute (and conversion) cycles, summed over ops, of each op's busiest tile.
    pub compute_cycles: u64,
    /// Exchange cycles the plan prices but does not expand into transfers (a repeat's
    /// resident stacks' multicasts and the carry between its iterations), counted as priced
    /// by the modelled and the scheduled exchange alike.
    pub priced_exchange_cycles: u64,
}

impl ExpandedPlan {
    /// The plan with every tile relabelled by `mapping`: what [`expand`] under `mapping`
    /// gives when this plan is the expansion under the identity (expansion names a tile only
    /// through the mapping), without generating the transfers again.
    pub fn remapped(&self, mapping: &Mapping) -> ExpandedPlan {
        ExpandedPlan {
            phases: self
                .phases
                .iter()
                .map(|phase| ExpandedPhase {
                    op: phase.op,
                    transfers: phase
                        .transfers
                        .iter()
                        .map(|t| mapping.transfer(t.source, &t.destinations, t.bytes))
                        .collect(),
                    runs: phase.runs,
                })
                .collect(),
            compute_cycles: self.compute_cycles,
            priced_exchange_cycles: self.priced_exchange_cycles,
        }
    }
}

/// A tile mapping: virtual tile `v` of the plans runs on logical tile `mapping[v]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    pub name: String,
    pub tiles: Vec<u32>,
}

impl Mapping {
    pub fn identity(tiles: u32) -> Mapping {
        Mapping {
            name: "grid".into(),
            tiles: (0..tiles).collect(),
        }
    }

    pub fn map(&self, tile: u32) -> u32 {
        self.tiles.get(tile as usize).copied().unwrap_or(tile)
    }

    /// The transfer of `bytes` from virtual tile `source` to `destinations`, on the mapped
    /// tiles.
    pub fn transfer(&self, source: u32, destinations: &[u32], bytes: u64) -> TransferRequest {
        TransferRequest {
            source: self.map(source),
            destinations: destinations.iter().map(|&d| self.map(d)).collect(),
            bytes,
        }
    }

    pub fn is_identity(&self) -> bool {
        self.tiles
            .iter()
            .enumerate()
            .all(|(index, &tile)| index as u32 == tile)
    }

    /// Whether the mapping is a permutation of `0..tiles`.
    pub fn is_permutation(&self) -> bool {
        let mut seen = vec![false; self.tiles.len()];
        self.tiles.iter().all(|&tile| {
            let fresh = seen.get(tile as usize).is_some_and(|s| !s);
            if fresh {
                seen[tile as usize] = true;
            }
            fresh
        })
    }
}

/// The mappings screened, at most `limit` (the identity first): orders of the grid over the
/// tiles that change which blocks share a physical pair (pair-aware) and how far apart on the
/// physical grid neighbouring blocks land (the route time grows with their folded column
/// distance, `Target::route_cycles`).
pub fn mappings(tiles: u32, columns: u32, limit: usize) -> Vec<Mapping> {
    let n = tiles;
    let half = n / 2;
    let mut out = vec![Mapping::identity(n)];
    let mut push = |name: &str, f: &dyn Fn(u32) -> u32| {
        let mapping = Mapping {
            name: name.into(),
            tiles: (0..n).map(f).collect(),
        };
        if mapping.is_permutation() && !out.iter().any(|m| m.tiles == mapping.tiles) {
            out.push(mapping);
        }
    };
    push("reversed", &|v| n - 1 - v);
    if n.is_multiple_of(2) {
        // Pair-aware: swap the members of each pair; spread consecutive blocks over buses.
        push("pair_swap", &|v| v ^ 1);
        push("pair_spread", &|v| {
            if v < half {
                2 * v
            } else {
                2 * (v - half) + 1
            }
        });
        push("pair_gather", &|v| (v % 2) * half + v / 2);
    }
    if n.is_multiple_of(4) {
        push("quad_swap", &|v| v ^ 2);
    }
    if columns > 0 && n.is_multiple_of(columns) && n / columns > 1 {
        // Strided: walk the grid column-major over rows of `columns` blocks, so a block's
        // neighbours in the plan's fastest axis are `columns` logical tiles apart (on the
        // C600's map, in another column block: farther along the exchange).
        let rows = n / columns;
        push("snake_columns", &|v| (v % rows) * columns + v / rows);
    }
    for quarter in 1..4u32 {
        push(&format!("rotate_{quarter}q"), &|v| {
            (v + quarter * n / 4) % n
        });
    }
    if n.is_power_of_two() && n > 1 {
        let bits = n.trailing_zeros();
        push("bit_reverse", &|v| v.reverse_bits() >> (32 - bits));
    }
    out.truncate(limit.max(1));
    out
}

/// The transfers turning `home` into the part of `need` inside `window` (`(axis, first,
/// end)`; `None`: all of it), on the mapped tiles.
fn transfers_within(
    home: &Shards,
    need: &Shards,
    window: Option<(usize, u64, u64)>,
    mapping: &Mapping,
    out: &mut Vec<TransferRequest>,
) {
    super::layout::for_each_transfer_within(
        home,
        need,
        window,
        |source, destinations, bytes, count| {
            for _ in 0..count {
                out.push(mapping.transfer(source, destinations, bytes));
            }
        },
    );
}

/// Expands `finalist` of `graph` under `mapping`.
pub fn expand(graph: &Graph, finalist: &Finalist, mapping: &Mapping) -> ExpandedPlan {
    let mut plan = ExpandedPlan::default();
    expand_into(graph, finalist, mapping, 1, None, &mut plan);
    plan
}

fn expand_into(
    graph: &Graph,
    finalist: &Finalist,
    mapping: &Mapping,
    runs: u64,
    report_as: Option<usize>,
    plan: &mut ExpandedPlan,
) {
    for (index, op) in graph.ops.iter().enumerate() {
        let Some(candidate) = finalist.plans.get(index) else {
            continue;
        };
        let reported = report_as.unwrap_or(index);
        if let (OpKind::Repeat { count, body, .. }, Some(body_plan)) =
            (&op.kind, finalist.bodies.get(&index))
        {
            let iterations = *count.max(&1);
            expand_into(
                body,
                body_plan,
                mapping,
                runs * iterations,
                Some(reported),
                plan,
            );
            // What the repeat adds to its bodies (the resident stacks' slice copies and
            // multicasts, the carry between iterations, its operands' moves), as priced:
            // not expanded into transfers, counted whole.
            let repeat = finalist.ops.get(index).copied().unwrap_or_default();
            let body = &body_plan.estimate;
            let compute = |cycles: u64, exchange: u64| cycles.saturating_sub(exchange);
            plan.compute_cycles += runs
                * compute(repeat.cycles, repeat.exchange_cycles)
                    .saturating_sub(iterations * compute(body.cycles, body.exchange_cycles));
            plan.priced_exchange_cycles += runs
                * repeat
                    .exchange_cycles
                    .saturating_sub(iterations * body.exchange_cycles);
            continue;
        }
        let estimate = finalist.ops.get(index).copied().unwrap_or_default();
        plan.compute_cycles += runs * (estimate.cycles - estimate.exchange_cycles);
        // The operands' (home, need) pairs that move.
        let moved: Vec<(usize, Shards, &Shards)> = op
            .operands
            .iter()
            .zip(&candidate.needs)
            .enumerate()
            // The host writes constant vectors where they are read (as the beam prices them).
            .filter(|(_, (operand, _))| !graph.values[**operand].written_where_read())
            .filter_map(|(position, (operand, need))| {
                let recorded = finalist.homes[*operand].as_ref()?;
                // A host value the host streams into this op's AMP order, or one it streamed
                // into another op's, is written by the host for this op as the beam prices it
                // (in this op's order, over the host's home of its blocks): outside repeat
                // bodies, whose arguments are device values.
                let value = &graph.values[*operand];
                let amp = |order| matches!(order, ElementOrder::AmpLeft | ElementOrder::AmpRight);
                let rewritten = report_as.is_none()
                    && matches!(value.origin, Origin::Argument | Origin::Constant)
                    && (host_streamed(value, recorded)
                        || (amp(need.format.order)
                            && host_writes_in_order(value, need, candidate)));
                let home = if rewritten {
                    host_home(value, need, position, candidate)
                } else {
                    (**recorded).clone()
                };
                (home.shards != need.shards || home.format != need.format).then_some((
                    position,
                    home.shards,
                    &need.shards,
                ))
            })
            .collect();
        let steps = candidate.k_steps.max(1);
        let mut transfers = Vec::new();
        if steps > 1 && !candidate.step_slices.is_empty() {
            // Each step moves its slice of each operand (the first also the unsliced ones).
            for step in 0..steps {
                let mut step_transfers = Vec::new();
                for (position, home, need) in &moved {
                    let (position, need) = (*position, *need);
                    let window = match candidate.step_slices.get(position).copied().flatten() {
                        Some((axis, length)) => {
                            Some((axis, u64::from(step) * length, u64::from(step + 1) * length))
                        }
                        None if step == 0 => None,
                        None => continue,
                    };
                    transfers_within(home, need, window, mapping, &mut step_transfers);
                }
                if !step_transfers.is_empty() {
                    plan.phases.push(ExpandedPhase {
                        op: reported,
                        transfers: step_transfers,
                        runs,
                    });
                }
            }
        } else {
            for (_, home, need) in &moved {
                transfers_within(home, need, None, mapping, &mut transfers);
            }
        }
        if !transfers.is_empty() {
            // A K-streamed plan moves its operands one panel per phase.
            let steps = u64::from(candidate.k_steps.max(1));
            if steps > 1 {
                let panel: Vec<TransferRequest> = transfers
                    .iter()
                    .map(|t| TransferRequest {
                        bytes: t.bytes.div_ceil(steps),
                        ..t.clone()
                    })
                    .collect();
                for _ in 0..steps {
                    plan.phases.push(ExpandedPhase {
                        op: reported,
                        transfers: panel.clone(),
                        runs,
                    });
                }
            } else {
                plan.phases.push(ExpandedPhase {
                    op: reported,
                    transfers,
                    runs,
                });
            }
        }
        for internal in &candidate.internal_phases {
            let mut transfers = Vec::new();
            internal.for_each_transfer(|source, destinations, bytes| {
                transfers.push(mapping.transfer(source, destinations, bytes));
            });
            if !transfers.is_empty() {
                plan.phases.push(ExpandedPhase {
                    op: reported,
                    transfers,
                    runs,
                });
            }
        }
    }
}

/// Endpoint loads of a phase on the physical grid: bytes out per send bus and the largest
/// receive load (`cost::receive_load`: bytes in plus a select latency per extra source).
/// Tiles outside the target are skipped.
pub fn physical_loads(transfers: &[TransferRequest], target: &Target) -> (u64, u64) {
    // Indexed by bus and tile (grown as met); a receiver's senders listed once per run.
    let mut bus_out: Vec<u64> = Vec::new();
    let mut tile_in: Vec<(u64, Vec<u32>)> = Vec::new();
    for transfer in transfers {
        if let Ok(physical) = target.logical_to_physical(transfer.source) {
            let bus = target.send_bus(physical.index) as usize;
            if bus_out.len() <= bus {
                bus_out.resize(bus + 1, 0);
            }
            bus_out[bus] += transfer.bytes;
        }
        for &destination in &transfer.destinations {
            let at = destination as usize;
            if tile_in.len() <= at {
                tile_in.resize_with(at + 1, Default::default);
            }
            let (bytes, sources) = &mut tile_in[at];
            *bytes += transfer.bytes;
            if sources.last() != Some(&transfer.source) {
                sources.push(transfer.source);
            }
        }
    }
    let receive = tile_in
        .into_iter()
        .filter(|(_, sources)| !sources.is_empty())
        .map(|(bytes, mut sources)| {
            sources.sort_unstable();
            sources.dedup();
            cost::receive_load(bytes, sources.len() as u64, target)
        })
        .max()
        .unwrap_or(0);
    (bus_out.into_iter().max().unwrap_or(0), receive)
}

/// The expansion's cycles by the endpoint rule on physical buses: compute plus each phase's
/// `exchange_phase_cycles`. Also returns the exchange part and the pressure (the busiest
/// endpoint's cycles summed over phase runs, without the fixed phase cost).
pub fn model(plan: &ExpandedPlan, target: &Target) -> (u64, u64, u64) {
    let mut exchange = plan.priced_exchange_cycles;
    let mut pressure = 0u64;
    for phase in &plan.phases {
        let (bus, tile) = physical_loads(&phase.transfers, target);
        exchange += phase.runs * cost::exchange_phase_cycles(bus, tile, target);
        pressure += phase.runs
            * bus
                .max(tile)
                .div_ceil(u64::from(target.exchange.bytes_per_cycle.value.max(1)));
    }
    (plan.compute_cycles + exchange, exchange, pressure)
}
