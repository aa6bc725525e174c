//! One step of the beam: a partial plan ([`State`]) extended by one candidate of the next op.
//!
//! A step's cost has two parts. What the candidate does with its operands (where each is
//! homed, what moves, what converts: [`OperandMoves`]) depends only on the candidate and on
//! where its operands live, so the beam computes it once per distinct (candidate, operand
//! homes) and every partial plan sharing those homes reuses it. The rest (memory at the op,
//! the running estimate) is a few additions per state.
//!
//! A state is persistent: its per-op records are a shared list ([`Step`]) and it holds only
//! the homes later ops still read, so extending it costs what the op touches, not the
//! program's length (planning a chain is linear in its ops).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use ipu_device::kernels::spec::ElementOrder;
use ipu_device::{KernelSpec, Target};

use super::beam::{Conversion, Finalist, OpEstimate, ProgramEstimate};
use super::candidates::{self, need_memory, Candidate, Need};
use super::cost::{conversion_cycles, MemoryUse, ValueFormat};
use super::graph::{Graph, Op, Origin, ValueId};
use super::layout::{Owners, PhaseLoad, Shards};
use super::{BudgetClass, PlannerOptions};

/// The records of one op in a partial plan, linked to the previous op's.
#[derive(Debug)]
struct Step {
    previous: Option<Arc<Step>>,
    choice: usize,
    plan: Arc<Candidate>,
    estimate: OpEstimate,
    /// Homes first given at this op: its results', and host-written operands'.
    homes: Vec<(ValueId, Arc<Need>)>,
    conversions: Vec<Conversion>,
}

impl Drop for Step {
    /// Unlinks the chain iteratively (a long program's list would otherwise be dropped by
    /// one recursive call per op).
    fn drop(&mut self) {
        let mut next = self.previous.take();
        while let Some(step) = next {
            match Arc::try_unwrap(step) {
                Ok(mut step) => next = step.previous.take(),
                Err(_) => break,
            }
        }
    }
}

/// A partial plan: the ops planned so far.
#[derive(Debug, Clone)]
pub(super) struct State {
    last: Option<Arc<Step>>,
    pub(super) estimate: ProgramEstimate,
    /// Homes of the values later ops still read, sorted by value.
    homes: Vec<(ValueId, Arc<Need>)>,
    /// Shared between states until one changes them (most ops add nothing new).
    active_tile_counts: Arc<BTreeSet<u32>>,
    padding_group_counts: Arc<BTreeMap<u64, u32>>,
    conversion_count: usize,
    live: MemoryUse,
    /// This state's position in its frontier ordered by choices (lexicographically).
    pub(super) rank: usize,
    /// The parent's rank and this state's choice: comparing lineages compares choices
    /// lexicographically, as the parents' ranks order their choice prefixes.
    pub(super) lineage: (usize, usize),
}

/// What later ops see of a state: each still-needed value's format, blocks and tile count.
pub(super) type GroupKey = Vec<(ValueId, ValueFormat, [u32; 3], u32)>;

/// A budget overrun of one extension.
#[derive(Debug, Clone)]
pub(super) struct Shortfall {
    pub class: BudgetClass,
    pub short: u64,
    pub needed: u64,
    pub budget: u64,
    pub candidate: Arc<Candidate>,
}

/// What one step shares between its states (keyed by pointers to values the step holds).
pub(super) struct Loads<'m> {
    /// The exchange load of moving a value from a home to a need.
    transfers: HashMap<(*const Need, *const Need), Arc<PhaseLoad>>,
    /// Each candidate's output home, so states after one candidate share it.
    outputs: HashMap<*const Candidate, Arc<Need>>,
    /// Homes made for host-written values, by value and the need they were made for.
    host_homes: Vec<(ValueId, Need, Arc<Need>)>,
    /// A split GEMM candidate's phases gathering its left operand from a home
    /// (`split_gemm::gather_phases`), by candidate and home.
    gathers: HashMap<GatherKey, Option<GatherPhases>>,
    memo: &'m mut TransferMemo,
}

/// A candidate and the blocking of the home it gathers from.
type GatherKey = (*const Candidate, *const Owners, [u64; 3], [u32; 3]);
type GatherPhases = (Vec<crate::tiling::candidate::InternalPhase>, u64, u64);

