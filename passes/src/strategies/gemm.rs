//! The output-stationary GEMM strategy: the one owner of how a plain product of two host
//! operands runs as an output-stationary grid (see `lower/gemm.rs` for the program it
//! emits). It owns the grid a plan means ([`GemmGrid::planned`]), which plans can be followed
//! ([`followed_grid`]), and the GEMM kernel calls each tile runs ([`GemmGrid::calls`]), which the
//! planner prices with the device cost model and the lowering emits, call for call.

use ipu_device::kernels::describe::{default_partials, GEMM_MAX_WEIGHT_ELEMENTS};
use ipu_device::kernels::spec::ElementOrder;
use ipu_device::{KernelSpec, MemoryClass, Precision, Target};
use ipu_dialects::plan::{GemmPlan, GemmTileGrid, OperatorPlan, Orientation};

use crate::element;
use crate::tiling::candidate::operand_scales;
use crate::tiling::candidate::{all_valid, grids, u32_of, Candidate, Need};
use crate::tiling::graph::MatmulDims;
use crate::tiling::layout::{block_size, canonical_dims, Shards};
use crate::tiling::{Graph, Op, PlannerOptions, ValueFormat};

/// Bytes one K panel of the AMP-left operand may take per tile (rows x K block, at 2 bytes an
/// element): K runs in panels, each converted, exchanged and multiplied in turn, so a tile
/// holds one panel of A and B at a time.
pub const A_PANEL_BYTES: u32 = 96 * 1024;

/// The largest K block: the GEMM kernel's weight buffer (`k * c` elements) and one A panel.
fn max_block(cb: u32, rows_padded: u32) -> u32 {
    let weights = (GEMM_MAX_WEIGHT_ELEMENTS / cb) / 16 * 16;
    let panel = (A_PANEL_BYTES / (rows_padded.max(1) * 2)) / 16 * 16;
    weights.min(panel).max(16)
}

/// How a matmul's tiles are laid out (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GemmGrid {
    pub m: u32,
    pub k: u32,
    pub n: u32,
    pub cb: u32,
    pub nb: u32,
    pub mb: u32,
    pub rows_padded: u32,
    pub kb: u32,
    pub k_steps: u32,
}

impl GemmGrid {
    /// The grid the GEMM lowering picks on `tiles` tiles without a plan, or why there is none.
    pub fn new(m: u32, k: u32, n: u32, tiles: u32) -> Result<GemmGrid, String> {
        let unsupported = |detail: String| detail;
        if m == 0 || k == 0 || n == 0 {
            return Err(unsupported(format!("empty GEMM {m}x{k}x{n}")));
        }
        let cb = [64, 48, 32, 16]
            .into_iter()
            .find(|cb| n.is_multiple_of(*cb))
            .ok_or_else(|| unsupported(format!("N = {n} is not a multiple of 16")))?;
        let nb = n / cb;
        if nb > tiles {
            return Err(unsupported(format!(
                "N = {n} needs {nb} column blocks of {cb}, only {tiles} tiles"
            )));
        }
        let rows_padded = m.div_ceil((tiles / nb).min(m));
        let mb = m.div_ceil(rows_padded);
        let k16 = k.div_ceil(16) * 16;
        let max_k = max_block(cb, rows_padded);
        let k_steps = k16.div_ceil(max_k);
        let kb = k16.div_ceil(k_steps).div_ceil(16) * 16;
        if k <= (k_steps - 1) * kb {
            return Err(unsupported(format!(
                "K = {k} leaves an empty K block of {kb}"
            )));
        }
        Ok(GemmGrid {
            m,
            k,
            n,
            cb,
            nb,
            mb,
            rows_padded,
            kb,
            k_steps,
        })
    }

