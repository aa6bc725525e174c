//! What planning is told ([`PlannerOptions`]: tile counts, the precision policy, memory
//! budgets, plan constraints, the beam's widths) and how it fails ([`PlannerError`]).

use ipu_device::{MemoryClass, Precision, Target};

use super::constraints::Constraints;

crate::option_enum! {
    /// Precision policy: the element precision of GEMM inputs, for the products it reaches
    /// ([`PrecisionPolicy::input_for`]); vector kernels compute in the graph's own types (the
    /// device has no FP8 arithmetic outside the AMP). The planner, the lowering and the pass
    /// options all use this one enum.
    pub enum PrecisionPolicy {
        /// The tensors' own element types.
        Native = "native",
        /// F32 AMP inputs and partials (F16 operands cast on device).
        F32 = "f32",
        /// F16 AMP inputs for F16 products.
        F16 = "f16",
        /// FP8 (E4M3) AMP inputs for F16 products, encoded by the host or cast on device at
        /// the FP8 scale.
        Fp8 = "fp8",
    }
}

impl PrecisionPolicy {
    /// The AMP input precision the policy sets, whatever the operands' (`None`: native).
    pub fn fixed_input(self) -> Option<Precision> {
        match self {
            PrecisionPolicy::Native => None,
            PrecisionPolicy::F32 => Some(Precision::F32),
            PrecisionPolicy::F16 => Some(Precision::F16),
            PrecisionPolicy::Fp8 => Some(Precision::F8E4M3),
        }
    }

    /// The policy's AMP input precision for operands of `host` precision.
    pub fn input(self, host: Precision) -> Precision {
        self.fixed_input().unwrap_or(host)
    }

    /// The AMP input precision of a product of `host` operands with a `result` element
    /// type: the policy's when its partials are the result's type (FP8 and F16 products
    /// accumulate F16, f32 products f32); under the f32 policy an F16 product whose result is
    /// only returned (`returned_only`) is cast up too (F16 operands to f32, the f32 result
    /// back to F16 for the host); else the operands' own (the policy does not reach that
    /// product; `ipu-lower-mid` says so). The planner and the lowering both ask this.
    pub fn input_for(self, host: Precision, result: Precision, returned_only: bool) -> Precision {
        super::candidate::product_input(self.input(host), host, result, returned_only)
    }
}

/// Everything the planner is told.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannerOptions {
    pub tiles: u32,
    /// Tile counts plans may use; empty: `tiles` only.
    pub active_tiles: Vec<u32>,
    pub precision: PrecisionPolicy,
    /// Given FP8 scale exponent for every GEMM operand; `None`: each operand's scale is pinned
    /// by its plan's `lhs_scale` / `rhs_scale` constraint, else chosen from its data range
    /// (`Value::max_abs`, [`super::format::fp8_scale_for`]) where known, else 0.
    pub fp8_scale: Option<i64>,
    /// Memory class of GEMM weights; `None`: both are candidates.
    pub weight_memory: Option<MemoryClass>,
    pub beam_width: usize,
    /// Candidates per op kept (best standalone cost first) before the beam.
    pub candidates_per_op: usize,
    /// Finalists returned.
    pub finalists: usize,
    /// Per-tile budgets by class and in total.
    pub standard_budget: u64,
    pub interleaved_budget: u64,
    pub total_budget: u64,
    pub constraints: Constraints,
    /// Planning the body of an `ipu.repeat` (its arguments are carried device values, not
    /// host tensors).
    pub in_body: bool,
}

impl PlannerOptions {
    /// Defaults for `tiles` tiles of `target`, budgets from the target table.
    pub fn new(tiles: u32, target: &Target) -> PlannerOptions {
        PlannerOptions {
            tiles,
            active_tiles: Vec::new(),
            precision: PrecisionPolicy::F16,
            fp8_scale: None,
            weight_memory: None,
            beam_width: 8,
            candidates_per_op: 24,
            finalists: 4,
            standard_budget: u64::from(target.memory.standard_budget.value),
            interleaved_budget: u64::from(target.memory.interleaved_budget.value),
            total_budget: u64::from(target.planned_budget_bytes()),
            constraints: Constraints::default(),
            in_body: false,
        }
    }

