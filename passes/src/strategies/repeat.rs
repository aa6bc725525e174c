//! `ipu.repeat`: `count` iterations of a body function, planned once and lowered once inside a
//! structured repeat step (the device runs the body's steps `count` times; nothing is unrolled).
//!
//! The body is planned by the planner's beam like any function; this strategy owns what a
//! repeat adds to it, for the planner and the lowering alike:
//! * which repeats can run at all ([`repeat_shape`]: a count the device's repeat step holds,
//!   one body result per carried value);
//! * the carry: between iterations each body result moves from where the body leaves it to
//!   where the next iteration reads it ([`Carry`]), nothing when they coincide;
//! * the price: `count` times the body, `count - 1` carries ([`RepeatPrice`]).

use ipu_device::{KernelSpec, Target};
use ipu_dialects::plan::{OperatorPlan, RepeatPlan};

use crate::tiling::candidate::{Candidate, Need};
use crate::tiling::layout::{add_per_tile, PhaseLoad, Shards};
use crate::tiling::MemoryUse;

/// Why a repeat of `count` iterations over a body returning `body_results` values cannot run
/// with `carried` carried values, or the count as the device's repeat step holds it.
pub fn repeat_shape(
    name: &str,
    count: u64,
    body_results: usize,
    carried: usize,
) -> Result<u32, String> {
    let count = u32::try_from(count).map_err(|_| format!("count {count} is too large"))?;
    if body_results != carried {
        return Err(format!(
            "body @{name} returns {body_results} values for {carried} carried"
        ));
    }
    Ok(count)
}

/// Checks that `plan` is a repeat plan for `count` iterations: the lowering follows nothing else.
pub fn followed_plan(plan: Option<&OperatorPlan>, count: u64) -> Result<(), String> {
    match plan {
        None => Ok(()),
        Some(OperatorPlan::Repeat(RepeatPlan { count: planned, .. })) if *planned == count => {
            Ok(())
        }
        Some(OperatorPlan::Repeat(RepeatPlan { count: planned, .. })) => Err(format!(
            "its plan repeats {planned} times but the op repeats {count} times"
        )),
        Some(_) => Err("not a repeat plan".into()),
    }
}

/// The moves between two iterations: each carried value from where the body leaves it (its
/// result's home) to where the body reads it (its argument's home).
pub struct Carry {
    load: PhaseLoad,
}

impl Carry {
    /// The carry of a body reading its arguments at `reads` and leaving its results at
    /// `leaves` (in carried order). A value left where it is read does not move; one left in
    /// another layout of the same dims is gathered block by block.
    pub fn between(leaves: &[Need], reads: &[Need], tiles: u32) -> Carry {
        let mut load = PhaseLoad::new(tiles);
        for (left, read) in leaves.iter().zip(reads) {
            if left.shards.dims == read.shards.dims && left.shards != read.shards {
                load.add(&left.shards, &read.shards);
            }
        }
        Carry { load }
    }

    /// Cycles of one carry phase.
    pub fn cycles(&self, target: &Target) -> u64 {
        self.load.cycles(target)
    }

    /// Encoded exchange-row bytes of the busiest tile in one carry phase.
    pub fn max_row_bytes(&self) -> u64 {
        self.load.max_row_bytes()
    }
}

/// What resident per-iteration stacks add to every iteration (the lowering's
/// `lower::graph::stacks`): each block of a stack's slice is stored once, cut into one piece
/// per reader, each piece on its least loaded reader, which copies the iteration's slice of it
/// out of its store (`CopySlice`) and multicasts it to the block's other readers in the
/// exchange phase of the op that reads it (stacks the same op reads share that phase); the
/// holders advance the iteration counter (`Count`). The stores stay resident: `slices` copies
/// of every held block.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResidentStacks {
    /// Compute cycles per iteration of the busiest holder (copies and the counter's advance).
    pub compute_cycles: u64,
    /// Cycles per iteration of the multicast phases, one per reading op (0 when no block has
    /// several readers).
    pub exchange_cycles: u64,
    /// Encoded exchange-row bytes of the busiest tile over those phases.
    pub row_bytes: u64,
    /// Store bytes of the busiest holder.
    pub store_bytes: u64,
}

/// Stores are laid out in 16-byte units.
pub const STORE_ALIGNMENT: u64 = 16;

