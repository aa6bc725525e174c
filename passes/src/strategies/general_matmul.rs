//! The general matmul strategy: any product (batched, broadcast, transposed, with device
//! operands) as one `rows x cols` result block per tile over the batches, each tile fetching
//! its rows of the left operand and its columns of the right one and running the tile-local
//! GEMM ([`super::local_gemm`]), after transposing a transposed operand. It owns the block
//! shapes it takes, the precision it computes in, where its operands are converted, whether
//! the right operand arrives packed, and its candidates, priced by [`GeneralTile::cycles`]:
//! the calls the lowering (`lower::graph::general::matmul`) emits on each tile.

use ipu_device::kernels::describe::{default_partials, GEMM_MAX_WEIGHT_ELEMENTS};
use ipu_device::kernels::spec::ElementOrder;
use ipu_device::{KernelSpec, MemoryClass, Precision, Target};
use ipu_dialects::plan::{GeneralMatmulPlan, OperatorPlan};

use super::local_gemm::{pad16, LocalGemm};
use crate::tiling::candidate::operand_scales;
use crate::tiling::candidate::{Candidate, Need};
use crate::tiling::graph::MatmulDims;
use crate::tiling::layout::{canonical_dims, Shards};
use crate::tiling::{Graph, MemoryUse, Op, Origin, PlannerOptions, ValueFormat};

/// The `(rows, cols)` block shapes the general matmul takes for `batches` products of
/// `m x n` on at most `tiles` tiles: row blocks of a divisor of `m`, column blocks of a
/// divisor of `n` whose weight block fits one GEMM call.
pub fn general_matmul_blocks(
    batches: u32,
    m: u32,
    n: u32,
    tiles: u32,
) -> impl Iterator<Item = (u32, u32)> {
    let divisors = |x: u32| (1..=x).filter(move |d| x.is_multiple_of(*d));
    divisors(n)
        .filter(|&c| pad16(c) * 16 <= GEMM_MAX_WEIGHT_ELEMENTS)
        .flat_map(move |cb| divisors(m).map(move |rp| (rp, cb)))
        .filter(move |&(rp, cb)| {
            u64::from(batches) * u64::from(m / rp) * u64::from(n / cb) <= u64::from(tiles)
        })
}

/// How many whole products of `m x n` each tile of the general matmul runs, one after the
/// other: 1 while `batches` products fit `tiles` in some block shape
/// ([`general_matmul_blocks`]), else `ceil(batches / tiles)` (each a whole product on one
/// tile, its weight block within one GEMM call).
pub fn general_batches_per_tile(batches: u32, m: u32, n: u32, tiles: u32) -> u32 {
    if batches <= tiles
        || general_matmul_blocks(batches, m, n, tiles).next().is_some()
        || pad16(n) * 16 > GEMM_MAX_WEIGHT_ELEMENTS
    {
        1
    } else {
        batches.div_ceil(tiles.max(1))
    }
}

/// The general matmul's AMP input precision: the policy's (`policy`) when its partials are the
/// result's element type, else the operands' own (`host`) when its partials are (an f32 graph
/// planned under the f16 policy computes its matmuls in f32), else none.
pub fn general_input(policy: Precision, host: Precision, result: Precision) -> Option<Precision> {
    [policy, host]
        .into_iter()
        .find(|&input| default_partials(input) == result)
}

/// Whether the general matmul converts its operands where they are (`host` -> `input`, FP8
/// at the policy's scale) before fetching them: the owners of a device operand cast its
/// blocks once and the host encodes a packed right operand, so the tiles fetch half the
/// bytes and cast nothing. Transposed operands are cast on the tiles instead (after their
/// transposes).
pub fn general_source_cast(
    host: Precision,
    input: Precision,
    (transpose_lhs, transpose_rhs): (bool, bool),
) -> bool {
    host != input && input.is_fp8() && !transpose_lhs && !transpose_rhs
}

/// [`general_source_cast`] for product `op` of `graph`: not when a host operand is also read
/// by an op other than a product (the host streams a value in one encoding; products read it
/// in the same FP8 encoding, but an add or a layer norm reads it in its own element type), in
/// which case the tiles cast their blocks instead.
pub fn general_casts_at_source(
    graph: &Graph,
    op: &Op,
    (host, input): (Precision, Precision),
    transposes: (bool, bool),
) -> bool {
    let shared_host = op
        .operands
        .iter()
        .take(2)
        .any(|&v| !matches!(graph.values[v].origin, Origin::Op(_)) && read_unencoded(graph, v));
    general_source_cast(host, input, transposes) && !shared_host
}

/// Whether an op other than a product reads value `v` (in its own element type, not in the
/// encoding the host streams a product's operand in).
pub fn read_unencoded(graph: &Graph, v: usize) -> bool {
    graph
        .ops
        .iter()
        .any(|o| o.operands.contains(&v) && !matches!(o.kind, crate::tiling::OpKind::Matmul { .. }))
}