    /// The grid of a planned output-stationary GEMM: `gm` row blocks and `gn` column blocks
    /// (the plan's `grid = [1, gm, gn, 1]`). The columns must split evenly into blocks of a
    /// multiple of 16; rows split into blocks of `ceil(m / gm)` with the last one padded.
    pub fn planned(m: u32, k: u32, n: u32, gm: u32, gn: u32) -> Result<GemmGrid, String> {
        let unsupported = |detail: String| detail;
        if gm == 0 || gn == 0 || !n.is_multiple_of(gn) || !(n / gn).is_multiple_of(16) {
            return Err(unsupported(format!(
                "planned grid {gm}x{gn} does not split N = {n} into equal blocks of a multiple of 16"
            )));
        }
        let mut grid = GemmGrid::new(m, k, n, gm * gn)?;
        grid.cb = n / gn;
        grid.nb = gn;
        grid.rows_padded = m.div_ceil(gm.min(m));
        grid.mb = m.div_ceil(grid.rows_padded);
        let max_k = max_block(grid.cb, grid.rows_padded);
        let k16 = k.div_ceil(16) * 16;
        grid.k_steps = k16.div_ceil(max_k);
        grid.kb = k16.div_ceil(grid.k_steps).div_ceil(16) * 16;
        if k <= (grid.k_steps - 1) * grid.kb {
            return Err(unsupported(format!(
                "K = {k} leaves an empty K block of {}",
                grid.kb
            )));
        }
        Ok(grid)
    }

    pub fn tile(&self, i: u32, j: u32) -> u32 {
        i * self.nb + j
    }

    pub fn tiles(&self) -> Vec<u32> {
        (0..self.mb * self.nb).collect()
    }

    pub fn first_row(&self, i: u32) -> u32 {
        i * self.rows_padded
    }

    /// Real rows of row block i.
    pub fn rows(&self, i: u32) -> u32 {
        self.rows_padded.min(self.m - self.first_row(i))
    }

    pub fn k_padded(&self) -> u32 {
        self.kb * self.k_steps
    }

    /// Real K rows of K block s.
    pub fn k_rows(&self, s: u32) -> u32 {
        self.kb.min(self.k - s * self.kb)
    }

    pub fn grid(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        (0..self.mb).flat_map(move |i| (0..self.nb).map(move |j| (i, j)))
    }

    /// The GEMM kernel call of K block `step` on every tile (the first initializes the output,
    /// the others accumulate into it).
    pub fn call(&self, input: Precision, step: u32) -> KernelSpec {
        KernelSpec::Gemm {
            input,
            partials: default_partials(input),
            weights: MemoryClass::Interleaved,
            k: self.kb,
            c: self.cb,
            rows: vec![self.rows_padded],
            accumulate: step > 0,
        }
    }

    /// Every tile's GEMM kernel calls in order: one per K block.
    pub fn calls(&self, input: Precision) -> Vec<KernelSpec> {
        (0..self.k_steps)
            .map(|step| self.call(input, step))
            .collect()
    }

    /// Modelled cycles of one tile's GEMM calls (every tile runs the same calls).
    pub fn calls_cycles(&self, input: Precision, target: &Target) -> u64 {
        self.calls(input)
            .iter()
            .map(|spec| ipu_device::cost::kernel_cycles(spec, target))
            .sum()
    }
}

/// The grid of `plan` for an `m x k x n` GEMM when the GEMM lowering builds it as planned (an
/// output-stationary grid with no batch or K split, one K panel, normal orientation, equal
/// column blocks of whole 16-column groups, within `tiles`), else why not. The planner
/// offers only such grids, and the lowering refuses any other.
pub fn followed_grid(
    (m, k, n): (u32, u32, u32),
    plan: &OperatorPlan,
    tiles: u32,
) -> Result<GemmGrid, String> {
    let (gm, gn) = match plan {
        OperatorPlan::Gemm(GemmPlan {
            grid:
                GemmTileGrid {
                    batch: 1,
                    rows,
                    cols,
                    k_split: 1,
                },
            k_steps: 1,
            orientation: Orientation::Normal,
            weights_resident: false,
            ..
        }) => (*rows, *cols),
        _ => {
            return Err(
                "plan not implemented by the GEMM lowering (batch or K split, K panels, swapped orientation or resident weights)"
                    .into(),
            )
        }
    };
    match GemmGrid::planned(m, k, n, gm, gn) {
        Ok(planned) if planned.mb * planned.nb <= tiles => Ok(planned),
        Ok(_) => Err("planned GEMM grid exceeds the tile count".into()),
        Err(e) => Err(format!("planned GEMM grid not followed: {e}")),
    }
}

