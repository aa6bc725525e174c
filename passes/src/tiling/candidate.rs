//! What a strategy offers the planner for one op: a [`Candidate`] (its plan, its price, what
//! it needs of each operand and where it leaves its result), and the helpers strategies build
//! candidates with.

use ipu_device::{kernels::spec::KernelSpec, Precision};
use ipu_dialects::plan::{OperandScales, OperatorPlan};

use super::format::{MemoryUse, ValueFormat};
use super::graph::{Graph, Op};
use super::layout::{broadcast_axes, canonical_dims, split_is_exact_cover, Shards};
use super::options::PrecisionPolicy;

/// What a candidate needs of one operand: the blocks each tile reads and their format.
#[derive(Debug, Clone, PartialEq)]
pub struct Need {
    pub shards: Shards,
    pub format: ValueFormat,
}

impl Need {
    /// What the tiles of `grid` (over a result of canonical dims `out_dims`) read of a value of
    /// `shape` in `format`: each tile the block its result block covers, replicated along the
    /// axes the value broadcasts over (for the result itself: one owner per block).
    pub fn on_grid(shape: &[u64], out_dims: [u64; 3], grid: &[u32], format: ValueFormat) -> Need {
        let dims = canonical_dims(shape);
        Need {
            shards: Shards::needed_by_grid(
                dims,
                format.precision.bytes(),
                grid,
                &broadcast_axes(dims, out_dims),
            ),
            format,
        }
    }
}

/// An exchange phase inside an op, described compactly (transfers are generated on demand:
/// the analytical model folds them into endpoint loads, finalist selection schedules them).
#[derive(Debug, Clone, PartialEq)]
pub enum InternalPhase {
    /// K-split reduce-scatter: `groups` groups of `group_size` consecutive tiles; member `kk`
    /// receives slice `kk` of the partials (`slice_bytes`) from every other member.
    ReduceScatter {
        groups: u32,
        group_size: u32,
        slice_bytes: u64,
    },
    /// A tensor moved from one blocking to another.
    Reshard { from: Shards, to: Shards },
    /// Exchange phase `phase` of a strategy whose transfers are generated on demand exactly as
    /// its lowering builds them (a split GEMM's K panel gathers, or its reduction): a grid of a
    /// thousand tiles has hundreds of thousands of transfers, too many to hold per candidate.
    Generated(GeneratedPhase),
}

/// A strategy's plan that generates the transfers of its exchange phases on demand.
pub trait PhaseSource: std::fmt::Debug + Send + Sync + 'static {
    /// Calls `visit(source, destinations, bytes)` for every transfer of phase `phase`.
    fn for_each_transfer(&self, phase: u32, visit: &mut dyn FnMut(u32, &[u32], u64));
    /// The source as `Any`, for comparing two sources.
    fn as_any(&self) -> &dyn std::any::Any;
    /// Whether `other` generates the same transfers (the same plan).
    fn same_as(&self, other: &dyn PhaseSource) -> bool;
}

/// What a strategy's work implements to be a [`PhaseSource`]: the transfers of each phase.
/// Two sources are the same when they are equal values of one type.
pub trait PhaseTransfers: std::fmt::Debug + PartialEq + Send + Sync + 'static {
    /// Calls `visit(source, destinations, bytes)` for every transfer of phase `phase`.
    fn transfers(&self, phase: u32, visit: &mut dyn FnMut(u32, &[u32], u64));
}

