//! Typed operator plans: one Rust type per strategy's plan, an enum over them, and the exact
//! codec to and from the `#ipu.plan<"kind", {key = value, ...}>` attribute.
//!
//! The attribute's generic form ([`Plan`]: a kind and named parameters) is only the wire
//! format; every stage after parsing reads an [`OperatorPlan`]. Decoding checks the kind,
//! every parameter's presence, type and range, and refuses parameters the kind does not have,
//! so a malformed plan is an error that names the kind and the parameter. Encoding prints the
//! parameters in the attribute's canonical (sorted) order, so `decode(encode(p)) == p` and a
//! canonical attribute prints back byte for byte.
//!
//! ```mlir
//! %c = "ipu.matmul"(%a, %b) {plan = #ipu.plan<"gemm_output_stationary", {c_block = 64 : i64,
//!   grid = [1, 8, 8, 1], k_block = 256 : i64, k_steps = 1 : i64, left = "interleaved",
//!   orientation = "normal", precision = "f16", tiles = 64 : i64, weights = "interleaved",
//!   weights_resident = false}>} : ...
//! ```

use std::collections::BTreeMap;
use std::fmt;

use crate::format::{CodecError, Memory, Order, Plan, PlanValue};
use crate::ipu::CastOp;
use crate::tensor::ElementType;

mod fields;

use fields::{unknown_kind, Reader, Writer};

/// Why a `#ipu.plan` attribute is not a plan of any strategy.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("{0}")]
    Syntax(#[from] CodecError),
    #[error("unknown plan kind \"{kind}\" (known: {known})")]
    UnknownKind { kind: String, known: String },
    #[error("plan \"{kind}\": {message}")]
    Parameter { kind: String, message: String },
}

/// The precision a plan computes in, by its plan name (`f32`, `f16`, `f8`, `f8e5`).
pub fn precision_name(element: ElementType) -> &'static str {
    match element {
        ElementType::F32 => "f32",
        ElementType::F16 => "f16",
        ElementType::F8E4M3 => "f8",
        ElementType::F8E5M2 => "f8e5",
    }
}

fn precision_from_name(name: &str) -> Option<ElementType> {
    ElementType::ALL
        .into_iter()
        .find(|element| precision_name(*element) == name)
}

/// Which way a GEMM's operands feed the AMP: as written, or with the roles of the two
/// operands exchanged (the result computed transposed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Orientation {
    Normal,
    Swapped,
}

impl Orientation {
    pub const fn name(self) -> &'static str {
        match self {
            Orientation::Normal => "normal",
            Orientation::Swapped => "swapped",
        }
    }
}

/// FP8 scale exponents of a product's two operands (value = q * 2^scale).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OperandScales {
    pub lhs: i32,
    pub rhs: i32,
}

/// A GEMM grid: batch, row, column and K-split tile counts (`grid = [b, r, c, k]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GemmTileGrid {
    pub batch: u32,
    pub rows: u32,
    pub cols: u32,
    pub k_split: u32,
}

impl GemmTileGrid {
    pub fn tiles(&self) -> u64 {
        u64::from(self.batch)
            * u64::from(self.rows)
            * u64::from(self.cols)
            * u64::from(self.k_split)
    }

    fn to_vec(self) -> Vec<u32> {
        vec![self.batch, self.rows, self.cols, self.k_split]
    }
}

/// Output-stationary GEMM (`gemm_output_stationary`) and GEMM with a K split reduced across
/// tiles (`gemm_k_split`, exactly when `grid.k_split > 1`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GemmPlan {
    pub grid: GemmTileGrid,
    pub tiles: u32,
    /// K rows per AMP panel.
    pub k_block: u32,
    /// Columns per AMP call.
    pub c_block: u32,
    pub orientation: Orientation,
    /// Memory class of the right operand's (weights') blocks.
    pub weights: Memory,
    /// Memory class of the left operand's blocks.
    pub left: Memory,
    pub precision: ElementType,
    /// K panels each tile runs one after the other.
    pub k_steps: u32,
    /// A constant right operand written once at initialization where it is read.
    pub weights_resident: bool,
    /// The host writes host operands in the order the tiles read them.
    pub host_order: bool,
    /// FP8 operands' scales (FP8 plans only).
    pub scales: Option<OperandScales>,
}

