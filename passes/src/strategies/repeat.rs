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
use crate::tiling::layout::PhaseLoad;
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
        RepeatPrice {
            compute_cycles: (body.cycles - body.exchange_cycles) * iterations,
            exchange_cycles: body.exchange_cycles * iterations
                + carry.cycles(target) * (iterations - 1),
            row_bytes: body.exchange_row_bytes + carry.max_row_bytes(),
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
        memory,
        reads,
        mut leaves,
        tiles,
        kernels,
        choices,
        ..
    } = body;
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
        }
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