impl<T: PhaseTransfers> PhaseSource for T {
    fn for_each_transfer(&self, phase: u32, visit: &mut dyn FnMut(u32, &[u32], u64)) {
        self.transfers(phase, visit)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn same_as(&self, other: &dyn PhaseSource) -> bool {
        other.as_any().downcast_ref::<T>() == Some(self)
    }
}

/// Phases `phases` of `source` on an op of `tiles` tiles, those that move anything: the
/// phases, their cycles by the endpoint rule over their transfers, and the encoded row bytes
/// of the tile with the most over all of them (a tile's exchange code holds the rows of every
/// phase of the program at once, so a tile's rows add up over the phases).
pub fn generated_phases(
    source: std::sync::Arc<dyn PhaseSource>,
    phases: impl IntoIterator<Item = u32>,
    tiles: u32,
    target: &ipu_device::Target,
) -> (Vec<InternalPhase>, u64, u64) {
    let mut cycles = 0;
    let mut row_bytes: Vec<u64> = Vec::new();
    let mut kept = Vec::new();
    for phase in phases {
        let phase = InternalPhase::Generated(GeneratedPhase {
            source: source.clone(),
            phase,
        });
        let mut load = super::layout::PhaseLoad::new(tiles);
        let mut transfers = 0usize;
        phase.for_each_transfer(|from, destinations, bytes| {
            load.add_transfer(from, destinations, bytes);
            transfers += 1;
        });
        if transfers > 0 {
            super::layout::add_per_tile(&mut row_bytes, &load.row_bytes);
            cycles += load.cycles(target);
            kept.push(phase);
        }
    }
    (kept, cycles, row_bytes.into_iter().max().unwrap_or(0))
}

/// Phase `phase` of `source`'s exchange phases.
#[derive(Debug, Clone)]
pub struct GeneratedPhase {
    pub source: std::sync::Arc<dyn PhaseSource>,
    pub phase: u32,
}

impl PartialEq for GeneratedPhase {
    fn eq(&self, other: &GeneratedPhase) -> bool {
        self.phase == other.phase && self.source.same_as(other.source.as_ref())
    }
}

impl InternalPhase {
    /// Calls `visit(source, destinations, bytes)` for every transfer.
    pub fn for_each_transfer(&self, mut visit: impl FnMut(u32, &[u32], u64)) {
        match self {
            InternalPhase::ReduceScatter {
                groups,
                group_size,
                slice_bytes,
            } => {
                for group in 0..*groups {
                    for member in 0..*group_size {
                        let home = group * group_size + member;
                        for other in 0..*group_size {
                            if other != member {
                                visit(group * group_size + other, &[home], *slice_bytes);
                            }
                        }
                    }
                }
            }
            InternalPhase::Reshard { from, to } => {
                super::layout::for_each_transfer(from, to, visit)
            }
            InternalPhase::Generated(GeneratedPhase { source, phase }) => {
                source.for_each_transfer(*phase, &mut visit)
            }
        }
    }
}

/// One way to run an op.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub plan: OperatorPlan,
    /// Tiles the plan uses.
    pub tiles: u32,
    pub needs: Vec<Need>,
    /// Where the result lives afterwards (one owner per block) and its format.
    pub output: Need,
    /// Cycles of the busiest tile's kernel calls.
    pub compute_cycles: u64,
    /// Exchange phases inside the op (K-split reduction, materialized attention scores).
    pub internal_exchange_cycles: u64,
    pub internal_row_bytes: u64,
    /// The operand exchange runs in this many phases, each bringing the next K panel
    /// (double-buffered), so the operand blocks never have to fit a tile whole.
    pub k_steps: u32,
    /// With `k_steps` > 1, what each operand moves per step: `Some((axis, length))`, the
    /// need's slice `[s * length, (s + 1) * length)` along `axis` in step `s` (an attention's
    /// key blocks); `None`, all of it in the first step. Empty: each step moves an equal share
    /// of every operand.
    pub step_slices: Vec<Option<(usize, u64)>>,
    /// The right operand is a constant the host writes, replicated, exactly where this plan
    /// reads it (at initialization, so runs move no weights; it costs its replicas' memory
    /// for the whole program).
    pub resident_weights: bool,
    /// The internal phases, for expansion (`ipu.repeat` candidates expand through their body).
    pub internal_phases: Vec<InternalPhase>,
    /// Per-tile working memory beyond the operands' and result's buffers.
    pub transient: MemoryUse,
    pub kernels: Vec<KernelSpec>,
    /// Padding granularities this plan pads a value to (16-column AMP groups, blocks).
    pub padding_groups: Vec<u64>,
    /// For `ipu.repeat`: the body's plan choices.
    pub body_choices: Option<Vec<usize>>,
    /// For `ipu.repeat`: the per-tile total budget the body was planned within (tighter than
    /// the program's when resident stacks take memory), which the choices' candidate lists
    /// depend on.
    pub body_budget: Option<u64>,
    pub body_cycles: Option<(u64, u64)>,
    /// Where the results after the first live (an `ipu.repeat` carrying several values).
    pub extra_outputs: Vec<Need>,
    /// `(operand position, kernel)`: the op reads that operand where it already is (the
    /// beam takes the operand's home as its need: a split GEMM gathering its A panels from
    /// a device value's ranges, priced in its internal phases). With a kernel, the op runs
    /// there in place (a bias add or GeLU of a split GEMM's ranges): the home is also the
    /// result's, and the kernel is priced over the home's block.
    pub follows: Option<(usize, Option<KernelSpec>)>,
}