/// What the planner knows of a product before asking for this strategy's candidates.
pub struct GemmOperands<'a> {
    pub dims: &'a MatmulDims,
    /// The AMP input precision (the policy's where it applies).
    pub input: Precision,
    /// FP8 scale exponents of the left and right operands (0 when not FP8).
    pub scales: [i64; 2],
    /// Memory classes the weights may take.
    pub weight_classes: &'a [MemoryClass],
}

/// The output-stationary candidates for `op` (a plain product of two host operands with one
/// right matrix, each read by this op alone): every `[1, rows, cols, 1]` grid over the active tile counts whose operand
/// blocks fit without K panels and whose plan [`followed_grid`] accepts, for each memory class
/// of the weights and of the AMP-left operand.
/// Each is priced by [`GemmGrid::calls_cycles`]: the calls the lowering emits.
pub fn candidates(
    graph: &Graph,
    op: &Op,
    operands: &GemmOperands,
    active: &[u32],
    options: &PlannerOptions,
    target: &Target,
) -> Vec<Candidate> {
    // The lowering streams both operands from the host for this op alone (in its chunks and
    // encoding): a host value another op also reads would be streamed twice, maybe in two
    // encodings, so such products take the other strategies.
    let readers = |value: usize| {
        graph
            .ops
            .iter()
            .filter(|other| other.operands.contains(&value))
            .count()
    };
    if op.operands.iter().any(|&value| readers(value) != 1) || op.operands[0] == op.operands[1] {
        return Vec::new();
    }
    let dims = operands.dims;
    let out_dims = canonical_dims(&graph.values[op.results[0]].shape);
    let batch_size = out_dims[0];
    let rows = dims.batch * dims.m;
    let mut out = Vec::new();
    for grid in grids(active, &[batch_size, dims.m, dims.n, dims.k]) {
        let [batch_blocks, row_blocks, col_blocks, k_blocks] = [grid[0], grid[1], grid[2], grid[3]];
        if batch_blocks != 1 || k_blocks != 1 {
            continue;
        }
        let Some(needs) = grid_needs(graph, op, operands, &grid, options) else {
            continue;
        };
        let Ok(planned) = GemmGrid::planned(
            u32_of(batch_size * dims.m),
            u32_of(dims.k),
            u32_of(dims.n),
            row_blocks,
            col_blocks,
        ) else {
            continue;
        };
        let kernels = planned.calls(operands.input);
        if !all_valid(&kernels) {
            continue;
        }
        let priced = PricedGrid {
            row_blocks,
            col_blocks,
            compute: planned.calls_cycles(operands.input, target),
            planned,
            kernels,
        };
        for (&weights, left) in operands
            .weight_classes
            .iter()
            .flat_map(|w| [(w, MemoryClass::Standard), (w, MemoryClass::Interleaved)])
        {
            out.push(memory_candidate(operands, &priced, &needs, (weights, left)));
        }
    }
    // Only the grids the GEMM lowering builds as planned.
    out.retain(|candidate| {
        matches!(
            (u32::try_from(rows), u32::try_from(dims.k), u32::try_from(dims.n)),
            (Ok(m), Ok(k), Ok(n)) if followed_grid((m, k, n), &candidate.plan, options.tiles).is_ok()
        )
    });
    out
}

/// A grid's planned layout, its GEMM calls and their price.
struct PricedGrid {
    row_blocks: u32,
    col_blocks: u32,
    planned: GemmGrid,
    kernels: Vec<KernelSpec>,
    compute: u64,
}

/// The blocks each tile of `grid` reads of the left and right operands and writes of the
/// output, or `None` when the operand blocks would need K panels (which this strategy does not
/// build: over half a tile's interleaved budget, unless K is below two 16-row panels).
fn grid_needs(
    graph: &Graph,
    op: &Op,
    operands: &GemmOperands,
    grid: &[u32],
    options: &PlannerOptions,
) -> Option<[Shards; 3]> {
    let input = operands.input;
    let lhs_dims = canonical_dims(&graph.values[op.operands[0]].shape);
    let rhs_dims = canonical_dims(&graph.values[op.operands[1]].shape);
    let out_dims = canonical_dims(&graph.values[op.results[0]].shape);
    let lhs_batch = (lhs_dims[0] > 1).then_some(0);
    let lhs = Shards::needed_by_grid(
        lhs_dims,
        input.bytes(),
        grid,
        &[lhs_batch, Some(1), None, Some(2)],
    );
    let rhs = Shards::needed_by_grid(
        rhs_dims,
        input.bytes(),
        grid,
        &[None, None, Some(2), Some(1)],
    );
    if lhs.max_tile_bytes() + rhs.max_tile_bytes() > options.interleaved_budget / 2
        && operands.dims.k / 2 >= 16
    {
        return None;
    }
    let output = Shards::needed_by_grid(
        out_dims,
        default_partials(input).bytes(),
        grid,
        &[(out_dims[0] > 1).then_some(0), Some(1), Some(2), None],
    );
    Some([lhs, rhs, output])
}