/// The most bytes of a stack's slice a holder takes while another tile can: twice an even
/// share of the slice's `slice_bytes` over `tiles` tiles.
pub fn holder_cap(slice_bytes: u64, tiles: u32) -> u64 {
    2 * slice_bytes
        .div_ceil(u64::from(tiles.max(1)))
        .div_ceil(STORE_ALIGNMENT)
        * STORE_ALIGNMENT
}

/// The size pieces of a resident stack read by one tile are cut to (bytes of a slice of
/// `slice_bytes` on `tiles` tiles): twice an even share, at least 256 bytes, so a block the
/// planner homes whole on one tile (a bias vector) spreads over several holders while a
/// weight block of a GEMM grid stays whole on its reader.
pub fn piece_bytes(slice_bytes: u64, tiles: u32) -> u64 {
    (2 * slice_bytes.div_ceil(u64::from(tiles.max(1)))).max(256)
}

/// Which tile stores each piece of the resident stacks, for the planner and the lowering
/// alike: a piece goes to its least loaded reader whose part of the stack stays within the
/// stack's cap (it copies its own slice, no exchange), else to the least loaded tile holding
/// none of the stack yet, which multicasts it to every reader (so a vector one tile reads
/// puts one piece per stack there, and its other pieces elsewhere). Each tile's pieces
/// follow each other in 16-byte units.
pub struct Holders {
    load: Vec<u64>,
    by_load: std::collections::BTreeSet<(u64, u32)>,
}

impl Holders {
    pub fn new(tiles: u32) -> Holders {
        Holders {
            load: vec![0; tiles.max(1) as usize],
            by_load: (0..tiles.max(1)).map(|t| (0, t)).collect(),
        }
    }

    /// The holder of a piece of `bytes` read by `readers`, one of the pieces of a stack whose
    /// pieces so far `stack` records (bytes per holder), and the piece's offset in that
    /// holder's part of the stack's slice. A stack's store is one buffer as large on every
    /// holder as on its busiest, so no holder's part may pass `cap` while another tile can
    /// take the piece: the piece goes to its least loaded reader whose part stays within
    /// `cap` (a local copy, no exchange), else to the least loaded tile holding none of the
    /// stack yet (which multicasts it to the readers).
    pub fn place(
        &mut self,
        readers: &[u32],
        bytes: u64,
        (stack, cap): (&mut std::collections::BTreeMap<u32, u64>, u64),
    ) -> (u32, u64) {
        let aligned = bytes.div_ceil(STORE_ALIGNMENT) * STORE_ALIGNMENT;
        let tiles = self.load.len() as u32;
        let part = |t: u32| stack.get(&t).copied().unwrap_or(0);
        let reader = readers
            .iter()
            .copied()
            .filter(|&t| t < tiles && part(t) + aligned <= cap.max(aligned))
            .min_by_key(|&t| (self.load[t as usize], t));
        let holder = reader.unwrap_or_else(|| {
            self.by_load
                .iter()
                .find(|(_, t)| !stack.contains_key(t))
                .or(self.by_load.first())
                .map_or(0, |&(_, t)| t)
        });
        let load = self.load[holder as usize];
        self.by_load.remove(&(load, holder));
        self.load[holder as usize] = load + aligned;
        self.by_load.insert((load + aligned, holder));
        let part = stack.entry(holder).or_default();
        let offset = *part;
        *part += aligned;
        (holder, offset)
    }

    /// Bytes of a slice the busiest tile stores.
    pub fn max(&self) -> u64 {
        self.load.iter().copied().max().unwrap_or(0)
    }

    /// The tiles storing anything, ascending.
    pub fn tiles(&self) -> Vec<u32> {
        (0..self.load.len() as u32)
            .filter(|&t| self.load[t as usize] > 0)
            .collect()
    }

    /// Bytes of a slice tile `tile` stores.
    pub fn load(&self, tile: u32) -> u64 {
        self.load.get(tile as usize).copied().unwrap_or(0)
    }
}