impl Candidate {
    /// This candidate with `phases` of `source` as its internal phases, priced by the endpoint
    /// rule on its tiles ([`generated_phases`]: their cycles and the busiest tile's row bytes).
    pub(crate) fn with_generated_phases(
        self,
        source: std::sync::Arc<dyn PhaseSource>,
        phases: impl IntoIterator<Item = u32>,
        target: &ipu_device::Target,
    ) -> Candidate {
        let (internal_phases, internal_exchange_cycles, internal_row_bytes) =
            generated_phases(source, phases, self.tiles, target);
        Candidate {
            internal_phases,
            internal_exchange_cycles,
            internal_row_bytes,
            ..self
        }
    }

    /// A candidate of `plan` on `tiles` tiles reading `needs` and leaving `output`, with
    /// nothing else yet: no cycles, kernels, internal phases, padding, repeat body or working
    /// memory; one K step. Callers set the rest with struct update syntax.
    pub(crate) fn new(plan: OperatorPlan, tiles: u32, needs: Vec<Need>, output: Need) -> Candidate {
        Candidate {
            plan,
            tiles,
            needs,
            output,
            compute_cycles: 0,
            internal_exchange_cycles: 0,
            internal_row_bytes: 0,
            internal_phases: Vec::new(),
            k_steps: 1,
            step_slices: Vec::new(),
            resident_weights: false,
            transient: MemoryUse::default(),
            kernels: Vec::new(),
            padding_groups: Vec::new(),
            body_choices: None,
            body_budget: None,
            body_cycles: None,
            extra_outputs: Vec::new(),
            follows: None,
        }
    }

    /// A candidate that runs `spec` where operand `position` already is
    /// ([`Candidate::follows`]): `needs` and `output` are placeholders the beam replaces with
    /// the operand's home, and prices the kernel over its block.
    pub(crate) fn following(
        plan: OperatorPlan,
        needs: Vec<Need>,
        output: Need,
        (position, spec): (usize, KernelSpec),
    ) -> Candidate {
        Candidate {
            kernels: vec![spec.clone()],
            follows: Some((position, Some(spec))),
            ..Candidate::new(plan, 1, needs, output)
        }
    }
}

/// Divisors of `n`, ascending.
pub fn divisors(n: u32) -> Vec<u32> {
    let mut small = Vec::new();
    let mut large = Vec::new();
    let mut d = 1;
    while d * d <= n {
        if n.is_multiple_of(d) {
            small.push(d);
            if d * d != n {
                large.push(n / d);
            }
        }
        d += 1;
    }
    large.reverse();
    small.extend(large);
    small
}

/// A three-axis grid as the plans hold it (the planner's grids over canonical shapes).
pub(crate) fn grid3(grid: &[u32]) -> [u32; 3] {
    [0, 1, 2].map(|axis| grid.get(axis).copied().unwrap_or(1))
}

pub(crate) fn u32_of(value: u64) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}