    /// The tile counts candidates are generated for (each at most `tiles`), ascending.
    pub fn active_tile_counts(&self) -> Vec<u32> {
        let mut counts: Vec<u32> = if self.active_tiles.is_empty() {
            vec![self.tiles]
        } else {
            self.active_tiles
                .iter()
                .copied()
                .filter(|&count| count >= 1 && count <= self.tiles)
                .collect()
        };
        counts.sort_unstable();
        counts.dedup();
        counts
    }
}

/// Which budget a plan runs out of: interleaved-only data, or the total (standard data beyond
/// the standard budget spills into interleaved memory, so it has no budget of its own).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum BudgetClass {
    Interleaved,
    Total,
    /// The total with the exchange code beyond the support reservation.
    ExchangeCode,
}

impl BudgetClass {
    pub fn name(self) -> &'static str {
        match self {
            BudgetClass::Interleaved => "interleaved",
            BudgetClass::Total => "total",
            BudgetClass::ExchangeCode => "exchange code and total",
        }
    }
}

impl std::fmt::Display for BudgetClass {
    fn fmt(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        formatter.write_str(self.name())
    }
}

/// Planner errors; each names the op (program-order index) and the numbers to act on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlannerError {
    #[error("op {op}: {detail}")]
    Graph { op: usize, detail: String },
    #[error("op {op} ({name}): no operator plan exists for it ({detail})")]
    NoCandidate {
        op: usize,
        name: String,
        detail: String,
    },
    #[error(
        "op {op} ({name}) does not fit: {class} memory per tile is short by {short} bytes for the best candidate {plan} (needs {needed} B, budget {budget} B)"
    )]
    OutOfMemory {
        op: usize,
        name: String,
        class: BudgetClass,
        short: u64,
        needed: u64,
        budget: u64,
        plan: String,
    },
    #[error("plan constraints: {0}")]
    Constraints(String),
}

impl From<ipu_dialects::graph::GraphError> for PlannerError {
    fn from(error: ipu_dialects::graph::GraphError) -> PlannerError {
        PlannerError::Graph {
            op: error.op,
            detail: error.detail,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One policy rule for the planner and the lowering: a policy reaches the products whose
    /// partials are their result type (and, under f32, F16 products only returned); native
    /// leaves every product in its operands' type.
    #[test]
    fn the_policy_sets_the_inputs_of_the_products_it_reaches() {
        use Precision::{F16, F32, F8E4M3};
        let cases = [
            // (policy, host, result, returned only, input)
            (PrecisionPolicy::Native, F16, F16, true, F16),
            (PrecisionPolicy::Native, F32, F32, false, F32),
            (PrecisionPolicy::F16, F16, F16, false, F16),
            (PrecisionPolicy::F16, F32, F32, false, F32),
            (PrecisionPolicy::Fp8, F16, F16, false, F8E4M3),
            (PrecisionPolicy::Fp8, F32, F32, false, F32),
            (PrecisionPolicy::F32, F16, F16, true, F32),
            (PrecisionPolicy::F32, F16, F16, false, F16),
            (PrecisionPolicy::F32, F32, F32, false, F32),
        ];
        for (policy, host, result, returned_only, input) in cases {
            assert_eq!(
                policy.input_for(host, result, returned_only),
                input,
                "{policy:?} {host:?} -> {result:?} (returned only: {returned_only})"
            );
        }
        assert_eq!(PrecisionPolicy::Native.fixed_input(), None);
        assert_eq!(PrecisionPolicy::Native.input(F32), F32);
        assert_eq!(PrecisionPolicy::Fp8.input(F32), F8E4M3);
    }
}