impl GemmPlan {
    pub fn kind(&self) -> &'static str {
        if self.grid.k_split > 1 {
            "gemm_k_split"
        } else {
            "gemm_output_stationary"
        }
    }
}

/// Output-stationary GEMM in waves (`gemm_waves`), the hardware-measured GEMM's way: the
/// result in `grid = [row blocks, column blocks]` blocks (rows balanced, the larger first;
/// columns of `N / column blocks`), more blocks than tiles allowed. A wave is `tiles / column
/// blocks` whole row groups; block (r, c) runs on tile `(r mod row groups) * column blocks +
/// c` in wave `r / row groups`. K runs in panels of `k_block`, each multicast from where the
/// host wrote it (whole blocks on rotating home tiles) to the tiles that read it, then one
/// GEMM call; after each wave every tile sends its block to the tile `output_shift` places
/// on, which copies it into the result's home.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GemmWavesPlan {
    pub grid: [u32; 2],
    /// Tiles of one wave: whole row groups of `grid[1]` tiles.
    pub tiles: u32,
    pub k_block: u32,
    /// Memory class of the right operand's (weights') panels.
    pub weights: Memory,
    /// Memory class of the left operand's panels.
    pub left: Memory,
    pub precision: ElementType,
    pub output_shift: u32,
    /// The host writes each tile its row block's whole left operand (no A exchange).
    pub left_replicated: bool,
    /// Columns per GEMM call (a divisor of the column block); `None`: the whole block.
    pub c_block: Option<u32>,
}

impl GemmWavesPlan {
    /// Row groups per wave.
    pub fn row_groups(&self) -> u32 {
        self.tiles / self.grid[1].max(1)
    }

    /// Waves: the row blocks over the row groups.
    pub fn waves(&self) -> u32 {
        self.grid[0].div_ceil(self.row_groups().max(1))
    }
}

/// Activation-stationary GEMM with the K split over tiles (`gemm_activation_stationary`), the
/// hardware-measured SigLIP MLP's down-projection: tile `r * grid[1] + q` keeps row block r of
/// the left operand over K range q where an earlier product left it; the result runs in
/// output panels of `c_block` columns, `round` panels at a time: each round multicasts the
/// panels' resident weight blocks to the tiles of their K range, every tile multiplies its
/// share (calls of `k_block`), and a reduction tree of `fan_in` sums each panel's partials.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GemmActivationStationaryPlan {
    pub grid: [u32; 2],
    pub tiles: u32,
    pub c_block: u32,
    pub k_block: u32,
    pub round: u32,
    pub fan_in: u32,
    /// Memory class of the weight blocks' homes and the received weight panels.
    pub weights: Memory,
    pub precision: ElementType,
}

/// Batched, transposed or device-operand matmul on the general path (`gemm_general`): result
/// blocks of `rows x cols` over a `[batches, row blocks, column blocks]` grid.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GeneralMatmulPlan {
    pub grid: [u32; 3],
    pub rows: u32,
    pub cols: u32,
    pub tiles: u32,
    pub precision: ElementType,
    /// Whole products each tile runs one after the other (1: one product per tile).
    pub batches_per_tile: u32,
    pub host_order: bool,
    pub scales: Option<OperandScales>,
}

/// An elementwise op.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PointwiseOp {
    Add,
    Gelu,
    Cast,
    /// `ipu.map`: a scalar body.
    Map,
    /// `ipu.broadcast`, materialized (a map kernel of the identity).
    Broadcast,
}

impl PointwiseOp {
    const ALL: [PointwiseOp; 5] = [
        PointwiseOp::Add,
        PointwiseOp::Gelu,
        PointwiseOp::Cast,
        PointwiseOp::Map,
        PointwiseOp::Broadcast,
    ];