/// Whether the general matmul's right operand is written by the host straight into the
/// AMP-right order its GEMM calls read: a host tensor (`b_host`: a function argument or
/// constant), not transposed, already in the AMP input precision (an operand the device
/// casts is cast on every tile, as the left one is; the ops' operand types stay equal), in
/// whole 16-row and 16-column groups (so no padding has to be zeroed). A constant is written
/// at initialization to every tile that reads it; an argument once per block, cut among the
/// tiles that read it, which exchange their pieces in the op's exchange phase.
pub fn general_b_packed(
    (k, cols): (u32, u32),
    transpose_rhs: bool,
    b_host: bool,
    (host, input): (Precision, Precision),
) -> bool {
    b_host && !transpose_rhs && host == input && k % 16 == 0 && cols % 16 == 0
}

/// One tile's share of a general matmul: a `rows x k x cols` block product, the operand
/// transposes it runs, and whether its right operand arrives packed
/// ([`general_b_packed`], decided once here for the planner and the lowering).
#[derive(Debug, Clone, Copy)]
pub struct GeneralTile {
    pub shape: (u32, u32, u32),
    pub transposes: (bool, bool),
    pub b_packed: bool,
    /// The fetched operands' precision and the GEMM's input precision.
    pub host: Precision,
    pub input: Precision,
}

impl GeneralTile {
    /// `b_host`: the right operand is a host tensor (a function argument or constant).
    pub fn new(
        shape: (u32, u32, u32),
        transposes: (bool, bool),
        b_host: bool,
        (host, input): (Precision, Precision),
    ) -> GeneralTile {
        let (_, k, cols) = shape;
        GeneralTile {
            shape,
            transposes,
            b_packed: general_b_packed((k, cols), transposes.1, b_host, (host, input)),
            host,
            input,
        }
    }

    /// The tile-local GEMM the tile runs after its transposes.
    pub fn local_gemm(&self) -> LocalGemm {
        let (rows, k, cols) = self.shape;
        LocalGemm {
            rows,
            k,
            n: cols,
            host: self.host,
            input: self.input,
            b_packed: self.b_packed,
            weights: MemoryClass::Interleaved,
        }
    }

    /// The transposes of transposed operands, in the order the tile runs them.
    fn transposes(&self) -> Vec<KernelSpec> {
        let (rows, k, cols) = self.shape;
        let transpose = |rows, cols| KernelSpec::Transpose {
            precision: self.host,
            rows,
            cols,
        };
        let mut specs = Vec::new();
        if self.transposes.0 {
            specs.push(transpose(k, rows));
        }
        if self.transposes.1 {
            specs.push(transpose(cols, k));
        }
        specs
    }

    /// Modelled cycles of the tile's kernels: the transposes of transposed operands, then the
    /// tile-local GEMM's calls.
    pub fn cycles(&self, target: &ipu_device::Target) -> u64 {
        self.transposes()
            .iter()
            .map(|spec| ipu_device::cost::kernel_cycles(spec, target))
            .sum::<u64>()
            + self.local_gemm().cycles(target)
    }

    /// Bytes the tile allocates besides its fetched operand blocks and its result: transposed
    /// copies and the tile-local GEMM's scratch.
    pub fn scratch_bytes(&self) -> u64 {
        let (rows, k, cols) = self.shape;
        let (rows, k, cols) = (u64::from(rows), u64::from(k), u64::from(cols));
        let element = u64::from(self.host.bytes());
        let mut bytes = self.local_gemm().scratch_bytes();
        if self.transposes.0 {
            bytes += k * rows * element;
        }
        if self.transposes.1 {
            bytes += cols * k * element;
        }
        bytes
    }
}