impl ResidentStacks {
    /// The price of stacks read at `homes` (each slice's shards, where the body's ops read
    /// it, its slices, and the reading op: the stacks of one op share its phase), on `tiles`
    /// tiles.
    pub fn of(homes: &[(&Shards, u32, usize)], tiles: u32, target: &Target) -> ResidentStacks {
        if homes.is_empty() {
            return ResidentStacks::default();
        }
        let mut copy_cycles: Vec<u64> = vec![0; tiles as usize];
        let mut holders = Holders::new(tiles);
        let mut loads: std::collections::BTreeMap<usize, PhaseLoad> = Default::default();
        let mut stores: Vec<u64> = vec![0; tiles as usize];
        for &(read, slices, reader) in homes {
            let load = loads.entry(reader).or_insert_with(|| PhaseLoad::new(tiles));
            let slice_bytes = read.dims.iter().product::<u64>() * u64::from(read.element_bytes);
            let unit = piece_bytes(slice_bytes, tiles);
            let cap = holder_cap(slice_bytes, tiles);
            let mut part: std::collections::BTreeMap<u32, u64> = Default::default();
            for (block, owners) in read.owners.iter().enumerate() {
                let bytes = read
                    .block_ranges(block)
                    .iter()
                    .map(|(a, b)| b - a)
                    .product::<u64>()
                    * u64::from(read.element_bytes);
                // Cut into one piece per reader, or into pieces of about `unit` bytes.
                let pieces = (owners.len() as u64).max(bytes.div_ceil(unit)).max(1);
                let per = bytes.div_ceil(pieces).div_ceil(8) * 8;
                let mut first = 0;
                while first < bytes {
                    let piece = per.min(bytes - first);
                    first += piece;
                    let (holder, _) = holders.place(owners, piece, (&mut part, cap));
                    let spec = KernelSpec::CopySlice {
                        bytes: u32::try_from(piece).unwrap_or(u32::MAX),
                        stride: 1,
                        slices: 1,
                    };
                    if let Some(c) = copy_cycles.get_mut(holder as usize) {
                        *c += ipu_device::cost::kernel_cycles(&spec, target);
                    }
                    let receivers: Vec<u32> =
                        owners.iter().copied().filter(|&t| t != holder).collect();
                    if !receivers.is_empty() {
                        load.add_transfer(holder, &receivers, piece);
                    }
                }
            }
            // Each stack's store is one buffer on its holders sized by its busiest holder's
            // part, `slices` times.
            let most = part
                .values()
                .copied()
                .max()
                .unwrap_or(0)
                .max(STORE_ALIGNMENT);
            for &tile in part.keys() {
                if let Some(bytes) = stores.get_mut(tile as usize) {
                    *bytes += most * u64::from(slices);
                }
            }
        }
        let count = ipu_device::cost::kernel_cycles(&KernelSpec::Count, target);
        let compute_cycles = copy_cycles
            .iter()
            .enumerate()
            .filter(|&(t, _)| holders.load(t as u32) > 0)
            .map(|(_, &c)| c + count)
            .max()
            .unwrap_or(0);
        let mut row_bytes = Vec::new();
        for load in loads.values() {
            add_per_tile(&mut row_bytes, &load.row_bytes);
        }
        ResidentStacks {
            compute_cycles,
            exchange_cycles: loads.values().map(|load| load.cycles(target)).sum(),
            row_bytes: row_bytes.into_iter().max().unwrap_or(0),
            store_bytes: stores.into_iter().max().unwrap_or(0),
        }
    }
}

/// The body as planned once: its estimate and the homes of its arguments and results.
pub struct PlannedBody {
    /// Whole-body cycles, exchange included.
    pub cycles: u64,
    pub exchange_cycles: u64,
    pub exchange_row_bytes: u64,
    /// Peak per-tile memory while the body runs.
    pub memory: MemoryUse,
    /// Where the body reads its arguments (the carried values), in order.
    pub reads: Vec<Need>,
    /// Where the body leaves its results, in order (at least one: a body without results
    /// is given its first value's home).
    pub leaves: Vec<Need>,
    /// The most tiles any of its ops uses.
    pub tiles: u32,
    /// Its kernels.
    pub kernels: Vec<KernelSpec>,
    /// The position of each body op's plan among that op's candidates.
    pub choices: Vec<usize>,
    /// Its resident per-iteration stacks.
    pub stacks: ResidentStacks,
}

/// What `count` iterations of a planned body cost.
pub struct RepeatPrice {
    pub compute_cycles: u64,
    pub exchange_cycles: u64,
    pub row_bytes: u64,
}

impl RepeatPrice {
    /// `count` bodies (at least one: a repeat of none is priced as one) and a carry between
    /// each two, its phase over `carry_tiles` tiles.
    pub fn of(count: u64, body: &PlannedBody, carry_tiles: u32, target: &Target) -> RepeatPrice {
        let iterations = count.max(1);
        let carry = Carry::between(&body.leaves, &body.reads, carry_tiles);
        let stacks = &body.stacks;
        RepeatPrice {
            compute_cycles: (body.cycles - body.exchange_cycles + stacks.compute_cycles)
                * iterations,
            exchange_cycles: (body.exchange_cycles + stacks.exchange_cycles) * iterations
                + carry.cycles(target) * (iterations - 1),
            row_bytes: body.exchange_row_bytes + carry.max_row_bytes() + stacks.row_bytes,
        }
    }
}