    pub const fn kind(self) -> &'static str {
        match self {
            PointwiseOp::Add => "pointwise_add",
            PointwiseOp::Gelu => "pointwise_gelu",
            PointwiseOp::Cast => "pointwise_cast",
            PointwiseOp::Map => "pointwise_map",
            PointwiseOp::Broadcast => "pointwise_broadcast",
        }
    }
}

/// Where an elementwise op runs.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PointwisePlacement {
    /// Blocks of a `[3]` grid over the canonical result shape, in `order`.
    Grid {
        grid: [u32; 3],
        tiles: u32,
        order: Order,
    },
    /// In place, on the tiles that hold the operand it follows.
    InPlace,
    /// On the reduced ranges of the split GEMM that produced its operand.
    Ranged,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PointwisePlan {
    pub op: PointwiseOp,
    pub placement: PointwisePlacement,
    pub precision: ElementType,
}

/// An op that reduces along the last axis, run on whole rows per tile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RowOp {
    Softmax,
    LayerNorm,
    /// `ipu.reduce` over the last axis.
    Reduce,
}

impl RowOp {
    const ALL: [RowOp; 3] = [RowOp::Softmax, RowOp::LayerNorm, RowOp::Reduce];

    pub const fn kind(self) -> &'static str {
        match self {
            RowOp::Softmax => "rows_softmax",
            RowOp::LayerNorm => "rows_layer_norm",
            RowOp::Reduce => "rows_reduce",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RowsPlan {
    pub op: RowOp,
    pub grid: [u32; 3],
    pub tiles: u32,
    pub precision: ElementType,
}

/// A permutation (`rearrange`) over a grid of the canonical result shape.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RearrangePlan {
    pub grid: [u32; 3],
    pub tiles: u32,
    /// Whether the last two axes swap (a batched transpose).
    pub transpose: bool,
}

/// `ipu.reshape` as a view: the result's `[batch, rows, 1]` grid over its canonical shape,
/// whose blocks are the same buffers as the input's (whole rows on both sides).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ReshapePlan {
    pub grid: [u32; 3],
    pub tiles: u32,
}

/// `ipu.slice` / `ipu.concat` as a row gather: the result's `[batch, rows, 1]` grid over its
/// canonical shape, each tile gathering its block's (pieces of) rows from the operands.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GatherPlan {
    pub grid: [u32; 3],
    pub tiles: u32,
}

/// How attention's scores are computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AttentionSchedule {
    /// On a `[batch-heads, query blocks, key blocks]` grid, scores resharded to whole rows.
    Materialized,
    /// Whole score rows per tile on a `[batch-heads, query blocks]` grid.
    Blocked,
    /// Keys streamed in blocks of `key_block` with the online softmax, on a `[batch-heads,
    /// query blocks]` grid, or on `[batch-heads, query blocks, key splits]` with each query
    /// block's keys split over tiles and their outputs merged.
    Flash { key_block: u32 },
    /// The hardware-measured runs' formulation (`attention_flash_rows`), planned when a
    /// constraint pins it: one `[batch-head, query block]` per tile on a `[batch-heads, query
    /// blocks]` grid, the keys in blocks of `key_block` (the last what is left), each block's
    /// keys and values written by the host packed as the AMP's weights on one of the head's
    /// tiles (block b on its tile b mod query blocks) and multicast to the others; per block
    /// `Q K^T` and `P V` on the AMP with the block's keys and values as weights, the online
    /// softmax and an f32 merge between them.
    FlashRows { key_block: u32 },
}

