//! What planning is told ([`PlannerOptions`]: tile counts, the precision policy, memory
//! budgets, plan constraints, the beam's widths) and how it fails ([`PlannerError`]).

use ipu_device::{MemoryClass, Target};

use super::constraints::Constraints;

crate::option_enum! {
    /// Precision policy: the element precision of GEMM inputs, for the products it reaches
    /// (`candidates::amp_input`); vector kernels compute in the graph's own types (the
    /// device has no FP8 arithmetic outside the AMP).
    pub enum PrecisionPolicy {
        F32 = "f32",
        F16 = "f16",
        Fp8 = "fp8",
    }
}

impl PrecisionPolicy {
    /// The policy's AMP input precision.
    pub fn input(self) -> ipu_device::Precision {
        match self {
            PrecisionPolicy::F32 => ipu_device::Precision::F32,
            PrecisionPolicy::F16 => ipu_device::Precision::F16,
            PrecisionPolicy::Fp8 => ipu_device::Precision::F8E4M3,
        }
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

/// Which memory class a plan runs out of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum BudgetClass {
    Standard,
    Interleaved,
    Total,
}

impl BudgetClass {
    pub fn name(self) -> &'static str {
        match self {
            BudgetClass::Standard => "standard",
            BudgetClass::Interleaved => "interleaved",
            BudgetClass::Total => "total",
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