impl<'m> Loads<'m> {
    pub(super) fn new(memo: &'m mut TransferMemo) -> Loads<'m> {
        Loads {
            transfers: HashMap::new(),
            outputs: HashMap::new(),
            host_homes: Vec::new(),
            gathers: HashMap::new(),
            memo,
        }
    }
}

/// A blocking moved from, one moved to, and the load.
type MemoEntry = (Shards, Shards, Arc<PhaseLoad>);

/// Exchange loads by the blockings moved between, kept across steps: a program that repeats
/// a layer moves between the same blockings at every repetition. Bounded: it is emptied
/// when it holds [`TransferMemo::CAPACITY`] pairs.
#[derive(Default)]
pub(super) struct TransferMemo {
    loads: HashMap<(u64, u64), Vec<MemoEntry>>,
    len: usize,
}

impl TransferMemo {
    const CAPACITY: usize = 1024;

    fn load(&mut self, from: &Shards, to: &Shards) -> Arc<PhaseLoad> {
        let hash = |shards: &Shards| {
            let mut hasher = std::hash::DefaultHasher::new();
            shards.hash(&mut hasher);
            hasher.finish()
        };
        let key = (hash(from), hash(to));
        if let Some(found) = self
            .loads
            .get(&key)
            .and_then(|bucket| bucket.iter().find(|(f, t, _)| f == from && t == to))
        {
            return found.2.clone();
        }
        if self.len >= Self::CAPACITY {
            self.loads.clear();
            self.len = 0;
        }
        let mut load = PhaseLoad::new(0);
        load.add(from, to);
        let load = Arc::new(load);
        self.loads
            .entry(key)
            .or_default()
            .push((from.clone(), to.clone(), load.clone()));
        self.len += 1;
        load
    }
}

/// What candidate `candidate` does with op's operands given their homes.
#[derive(Debug)]
pub(super) struct OperandMoves {
    /// The candidate made concrete (a candidate that follows an operand reads it where it is).
    candidate: Arc<Candidate>,
    output: Arc<Need>,
    extra_outputs: Vec<Arc<Need>>,
    /// Homes made for host-written operands read here first.
    new_homes: Vec<(ValueId, Arc<Need>)>,
    /// Resident memory added before the op (new homes, constant vectors' extra copies).
    resident: MemoryUse,
    /// Operand buffers of this op (streamed blocks included).
    working: MemoryUse,
    largest: u64,
    phase_cycles: u64,
    phase_row_bytes: u64,
    /// Exchange code the op's phases add beyond what their transfers count.
    code_row_bytes: u64,
    source_cycles: u64,
    destination_cycles: u64,
    conversions: Vec<(ValueId, ValueFormat, ValueFormat)>,
}

/// Candidate `candidate` of `op`, which [`Candidate::follows`] operand `position`, made
/// concrete: that operand's home as its need; with a kernel `spec` (an elementwise op in place
/// or on ranges), what the pointwise strategy makes of the home
/// ([`crate::strategies::pointwise::on_home`]).
fn follow<'h>(
    candidate: &Arc<Candidate>,
    position: usize,
    spec: Option<&KernelSpec>,
    (graph, op): (&Graph, &Op),
    home_of: impl Fn(ValueId) -> Option<&'h Need>,
    target: &Target,
    gathers: &mut HashMap<GatherKey, Option<GatherPhases>>,
) -> Arc<Candidate> {
    if let Some(spec) = spec {
        return match crate::strategies::pointwise::on_home(
            candidate,
            position,
            spec,
            (graph, op),
            home_of,
            target,
        ) {
            Some(concrete) => Arc::new(concrete),
            None => candidate.clone(),
        };
    }
    let Some(home) = op.operands.get(position).and_then(|&v| home_of(v)) else {
        return candidate.clone();
    };
    // Read where it is, in the precision (and FP8 scale) the op asks for: a different
    // precision is a conversion on the owners (priced, and an `ipu.cast` in the plan).
    let mut concrete = (**candidate).clone();
    let need = &candidate.needs[position].format;
    concrete.needs[position] = Need {
        shards: home.shards.clone(),
        format: ValueFormat {
            precision: need.precision,
            scale: need.scale,
            ..home.format
        },
    };
    // A split GEMM gathering its left operand from a device value's blocks (row-major, or a
    // chained split GEMM's AMP-output partial blocks) sends it from where they are.
    if position == 0
        && matches!(
            home.format.order,
            ElementOrder::RowMajor | ElementOrder::AmpOutput
        )
    {
        let shards = &home.shards;
        let key = (
            Arc::as_ptr(candidate),
            Arc::as_ptr(&shards.owners).cast::<Owners>(),
            shards.dims,
            shards.parts,
        );
        let phases = gathers.entry(key).or_insert_with(|| {
            crate::strategies::split_gemm::gather_phases(candidate, shards, target)
        });
        if let Some((phases, cycles, row_bytes)) = phases {
            concrete.internal_phases = phases.clone();
            concrete.internal_exchange_cycles = *cycles;
            concrete.internal_row_bytes = *row_bytes;
        }
    }
    Arc::new(concrete)
}