impl AttentionSchedule {
    pub const fn kind(self) -> &'static str {
        match self {
            AttentionSchedule::Materialized => "attention_materialized",
            AttentionSchedule::Blocked => "attention_blocked",
            AttentionSchedule::Flash { .. } => "attention_flash",
            AttentionSchedule::FlashRows { .. } => "attention_flash_rows",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AttentionPlan {
    pub schedule: AttentionSchedule,
    /// `[batch-heads, query blocks]`, plus key blocks when materialized.
    pub grid: Vec<u32>,
    pub tiles: u32,
    pub causal: bool,
    pub precision: ElementType,
}

/// `ipu.repeat`: the body planned once (`body_choices`: the chosen candidate of each body op)
/// and run `count` times.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RepeatPlan {
    pub count: u64,
    pub body_choices: Vec<u32>,
}

/// A strategy's plan for one op: the typed value of `#ipu.plan`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum OperatorPlan {
    Gemm(GemmPlan),
    GemmWaves(GemmWavesPlan),
    GemmActivationStationary(GemmActivationStationaryPlan),
    GeneralMatmul(GeneralMatmulPlan),
    Pointwise(PointwisePlan),
    Rows(RowsPlan),
    Rearrange(RearrangePlan),
    Reshape(ReshapePlan),
    Gather(GatherPlan),
    Attention(AttentionPlan),
    Repeat(RepeatPlan),
}

/// Every kind a plan may have.
pub const PLAN_KINDS: [&str; 21] = [
    "gemm_output_stationary",
    "gemm_k_split",
    "gemm_waves",
    "gemm_activation_stationary",
    "gemm_general",
    "pointwise_add",
    "pointwise_gelu",
    "pointwise_cast",
    "pointwise_map",
    "pointwise_broadcast",
    "rows_softmax",
    "rows_layer_norm",
    "rows_reduce",
    "rearrange",
    "reshape_view",
    "row_gather",
    "attention_materialized",
    "attention_blocked",
    "attention_flash",
    "attention_flash_rows",
    "repeat_body_once",
];