/// Candidates of the general matmul: `rows x cols` output
/// blocks per tile over the batches, each tile fetching its rows of the left operand and its
/// columns of the right one row-major in their own element type and running the tile-local
/// GEMM (conversions, AMP packs, calls, output rearrange), priced by the lowering's model.
pub fn candidates(
    graph: &Graph,
    op: &Op,
    (dims, input): (&MatmulDims, Precision),
    (transpose_lhs, transpose_rhs): (bool, bool),
    options: &PlannerOptions,
    target: &Target,
) -> Vec<Candidate> {
    let lhs_value = &graph.values[op.operands[0]];
    let rhs_value = &graph.values[op.operands[1]];
    let out_value = &graph.values[op.results[0]];
    let host = lhs_value.element;
    let Some(input) = general_input(input, host, out_value.element) else {
        return Vec::new();
    };
    let partials = ipu_device::kernels::describe::default_partials(input);
    if rhs_value.element != host {
        return Vec::new();
    }
    let (lhs_dims, rhs_dims, out_dims) = (
        canonical_dims(&lhs_value.shape),
        canonical_dims(&rhs_value.shape),
        canonical_dims(&out_value.shape),
    );
    let (Ok(bc), Ok(m), Ok(k), Ok(n)) = (
        u32::try_from(out_dims[0]),
        u32::try_from(dims.m),
        u32::try_from(dims.k),
        u32::try_from(dims.n),
    ) else {
        return Vec::new();
    };
    let b_host = graph.from_host(op.operands[1]);
    let b_constant = rhs_value.origin == Origin::Constant;
    let any_argument = op.operands[..2]
        .iter()
        .any(|&v| graph.values[v].origin == Origin::Argument && graph.from_host(v));
    let policy_scale = if input.is_fp8() {
        options.fp8_scale.unwrap_or(0)
    } else {
        0
    };
    // Converted at their source (FP8 without transposes), the operands are fetched and
    // multiplied in the input precision (see `general_source_cast`).
    let transposes = (transpose_lhs, transpose_rhs);
    let source_cast = general_casts_at_source(graph, op, (host, input), transposes);
    let (fetched_precision, fetched_scale) = if source_cast {
        (input, policy_scale)
    } else {
        (host, 0)
    };
    let mut out = Vec::new();
    // More products than tiles: whole products, several per tile, one after the other.
    let per_tile = general_batches_per_tile(bc, m, n, options.tiles);
    let blocks: Vec<(u32, u32)> = if per_tile > 1 {
        vec![(m, n)]
    } else {
        general_matmul_blocks(bc, m, n, options.tiles).collect()
    };
    for (rp, cb) in blocks {
        let grid = [bc.div_ceil(per_tile), m / rp, n / cb];
        let tiles = grid.iter().product::<u32>();
        let [lhs_need, rhs_need, output] = block_needs(
            [lhs_dims, rhs_dims, out_dims],
            &grid,
            transposes,
            (fetched_precision, partials),
        );
        // Several products per tile fetch B like A (no host-packed blocks).
        let tile = GeneralTile::new(
            (rp, k, cb),
            transposes,
            b_host && per_tile == 1,
            (fetched_precision, input),
        );
        let (compute, scratch) = (
            u64::from(per_tile) * tile.cycles(target),
            tile.scratch_bytes(),
        );
        // A packed host right operand is written by the host in AMP-right order: a constant
        // where each tile reads it, at initialization (resident: runs move no weights), an
        // argument once per block (`host_order`), its readers exchanging their pieces.
        let b_packed = tile.b_packed;
        // The operand blocks and the GEMM scratch live in interleaved memory.
        let fetched = ValueFormat {
            memory: MemoryClass::Interleaved,
            scale: fetched_scale,
            ..ValueFormat::row_major(fetched_precision)
        };
        let rhs_format = if b_packed {
            ValueFormat {
                order: ElementOrder::AmpRight,
                ..fetched
            }
        } else {
            fetched
        };
        let plan = OperatorPlan::GeneralMatmul(GeneralMatmulPlan {
            grid,
            rows: rp,
            cols: cb,
            tiles,
            precision: input,
            batches_per_tile: per_tile,
            // The host writes an argument operand where the tiles read it, in the fetched
            // precision (each block once, its readers exchanging their pieces).
            host_order: any_argument,
            // The general matmul casts both operands on the device at the policy's scale.
            scales: input
                .is_fp8()
                .then(|| operand_scales([policy_scale, policy_scale])),
        });
        out.push(Candidate {
            compute_cycles: compute,
            resident_weights: b_packed && b_constant,
            transient: MemoryUse::of(scratch, MemoryClass::Interleaved),
            ..Candidate::new(
                plan,
                tiles,
                vec![
                    Need {
                        shards: lhs_need,
                        format: fetched,
                    },
                    Need {
                        shards: rhs_need,
                        format: rhs_format,
                    },
                ],
                Need {
                    shards: output,
                    format: ValueFormat::row_major(partials),
                },
            )
        });
    }
    out
}

/// The blocks each tile of `grid` (batch, row and column blocks) reads of the left and right
/// operands (in the fetched precision, transposed ones along their other axis) and writes of
/// the result (in the partials precision).
fn block_needs(
    [lhs_dims, rhs_dims, out_dims]: [[u64; 3]; 3],
    grid: &[u32; 3],
    (transpose_lhs, transpose_rhs): (bool, bool),
    (fetched, partials): (Precision, Precision),
) -> [Shards; 3] {
    let batch_axis = |dims: [u64; 3]| (dims[0] > 1).then_some(0);
    let lhs = Shards::needed_by_grid(
        lhs_dims,
        fetched.bytes(),
        grid,
        &[
            batch_axis(lhs_dims),
            Some(if transpose_lhs { 2 } else { 1 }),
            None,
        ],
    );
    let rhs = Shards::needed_by_grid(
        rhs_dims,
        fetched.bytes(),
        grid,
        &[
            batch_axis(rhs_dims),
            None,
            Some(if transpose_rhs { 1 } else { 2 }),
        ],
    );
    let output = Shards::needed_by_grid(
        out_dims,
        partials.bytes(),
        grid,
        &[Some(0), Some(1), Some(2)],
    );
    [lhs, rhs, output]
}