/// The candidate of repeating `body` `count` times, with the body's plan choices recorded in
/// the plan: the repeat reads its carried operands where the body reads its arguments and
/// leaves its results where the body leaves them.
pub fn candidate(count: u64, body: PlannedBody, carry_tiles: u32, target: &Target) -> Candidate {
    let price = RepeatPrice::of(count, &body, carry_tiles, target);
    let PlannedBody {
        cycles,
        exchange_cycles,
        mut memory,
        reads,
        mut leaves,
        tiles,
        kernels,
        choices,
        stacks,
        ..
    } = body;
    // The carried values the body reads are homed where the repeat reads them, which the
    // program's own accounting holds already: the body's peak counts them once more.
    if stacks.store_bytes > 0 {
        for read in &reads {
            let carried = crate::tiling::format::shard_memory(&read.shards, &read.format);
            memory = memory.minus(carried);
        }
    }
    // The stores stay for the whole program; counted with the body's peak.
    memory.standard += stacks.store_bytes;
    memory.largest_standard = memory.largest_standard.max(stacks.store_bytes);
    let (cycles, exchange_cycles) = (
        cycles + stacks.compute_cycles + stacks.exchange_cycles,
        exchange_cycles + stacks.exchange_cycles,
    );
    let plan = OperatorPlan::Repeat(RepeatPlan {
        count,
        body_choices: choices
            .iter()
            .map(|&c| u32::try_from(c).unwrap_or(u32::MAX))
            .collect(),
    });
    let output = leaves.remove(0);
    Candidate {
        compute_cycles: price.compute_cycles,
        internal_exchange_cycles: price.exchange_cycles,
        internal_row_bytes: price.row_bytes,
        transient: memory,
        kernels,
        body_choices: Some(choices),
        body_cycles: Some((cycles, exchange_cycles)),
        extra_outputs: leaves,
        ..Candidate::new(plan, tiles, reads, output)
    }
}

#[cfg(test)]
mod tests {
    use ipu_device::Precision;

    use super::*;
    use crate::tiling::layout::Shards;
    use crate::tiling::ValueFormat;

    /// A 64 x 256 f16 value in `parts` blocks from tile `first`.
    fn home(parts: [u32; 3], first: u32) -> Need {
        Need {
            shards: Shards::homed([1, 64, 256], parts, 2, first),
            format: ValueFormat::row_major(Precision::F16),
        }
    }

    fn body(reads: Vec<Need>, leaves: Vec<Need>) -> PlannedBody {
        PlannedBody {
            cycles: 10_000,
            exchange_cycles: 1_000,
            exchange_row_bytes: 512,
            memory: MemoryUse::default(),
            reads,
            leaves,
            tiles: 16,
            kernels: Vec::new(),
            choices: vec![0, 2],
            stacks: ResidentStacks::default(),
        }
    }