impl OperatorPlan {
    /// The attribute's kind string.
    pub fn kind(&self) -> &'static str {
        match self {
            OperatorPlan::Gemm(plan) => plan.kind(),
            OperatorPlan::GemmWaves(_) => "gemm_waves",
            OperatorPlan::GemmActivationStationary(_) => "gemm_activation_stationary",
            OperatorPlan::GeneralMatmul(_) => "gemm_general",
            OperatorPlan::Pointwise(plan) => plan.op.kind(),
            OperatorPlan::Rows(plan) => plan.op.kind(),
            OperatorPlan::Rearrange(_) => "rearrange",
            OperatorPlan::Reshape(_) => "reshape_view",
            OperatorPlan::Gather(_) => "row_gather",
            OperatorPlan::Attention(plan) => plan.schedule.kind(),
            OperatorPlan::Repeat(_) => "repeat_body_once",
        }
    }

    /// The FP8 operand scales the plan records, if any.
    pub fn scales(&self) -> Option<OperandScales> {
        match self {
            OperatorPlan::Gemm(plan) => plan.scales,
            OperatorPlan::GeneralMatmul(plan) => plan.scales,
            _ => None,
        }
    }

    /// Replaces the recorded FP8 operand scales (plans that record none are unchanged).
    pub fn set_scales(&mut self, scales: OperandScales) {
        match self {
            OperatorPlan::Gemm(GemmPlan {
                scales: Some(recorded),
                ..
            })
            | OperatorPlan::GeneralMatmul(GeneralMatmulPlan {
                scales: Some(recorded),
                ..
            }) => *recorded = scales,
            _ => {}
        }
    }

    /// Whether the plan runs in place on the operand it follows.
    pub fn is_in_place(&self) -> bool {
        matches!(
            self,
            OperatorPlan::Pointwise(PointwisePlan {
                placement: PointwisePlacement::InPlace,
                ..
            })
        )
    }

    /// Whether the host writes host operands in the order the tiles read them.
    pub fn host_order(&self) -> bool {
        match self {
            OperatorPlan::Gemm(plan) => plan.host_order,
            OperatorPlan::GeneralMatmul(plan) => plan.host_order,
            // The waves' homes are written in AMP order by the host.
            OperatorPlan::GemmWaves(_) | OperatorPlan::GemmActivationStationary(_) => true,
            // As are the rows formulation's queries, keys and values.
            OperatorPlan::Attention(plan) => {
                matches!(plan.schedule, AttentionSchedule::FlashRows { .. })
            }
            _ => false,
        }
    }

    /// Whether the host writes operand `position` whole on every tile that reads it (a GEMM in
    /// waves' replicated left operand), not once with the replicas gathered on the device.
    pub fn host_replicates(&self, position: usize) -> bool {
        matches!(self, OperatorPlan::GemmWaves(plan) if plan.left_replicated && position == 0)
    }

    /// The precision the plan computes in (`None` for a repeat).
    pub fn precision(&self) -> Option<ElementType> {
        match self {
            OperatorPlan::Gemm(plan) => Some(plan.precision),
            OperatorPlan::GemmWaves(plan) => Some(plan.precision),
            OperatorPlan::GemmActivationStationary(plan) => Some(plan.precision),
            OperatorPlan::GeneralMatmul(plan) => Some(plan.precision),
            OperatorPlan::Pointwise(plan) => Some(plan.precision),
            OperatorPlan::Rows(plan) => Some(plan.precision),
            OperatorPlan::Attention(plan) => Some(plan.precision),
            OperatorPlan::Rearrange(_)
            | OperatorPlan::Reshape(_)
            | OperatorPlan::Gather(_)
            | OperatorPlan::Repeat(_) => None,
        }
    }

    /// The attribute's generic form: its kind and parameters.
    pub fn to_generic(&self) -> Plan {
        let mut fields = Writer::default();
        match self {
            OperatorPlan::Gemm(plan) => {
                fields.grid("grid", &plan.grid.to_vec());
                fields.count("tiles", plan.tiles);
                fields.count("k_block", plan.k_block);
                fields.count("c_block", plan.c_block);
                fields.name("orientation", plan.orientation.name());
                fields.name("weights", plan.weights.name());
                fields.name("left", plan.left.name());
                fields.name("precision", precision_name(plan.precision));
                fields.count("k_steps", plan.k_steps);
                fields.flag("weights_resident", plan.weights_resident);
                if plan.host_order {
                    fields.flag("host_order", true);
                }
                fields.scales(plan.scales);
            }
            OperatorPlan::GemmWaves(plan) => {
                fields.grid("grid", &plan.grid);
                fields.count("tiles", plan.tiles);
                fields.count("k_block", plan.k_block);
                fields.name("weights", plan.weights.name());
                fields.name("left", plan.left.name());
                fields.name("precision", precision_name(plan.precision));
                fields.count("output_shift", plan.output_shift);
                if plan.left_replicated {
                    fields.flag("left_replicated", true);
                }
                if let Some(c_block) = plan.c_block {
                    fields.count("c_block", c_block);
                }
            }
            OperatorPlan::GemmActivationStationary(plan) => {
                fields.grid("grid", &plan.grid);
                fields.count("tiles", plan.tiles);
                fields.count("c_block", plan.c_block);
                fields.count("k_block", plan.k_block);
                fields.count("round", plan.round);
                fields.count("fan_in", plan.fan_in);
                fields.name("weights", plan.weights.name());
                fields.name("precision", precision_name(plan.precision));
            }
            OperatorPlan::GeneralMatmul(plan) => {
                fields.grid("grid", &plan.grid);
                fields.count("rows", plan.rows);
                fields.count("cols", plan.cols);
                fields.count("tiles", plan.tiles);
                fields.name("precision", precision_name(plan.precision));
                if plan.batches_per_tile > 1 {
                    fields.count("batches_per_tile", plan.batches_per_tile);
                }
                if plan.host_order {
                    fields.flag("host_order", true);
                }
                fields.scales(plan.scales);
            }
            OperatorPlan::Pointwise(plan) => {
                match &plan.placement {
                    PointwisePlacement::Grid { grid, tiles, order } => {
                        fields.grid("grid", grid);
                        fields.count("tiles", *tiles);
                        fields.name("order", order.name());
                    }
                    PointwisePlacement::InPlace => fields.flag("in_place", true),
                    PointwisePlacement::Ranged => fields.flag("ranged", true),
                }
                fields.name("precision", precision_name(plan.precision));
            }
            OperatorPlan::Rows(plan) => {
                fields.grid("grid", &plan.grid);
                fields.count("tiles", plan.tiles);
                fields.name("precision", precision_name(plan.precision));
            }
            OperatorPlan::Rearrange(plan) => {
                fields.grid("grid", &plan.grid);
                fields.count("tiles", plan.tiles);
                fields.flag("transpose", plan.transpose);
            }
            OperatorPlan::Reshape(plan) => {
                fields.grid("grid", &plan.grid);
                fields.count("tiles", plan.tiles);
            }
            OperatorPlan::Gather(plan) => {
                fields.grid("grid", &plan.grid);
                fields.count("tiles", plan.tiles);
            }
            OperatorPlan::Attention(plan) => {
                fields.grid("grid", &plan.grid);
                fields.count("tiles", plan.tiles);
                fields.flag("causal", plan.causal);
                fields.name("precision", precision_name(plan.precision));
                if let AttentionSchedule::Flash { key_block }
                | AttentionSchedule::FlashRows { key_block } = plan.schedule
                {
                    fields.count("key_block", key_block);
                }
            }
            OperatorPlan::Repeat(plan) => {
                fields.int("count", i64::try_from(plan.count).unwrap_or(i64::MAX));
                fields.grid("body_choices", &plan.body_choices);
            }
        }
        Plan {
            kind: self.kind().to_string(),
            params: fields.params,
        }
    }

    /// Decodes the generic form, checking every parameter.
    pub fn from_generic(plan: &Plan) -> Result<OperatorPlan, PlanError> {
        let mut fields = Reader {
            kind: &plan.kind,
            params: &plan.params,
            read: Vec::new(),
        };
        let decoded = match plan.kind.as_str() {
            "gemm_output_stationary" | "gemm_k_split" => fields.gemm_plan()?,
            "gemm_waves" => fields.gemm_waves_plan()?,
            "gemm_activation_stationary" => fields.gemm_activation_stationary_plan()?,
            "gemm_general" => {
                let (grid, tiles) = fields.grid_and_tiles::<3>()?;
                OperatorPlan::GeneralMatmul(GeneralMatmulPlan {
                    grid,
                    rows: fields.count("rows")?,
                    cols: fields.count("cols")?,
                    tiles,
                    precision: fields.precision()?,
                    batches_per_tile: fields.optional_count("batches_per_tile")?.unwrap_or(1),
                    host_order: fields.optional_flag("host_order")?,
                    scales: fields.scales()?,
                })
            }
            kind if kind.starts_with("pointwise_") => fields.pointwise_plan(kind)?,
            kind if kind.starts_with("rows_") => {
                let op = RowOp::ALL
                    .into_iter()
                    .find(|op| op.kind() == kind)
                    .ok_or_else(|| unknown_kind(kind))?;
                let (grid, tiles) = fields.grid_and_tiles::<3>()?;
                OperatorPlan::Rows(RowsPlan {
                    op,
                    grid,
                    tiles,
                    precision: fields.precision()?,
                })
            }
            "rearrange" => {
                let (grid, tiles) = fields.grid_and_tiles::<3>()?;
                OperatorPlan::Rearrange(RearrangePlan {
                    grid,
                    tiles,
                    transpose: fields.flag("transpose")?,
                })
            }
            "reshape_view" => {
                let (grid, tiles) = fields.grid_and_tiles::<3>()?;
                OperatorPlan::Reshape(ReshapePlan { grid, tiles })
            }
            "row_gather" => {
                let (grid, tiles) = fields.grid_and_tiles::<3>()?;
                OperatorPlan::Gather(GatherPlan { grid, tiles })
            }
            "attention_materialized"
            | "attention_blocked"
            | "attention_flash"
            | "attention_flash_rows" => fields.attention_plan()?,
            "repeat_body_once" => fields.repeat_plan()?,
            kind => return Err(unknown_kind(kind)),
        };
        fields.finish()?;
        Ok(decoded)
    }

    /// Parses the printed attribute.
    pub fn parse(text: &str) -> Result<OperatorPlan, PlanError> {
        OperatorPlan::from_generic(&Plan::parse(text)?)
    }
}

impl fmt::Display for OperatorPlan {
    fn fmt(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        self.to_generic().fmt(formatter)
    }
}

#[cfg(test)]
mod tests;