/// Where the host writes `value`, read first as `need` (operand `position` of `candidate`).
/// Host-written values are placed where their first consumer reads them, each block once;
/// constants are laid out at compile time in the consumer's format; arguments arrive
/// row-major in their own precision, or, for a plan whose lowering streams them in its order
/// (`host_order`: the host gathers strided runs, and encodes FP8 at the need's scale), in the
/// consumer's element order. Constant weights a plan keeps resident, constant vectors
/// (biases, layer-norm scales) and operands a plan has the host replicate are written by the
/// host where they are read.
pub(super) fn host_home(
    value: &super::graph::Value,
    need: &Need,
    position: usize,
    candidate: &Candidate,
) -> Need {
    let format = match value.origin {
        Origin::Constant => need.format,
        _ if host_writes_in_order(value, need, candidate) => need.format,
        _ => ValueFormat::row_major(value.element),
    };
    let shards = if value.written_where_read()
        || (candidate.resident_weights && position == 1 && value.origin == Origin::Constant)
        || candidate.plan.host_replicates(position)
    {
        need.shards.clone()
    } else {
        super::layout::host_home(&need.shards, format.precision.bytes())
    };
    Need { shards, format }
}

/// Whether the host writes `value` (a host value) in the element order `candidate` reads it
/// in: plans that take host operands in their own order (a GEMM's AMP panels), in the
/// value's precision or an FP8 one the host encodes.
pub(super) fn host_writes_in_order(
    value: &super::graph::Value,
    need: &Need,
    candidate: &Candidate,
) -> bool {
    candidate.plan.host_order()
        && (value.element == need.format.precision || need.format.precision.is_fp8())
}

/// Whether `value` is a host value the host streamed into an op's AMP order at `home` (a
/// GEMM's operand panels): not a device value other ops read, each of them has the host write
/// it where it reads it, as the lowering does. (A repeat body's arguments are device values.)
pub(super) fn host_streamed(value: &super::graph::Value, home: &Need) -> bool {
    matches!(value.origin, Origin::Argument | Origin::Constant)
        && matches!(
            home.format.order,
            ElementOrder::AmpLeft | ElementOrder::AmpRight
        )
}