    /// A slice read once per block is copied out of its stores and moves nowhere; one read
    /// by every tile of a grid row is stored once per block and multicast; the stores hold
    /// every slice of what each tile holds.
    #[test]
    fn resident_stacks_copy_their_slice_and_multicast_replicated_blocks() {
        let target = Target::c600();
        // A 64 x 256 F16 slice in 16 row blocks, one per tile: 2 KiB each.
        let spread = Shards::homed([1, 64, 256], [1, 16, 1], 2, 0);
        let alone = ResidentStacks::of(&[(&spread, 27, 0)], 16, &target);
        assert_eq!(alone.exchange_cycles, 0);
        assert_eq!(alone.row_bytes, 0);
        assert_eq!(alone.store_bytes, 27 * 2048);
        let copy = ipu_device::cost::kernel_cycles(
            &KernelSpec::CopySlice {
                bytes: 2048,
                stride: 2048,
                slices: 27,
            },
            &target,
        );
        let count = ipu_device::cost::kernel_cycles(&KernelSpec::Count, &target);
        assert_eq!(alone.compute_cycles, copy + count);
        // The same slice needed by a 4 x 4 grid whose rows replicate it (each of 4 column
        // blocks of 8 KiB read by 4 tiles): each block cut into a 2 KiB piece per reader,
        // every tile storing one piece and multicasting it to the block's 3 other readers.
        let replicated = Shards::needed_by_grid([1, 64, 256], 2, &[4, 4], &[None, Some(2)]);
        let shared = ResidentStacks::of(&[(&replicated, 27, 0)], 16, &target);
        assert_eq!(shared.store_bytes, 27 * 2048);
        assert!(shared.exchange_cycles > 0 && shared.row_bytes > 0);
        // Two such stacks one op reads: two pieces per tile, in the same phase.
        let both = ResidentStacks::of(&[(&replicated, 27, 0), (&replicated, 27, 0)], 16, &target);
        assert_eq!(both.store_bytes, 2 * 27 * 2048);
        assert_eq!(both.row_bytes, 2 * shared.row_bytes);
        assert!(
            both.exchange_cycles > shared.exchange_cycles,
            "{both:?} {shared:?}"
        );
        // Read by two ops: a phase each (each with its fixed cost), as the lowering moves
        // them with each op's operands.
        let apart = ResidentStacks::of(&[(&replicated, 27, 0), (&replicated, 27, 3)], 16, &target);
        assert_eq!(apart.store_bytes, both.store_bytes);
        assert_eq!(apart.row_bytes, both.row_bytes);
        assert_eq!(apart.exchange_cycles, 2 * shared.exchange_cycles);
        assert!(apart.exchange_cycles > both.exchange_cycles);
        assert_eq!(
            ResidentStacks::of(&[], 16, &target),
            ResidentStacks::default()
        );
    }

    #[test]
    fn a_repeat_needs_one_body_result_per_carried_value_and_a_count_the_device_holds() {
        assert_eq!(repeat_shape("layer", 12, 2, 2), Ok(12));
        assert_eq!(
            repeat_shape("layer", 12, 1, 2),
            Err("body @layer returns 1 values for 2 carried".into())
        );
        assert_eq!(
            repeat_shape("layer", 1 << 40, 1, 1),
            Err("count 1099511627776 is too large".into())
        );
    }

    #[test]
    fn the_lowering_follows_only_a_repeat_plan_of_the_ops_count() {
        let plan = |count| {
            OperatorPlan::Repeat(RepeatPlan {
                count,
                body_choices: vec![],
            })
        };
        assert_eq!(followed_plan(None, 3), Ok(()));
        assert_eq!(followed_plan(Some(&plan(3)), 3), Ok(()));
        assert_eq!(
            followed_plan(Some(&plan(4)), 3),
            Err("its plan repeats 4 times but the op repeats 3 times".into())
        );
    }

    #[test]
    fn a_value_left_where_it_is_read_is_not_carried_and_one_moved_is() {
        let target = Target::c600();
        let same = Carry::between(&[home([1, 16, 1], 0)], &[home([1, 16, 1], 0)], 16);
        assert_eq!((same.cycles(&target), same.max_row_bytes()), (0, 0));
        let moved = Carry::between(&[home([1, 16, 1], 0)], &[home([1, 1, 16], 0)], 16);
        assert!(moved.cycles(&target) > 0);
        assert!(moved.max_row_bytes() > 0);
    }

    #[test]
    fn the_price_is_count_bodies_and_a_carry_between_each_two() {
        let target = Target::c600();
        let still = body(vec![home([1, 16, 1], 0)], vec![home([1, 16, 1], 0)]);
        let price = RepeatPrice::of(5, &still, 16, &target);
        assert_eq!(
            (price.compute_cycles, price.exchange_cycles, price.row_bytes),
            (45_000, 5_000, 512)
        );
        // A repeat of none is priced as one body.
        assert_eq!(
            RepeatPrice::of(0, &still, 16, &target).compute_cycles,
            9_000
        );
        let moving = body(vec![home([1, 1, 16], 0)], vec![home([1, 16, 1], 0)]);
        let carry = Carry::between(&moving.leaves, &moving.reads, 16).cycles(&target);
        let price = RepeatPrice::of(5, &moving, 16, &target);
        assert_eq!(price.exchange_cycles, 5_000 + 4 * carry);
        let candidate = candidate(5, moving, 16, &target);
        assert_eq!(candidate.internal_exchange_cycles, 5_000 + 4 * carry);
        assert_eq!(candidate.body_choices, Some(vec![0, 2]));
        assert_eq!(
            candidate.plan,
            OperatorPlan::Repeat(RepeatPlan {
                count: 5,
                body_choices: vec![0, 2]
            })
        );
    }
}