/// The candidate of one priced grid with the weights and the AMP-left operand in the memory
/// classes `(weights, left)`, the weights streamed in K-row chunks and exchanged down the grid columns at
/// every run: the program the GEMM lowering builds. (It has no resident-weights variant; the
/// split GEMM's resident B is where constant weights stay.)
fn memory_candidate(
    operands: &GemmOperands,
    priced: &PricedGrid,
    [lhs, rhs, output]: &[Shards; 3],
    (weights, left): (MemoryClass, MemoryClass),
) -> Candidate {
    let input = operands.input;
    let [lhs_scale, rhs_scale] = operands.scales;
    let format = |order, memory, scale| ValueFormat::operand(input, order, memory, scale);
    let lhs_format = format(ElementOrder::AmpLeft, left, lhs_scale);
    let rhs_format = format(ElementOrder::AmpRight, weights, rhs_scale);
    let output_format = ValueFormat {
        precision: default_partials(input),
        order: ElementOrder::AmpOutput,
        memory: MemoryClass::Standard,
        transposed: false,
        scale: 0,
    };
    let mut padding_groups = Vec::new();
    if !operands.dims.k.is_multiple_of(16)
        || !block_size(operands.dims.n, priced.col_blocks).is_multiple_of(16)
    {
        padding_groups.push(16);
    }
    let plan = GemmPlan {
        grid: GemmTileGrid {
            batch: 1,
            rows: priced.row_blocks,
            cols: priced.col_blocks,
            k_split: 1,
        },
        tiles: priced.row_blocks * priced.col_blocks,
        k_block: priced.planned.kb,
        c_block: priced.planned.cb,
        orientation: Orientation::Normal,
        weights: element::memory(weights),
        left: element::memory(left),
        precision: input,
        k_steps: 1,
        weights_resident: false,
        host_order: false,
        // FP8 operands record their scales in the plan, so a dump of the plans pins them
        // (`pin_scales`) and reproduces the compile without the data ranges.
        scales: input
            .is_fp8()
            .then(|| operand_scales([lhs_format.scale, rhs_format.scale])),
    };
    Candidate {
        compute_cycles: priced.compute,
        kernels: priced.kernels.clone(),
        padding_groups,
        ..Candidate::new(
            OperatorPlan::Gemm(plan.clone()),
            plan.tiles,
            vec![
                Need {
                    shards: lhs.clone(),
                    format: lhs_format,
                },
                Need {
                    shards: rhs.clone(),
                    format: rhs_format,
                },
            ],
            Need {
                shards: output.clone(),
                format: output_format,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plan that keeps the weights resident is not the output-stationary lowering's (it
    /// streams them every run): refused with the reason, where the same grid streamed is
    /// followed.
    #[test]
    fn resident_weights_are_not_followed() {
        let plan = |weights_resident| {
            OperatorPlan::Gemm(GemmPlan {
                grid: GemmTileGrid {
                    batch: 1,
                    rows: 4,
                    cols: 2,
                    k_split: 1,
                },
                tiles: 8,
                k_block: 64,
                c_block: 16,
                orientation: Orientation::Normal,
                weights: element::memory(MemoryClass::Interleaved),
                left: element::memory(MemoryClass::Interleaved),
                precision: Precision::F16,
                k_steps: 1,
                weights_resident,
                host_order: false,
                scales: None,
            })
        };
        assert!(followed_grid((16, 64, 32), &plan(false), 8).is_ok());
        let refused = followed_grid((16, 64, 32), &plan(true), 8).unwrap_err();
        assert!(refused.contains("resident weights"), "{refused}");
    }
}