impl OperandMoves {
    /// The moves of `candidate` for op `index` of `graph` when its operands live at
    /// `home_of` (`None`: not yet written, so host-written where this op reads it). `loads`
    /// keeps the exchange load of each (home, need) pair for the step.
    pub(super) fn of<'h>(
        graph: &Graph,
        index: usize,
        candidate: &Arc<Candidate>,
        home_of: impl Fn(ValueId) -> Option<&'h Arc<Need>> + Copy,
        (target, in_body): (&Target, bool),
        loads: &mut Loads<'_>,
    ) -> OperandMoves {
        let op = &graph.ops[index];
        // A host value the host streamed into an op's AMP order (a GEMM's operand panels) is
        // not a device value other ops read: each of them has the host write it where it
        // reads it, as the lowering does. (A repeat body's arguments are device values.)
        let home_of = move |v: ValueId| {
            home_of(v).filter(|home| in_body || !host_streamed(&graph.values[v], home))
        };
        let candidate = match &candidate.follows {
            Some((position, spec)) => follow(
                candidate,
                *position,
                spec.as_ref(),
                (graph, op),
                |v| home_of(v).map(|h| &**h),
                target,
                &mut loads.gathers,
            ),
            None => candidate.clone(),
        };
        // An op that writes its result where an operand lives (in place) shares that home, so
        // the states after it still share their homes (and the next step its moves).
        let output = op
            .operands
            .iter()
            .filter_map(|&v| home_of(v))
            .find(|home| ***home == candidate.output)
            .cloned()
            .unwrap_or_else(|| {
                loads
                    .outputs
                    .entry(Arc::as_ptr(&candidate))
                    .or_insert_with(|| Arc::new(candidate.output.clone()))
                    .clone()
            });
        let mut moves = OperandMoves {
            output,
            extra_outputs: candidate
                .extra_outputs
                .iter()
                .map(|n| Arc::new(n.clone()))
                .collect(),
            candidate: candidate.clone(),
            new_homes: Vec::new(),
            resident: MemoryUse::default(),
            working: MemoryUse::default(),
            largest: 0,
            phase_cycles: 0,
            phase_row_bytes: 0,
            code_row_bytes: 0,
            source_cycles: 0,
            destination_cycles: 0,
            conversions: Vec::new(),
        };
        // The exchange code of a split GEMM gathering a row-major left operand: its runs (the
        // panel phases' transfers count a block's runs as one).
        if let Some(code) = crate::strategies::split_gemm::rows::gather_code(graph, op, &candidate)
        {
            moves.code_row_bytes = code;
        }
        let mut phase: Option<PhaseLoad> = None;
        for (position, (operand, need)) in op.operands.iter().zip(&candidate.needs).enumerate() {
            let value = &graph.values[*operand];
            let made = moves.new_homes.iter().find(|(v, _)| v == operand);
            let written_here = home_of(*operand).is_none();
            let home = match home_of(*operand).or(made.map(|(_, h)| h)) {
                Some(home) => home.clone(),
                None => {
                    // Every state reading this value first here gets the same home.
                    let shared = loads
                        .host_homes
                        .iter()
                        .find(|(v, made_for, _)| v == operand && made_for == need)
                        .map(|(.., home)| home.clone());
                    let home = shared.unwrap_or_else(|| {
                        let home = Arc::new(host_home(value, need, position, &candidate));
                        loads
                            .host_homes
                            .push((*operand, need.clone(), home.clone()));
                        home
                    });
                    let memory = need_memory(&home);
                    moves.resident = moves.resident.plus(memory);
                    moves.largest = moves.largest.max(memory.largest_standard);
                    moves.new_homes.push((*operand, home.clone()));
                    home
                }
            };
            if home.shards == need.shards && home.format == need.format {
                continue;
            }
            // A constant vector is written by the host wherever each op reads it (resident,
            // one more copy per reading layout): no exchange.
            if value.written_where_read() {
                let memory = need_memory(need);
                moves.resident = moves.resident.plus(memory);
                moves.largest = moves.largest.max(memory.largest_standard);
                continue;
            }
            // A row vector the host writes here in pieces: a reader holding a piece has it
            // written into a staging buffer, sends it from there and copies it into place
            // (sent from the buffer the other pieces arrive in, the device would serialize
            // the phase).
            if written_here && super::layout::canonical_dims(&value.shape)[..2] == [1, 1] {
                moves.destination_cycles +=
                    ipu_device::cost::copy_cycles(home.shards.padded_block_bytes(), target);
            }
            let load = loads
                .transfers
                .entry((Arc::as_ptr(&home), std::ptr::from_ref(need)))
                .or_insert_with(|| loads.memo.load(&home.shards, &need.shards));
            match &mut phase {
                None => phase = Some((**load).clone()),
                Some(phase) => phase.merge(load),
            }
            let memory = candidates::streamed_need_memory(need, candidate.k_steps);
            moves.working = moves.working.plus(memory);
            if home.format != need.format {
                let element_count = |shards: &super::layout::Shards| {
                    shards.padded_block_bytes() / u64::from(shards.element_bytes.max(1))
                };
                let (at_source, at_destination) = conversion_cycles(
                    &home.format,
                    &need.format,
                    element_count(&home.shards),
                    element_count(&need.shards),
                    target,
                );
                moves.source_cycles += at_source;
                moves.destination_cycles += at_destination;
                moves.conversions.push((*operand, home.format, need.format));
            }
        }
        if let Some(phase) = phase {
            moves.phase_cycles = phase.cycles(target);
            moves.phase_row_bytes = phase.max_row_bytes();
        }
        moves
    }
}