/// The arithmetic precision of vector kernels under a policy (the device has no FP8
/// arithmetic outside the AMP).
pub(crate) fn vector_precision(policy: PrecisionPolicy) -> Precision {
    match policy {
        PrecisionPolicy::F32 => Precision::F32,
        PrecisionPolicy::Native | PrecisionPolicy::F16 | PrecisionPolicy::Fp8 => Precision::F16,
    }
}

/// The precision a vector op computes in: its result's element type (the lowering runs
/// layer norms, softmaxes, adds and GeLUs in the graph's types, whatever the policy sets for
/// the AMP's inputs), or the policy's vector precision for an FP8 result.
pub(crate) fn op_vector_precision(graph: &Graph, op: &Op, policy: PrecisionPolicy) -> Precision {
    match op.results.first().map(|&r| graph.values[r].element) {
        Some(element @ (Precision::F16 | Precision::F32)) => element,
        _ => vector_precision(policy),
    }
}

pub(crate) fn all_valid(kernels: &[KernelSpec]) -> bool {
    kernels.iter().all(|spec| spec.validate().is_ok())
}

/// Tile grids of `axes.len()` factors whose product divides an active tile count, each factor
/// splitting its axis (size in `axes`, `None`: the factor must be 1... handled by the caller)
/// without an empty block.
pub(crate) fn grids(active: &[u32], sizes: &[u64]) -> Vec<Vec<u32>> {
    let mut out = Vec::new();
    for &count in active {
        let mut stack = vec![(Vec::<u32>::new(), count)];
        while let Some((prefix, remaining)) = stack.pop() {
            if prefix.len() == sizes.len() {
                out.push(prefix);
                continue;
            }
            for d in divisors(remaining) {
                if split_is_exact_cover(sizes[prefix.len()], d) {
                    let mut next = prefix.clone();
                    next.push(d);
                    stack.push((next, remaining / d));
                }
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The plan's FP8 operand scales from the formats' exponents (saturated to the plan's integer
/// width; the plan codec refuses exponents outside the cast's range).
pub(crate) fn operand_scales([lhs, rhs]: [i64; 2]) -> OperandScales {
    let exponent =
        |scale: i64| i32::try_from(scale).unwrap_or(if scale < 0 { i32::MIN } else { i32::MAX });
    OperandScales {
        lhs: exponent(lhs),
        rhs: exponent(rhs),
    }
}

/// The rule of [`PrecisionPolicy::input_for`] for a policy input precision `policy`.
pub(crate) fn product_input(
    policy: Precision,
    host: Precision,
    result: Precision,
    returned_only: bool,
) -> Precision {
    let partials = ipu_device::kernels::describe::default_partials(policy);
    if partials == result || (policy == Precision::F32 && returned_only) {
        policy
    } else {
        host
    }
}

/// Whether value `v` of `graph` is only returned (no op reads it).
pub(crate) fn returned_only(graph: &Graph, v: usize) -> bool {
    graph.outputs.contains(&v) && !graph.ops.iter().any(|op| op.operands.contains(&v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tiling::layout::{RECEIVE_ROW_BYTES, SEND_ROW_BYTES};

    /// Phase p: tile p sends to tile 3 (each phase a different sender, one receiver for all).
    #[derive(Debug, PartialEq)]
    struct IntoThree;

    impl PhaseTransfers for IntoThree {
        fn transfers(&self, phase: u32, visit: &mut dyn FnMut(u32, &[u32], u64)) {
            if phase < 3 {
                visit(phase, &[3], 64);
            }
        }
    }

    #[test]
    fn a_tiles_exchange_rows_add_up_over_the_phases() {
        let target = ipu_device::Target::c600();
        let (phases, cycles, row_bytes) =
            generated_phases(std::sync::Arc::new(IntoThree), 0..5, 4, &target);
        // Phases 3 and 4 move nothing: not kept.
        assert_eq!(phases.len(), 3);
        assert!(cycles > 0);
        // Tile 3 holds a receive row for each of the three phases; each sender one send row.
        assert_eq!(row_bytes, 3 * RECEIVE_ROW_BYTES);
        assert!(row_bytes > SEND_ROW_BYTES);
    }
}