impl OperandMoves {
    /// Encoded exchange-row bytes the op adds to the busiest tile's code: its operand phase,
    /// its internal phases and the code they count apart.
    fn row_bytes(&self) -> u64 {
        self.phase_row_bytes + self.candidate.internal_row_bytes + self.code_row_bytes
    }
}

impl State {
    pub(super) fn empty() -> State {
        State {
            last: None,
            estimate: ProgramEstimate::default(),
            homes: Vec::new(),
            active_tile_counts: Arc::default(),
            padding_group_counts: Arc::default(),
            conversion_count: 0,
            live: MemoryUse::default(),
            rank: 0,
            lineage: (0, 0),
        }
    }

    /// Where `value` lives, if it is written and still read.
    pub(super) fn home(&self, value: ValueId) -> Option<&Arc<Need>> {
        self.homes
            .binary_search_by_key(&value, |(v, _)| *v)
            .ok()
            .map(|i| &self.homes[i].1)
    }

    /// The state after running op `index` with candidate `choice`, whose operand moves given
    /// this state's homes are `moves`.
    pub(super) fn extend(
        &self,
        graph: &Graph,
        index: usize,
        choice: usize,
        moves: &OperandMoves,
        last_uses: &[Option<usize>],
        (options, target): (&PlannerOptions, &Target),
    ) -> Result<State, Shortfall> {
        let op = &graph.ops[index];
        let candidate = &moves.candidate;
        let output_memory = need_memory(&moves.output);
        let resident = self.live.plus(moves.resident);
        let at_op = resident
            .plus(moves.working)
            .plus(candidate.transient)
            .plus(output_memory);
        // Standard data beyond the standard budget spills into interleaved memory's free
        // room (storage placement places it there: data needs no instruction fetch), so
        // the interleaved-only data and the total are what must fit.
        let checks = [
            (
                BudgetClass::Interleaved,
                at_op.interleaved,
                options.interleaved_budget,
            ),
            (BudgetClass::Total, at_op.total(), options.total_budget),
        ];
        if let Some((class, needed, budget)) = checks
            .into_iter()
            .find(|(_, needed, budget)| needed > budget)
        {
            return Err(Shortfall {
                class,
                short: needed - budget,
                needed,
                budget,
                candidate: candidate.clone(),
            });
        }
        let largest = moves.largest.max(at_op.largest_standard);
        let exchange = moves.phase_cycles + candidate.internal_exchange_cycles;
        let cycles =
            candidate.compute_cycles + moves.source_cycles + moves.destination_cycles + exchange;
        let mut next = self.clone();
        let estimate = &mut next.estimate;
        estimate.cycles += cycles;
        estimate.exchange_cycles += exchange;
        let row_bytes = moves.row_bytes();
        estimate.exchange_row_bytes += row_bytes;
        estimate.peak_standard = estimate.peak_standard.max(at_op.standard);
        estimate.peak_interleaved = estimate.peak_interleaved.max(at_op.interleaved);
        estimate.peak_total = estimate.peak_total.max(at_op.total());
        estimate.maximum_standard_allocation = estimate.maximum_standard_allocation.max(largest);
        // Exchange code beyond the support reservation takes standard memory on every tile for
        // the whole program, so from the data at its peak (which spills into interleaved).
        let code_beyond =
            crate::lower::place::support_beyond_reservation(estimate.exchange_row_bytes, target);
        let needed = estimate.peak_total + code_beyond;
        if code_beyond > 0 && needed > options.total_budget {
            return Err(Shortfall {
                class: BudgetClass::ExchangeCode,
                short: needed - options.total_budget,
                needed,
                budget: options.total_budget,
                candidate: candidate.clone(),
            });
        }
        if !next.active_tile_counts.contains(&candidate.tiles) {
            Arc::make_mut(&mut next.active_tile_counts).insert(candidate.tiles);
        }
        if !candidate.padding_groups.is_empty() {
            let counts = Arc::make_mut(&mut next.padding_group_counts);
            for &group in &candidate.padding_groups {
                *counts.entry(group).or_default() += 1;
            }
        }
        let conversions: Vec<Conversion> = moves
            .conversions
            .iter()
            .enumerate()
            .map(|(k, &(value, from, to))| Conversion {
                op: index,
                operand: self.conversion_count + k,
                value,
                from,
                to,
            })
            .collect();
        next.conversion_count += conversions.len();
        let mut homes = moves.new_homes.clone();
        let mut live = resident.plus(output_memory);
        for (k, &result) in op.results.iter().enumerate() {
            let home = match k.checked_sub(1).and_then(|e| moves.extra_outputs.get(e)) {
                Some(extra) => {
                    live = live.plus(need_memory(extra));
                    extra.clone()
                }
                None => moves.output.clone(),
            };
            homes.push((result, home));
        }
        for operand in op.operands.iter().collect::<BTreeSet<_>>() {
            // Constants are written once at initialization and stay resident.
            if last_uses[*operand] == Some(index)
                && graph.values[*operand].origin != Origin::Constant
            {
                let home = self
                    .home(*operand)
                    .or_else(|| homes.iter().find(|(v, _)| v == operand).map(|(_, h)| h));
                if let Some(home) = home {
                    live = live.minus(need_memory(home));
                }
            }
        }
        next.live = live;
        // Later ops read only the homes of values used after this op.
        next.homes
            .retain(|(value, _)| last_uses[*value].is_some_and(|last| last > index));
        for (value, home) in &homes {
            if last_uses[*value].is_some_and(|last| last > index) {
                if let Err(at) = next.homes.binary_search_by_key(value, |(v, _)| *v) {
                    next.homes.insert(at, (*value, home.clone()));
                }
            }
        }
        next.lineage = (self.rank, choice);
        next.last = Some(Arc::new(Step {
            previous: self.last.clone(),
            choice,
            plan: candidate.clone(),
            estimate: OpEstimate {
                cycles,
                exchange_cycles: exchange,
                memory: at_op,
            },
            homes,
            conversions,
        }));
        Ok(next)
    }

    /// Bytes per tile the state holds into the next op (live values, resident weights).
    pub(super) fn live_total(&self) -> u64 {
        self.live.total()
    }

    /// A state of `cycles` holding `live` into the next op, at `lineage` (for tests of the
    /// beam's pruning).
    #[cfg(test)]
    pub(super) fn holding(cycles: u64, live: MemoryUse, lineage: (usize, usize)) -> State {
        let mut state = State::empty();
        state.estimate.cycles = cycles;
        state.live = live;
        state.lineage = lineage;
        state
    }

    pub(super) fn objectives(&self) -> [u64; 5] {
        let e = &self.estimate;
        [
            e.cycles,
            e.exchange_cycles,
            e.peak_standard,
            e.peak_interleaved,
            e.peak_total,
        ]
    }

    /// The formats later ops see: each still-needed value's format and blocking.
    /// `tile_counts` memoizes each home's tile count.
    pub(super) fn group_key(&self, tile_counts: &mut HashMap<*const Need, u32>) -> GroupKey {
        self.homes
            .iter()
            .map(|(value, home)| {
                let tiles = *tile_counts
                    .entry(Arc::as_ptr(home))
                    .or_insert_with(|| home.shards.tile_count());
                (*value, home.format, home.shards.parts, tiles)
            })
            .collect()
    }

    /// The complete plan this state has built for `graph`.
    pub(super) fn finalist(&self, graph: &Graph) -> Finalist {
        let mut steps = Vec::new();
        let mut at = self.last.as_deref();
        while let Some(step) = at {
            steps.push(step);
            at = step.previous.as_deref();
        }
        steps.reverse();
        let mut homes = vec![None; graph.values.len()];
        for step in &steps {
            for (value, home) in &step.homes {
                homes[*value] = Some(home.clone());
            }
        }
        Finalist {
            choices: steps.iter().map(|s| s.choice).collect(),
            plans: steps.iter().map(|s| s.plan.clone()).collect(),
            estimate: self.estimate,
            ops: steps.iter().map(|s| s.estimate).collect(),
            homes,
            conversions: steps
                .iter()
                .flat_map(|s| s.conversions.iter().cloned())
                .collect(),
            active_tile_counts: (*self.active_tile_counts).clone(),
            padding_group_counts: (*self.padding_group_counts).clone(),
            bodies: BTreeMap::new(),
        }
    }
}
