//! Kernel cycle models: one function of a [`KernelSpec`] and the target table, shared by the
//! planner and the simulator. Every number comes from `target.kernels`, `target.amp` or
//! `target.exchange`; no constants live here. All models are per call on one tile and include
//! the launch overhead (11 cycles on the C600 [HW-C600]); the calibrated GEMM call already does.
//!
//! # GEMM on the AMP
//! The calibrated C600 call (F16 inputs, K block 64, C block 64, `rows` rows) costs
//! `294 + 64 * rows + 4 * 940` cycles with weights in interleaved memory and
//! `294 + 64 * rows + 4 * 1063` from standard memory [HW-C600]: a fixed part, a streaming part
//! per row, and a weight feed per 16-column group. Other shapes and precisions scale each part
//! by what it physically does:
//! * **per row**: the AMP does `k * c` MACs per row at `macs_per_cycle(input)` (F16 64, FP8
//!   128, F32 16). The calibrated 64 cycles/row is exactly 64 * 64 / 64, so the row term is
//!   `64 * rows * (k * c_padded / macs(input)) / (64 * 64 / macs(F16))`, rounded up once for
//!   the call. `c` is padded to whole 16-column groups (the AMP produces 16 columns per pass).
//! * **weight feed**: each 16-column group's weights (`k x 16` elements) are streamed into the
//!   AMP. The feed time scales with the bytes streamed: `940 * (k * bytes(input)) / (64 * 2)`
//!   per group, so an FP8 K=64 group costs 470 and an F32 one 1,880. Standard memory has no
//!   128-bit load path, so it uses the 1,063 figure scaled the same way.
//! * **fixed**: 294 per call regardless of shape.
//!
//! `accumulate` does not change the cost: the AMP loads the previous partials into its
//! accumulators in the same pipeline that drains them (the calibrated formula covers both).
//! The AMP rate is set by the input precision; partials are F16 for F16 and FP8 inputs and F32
//! for F32 inputs (PopLibs' "half partials for quarter"), and the kernels document rounding.
//!
//! # Vector kernels
//! Elementwise kernels run on the six workers' vector units. Add (F16) does 16 elements per
//! cycle [HW-C600]; F32 runs at half the lanes (8/cycle), FP8 is computed through F16 (16/cycle).
//! The same vector rate prices the elementwise passes of softmax, layer norm and reduction,
//! the scale kernel's one multiply per element and the group-bias add (an add over a panel
//! range, priced exactly as an add of the same elements). The attention kernels (blocked, online
//! softmax) are priced at the F32 rate whatever their input precision: their state and all
//! their arithmetic are f32.

use crate::kernels::spec::{ElementOrder, GeluForm, KernelSpec};
use crate::precision::{MemoryClass, Precision};
use crate::target::Target;

/// Errors from costing a concrete kernel call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CostError {
    #[error(
        "gemm call selects row entry {index}, but the kernel has {count} entries (rows {rows:?})"
    )]
    GemmRowEntry {
        index: u32,
        count: usize,
        rows: Vec<u32>,
    },
    #[error("gemm call has {got} arguments; the row entry is argument 3")]
    GemmMissingRowArgument { got: usize },
}

fn launch128(target: &Target) -> u128 {
    u128::from(target.kernels.launch_overhead.value)
}

/// Cycle counts are computed in u128 (sizes are u32, products of three of them overflow u64)
/// and clamp at `u64::MAX` rather than wrap.
fn clamp(cycles: u128) -> u64 {
    u64::try_from(cycles).unwrap_or(u64::MAX)
}

/// `ceil(numerator / denominator)` with a zero denominator treated as 1 (table values are
/// positive; this keeps a malformed table from dividing by zero).
fn div_ceil(numerator: u128, denominator: u128) -> u64 {
    clamp(numerator.div_ceil(denominator.max(1)))
}

/// Elements per cycle of the elementwise vector path for `precision` (see module docs).
pub fn vector_elements_per_cycle(precision: Precision, target: &Target) -> u64 {
    // The calibrated rate is F16's: 2-byte lanes. FP8 has no narrower arithmetic, it is
    // widened to F16.
    let f16_rate = u64::from(target.kernels.add_elements_per_cycle.value);
    (f16_rate * 2 / u64::from(precision.bytes().max(2))).max(1)
}

/// Cycles one call of `spec` takes on one tile of `target`. For a GEMM with several row entry
/// points this is the largest entry (the planner's worst case); [`kernel_call_cycles`] costs
/// the entry a call actually selects.
pub fn kernel_cycles(spec: &KernelSpec, target: &Target) -> u64 {
    match spec {
        KernelSpec::Gemm {
            input,
            weights,
            k,
            c,
            rows,
            ..
        }
        | KernelSpec::GemmRowMajor {
            input,
            weights,
            k,
            c,
            rows,
            ..
        } => {
            let max_rows = rows.iter().copied().max().unwrap_or(0);
            gemm_call_cycles(*input, *weights, *k, *c, max_rows, target)
        }
        KernelSpec::Cast { from, to, elements } => cast_cycles(*from, *to, *elements, target),
        KernelSpec::Rearrange {
            order,
            precision,
            rows,
            rows_padded,
            cols,
            cols_padded,
            ..
        } => {
            let rows = (*rows).max(*rows_padded);
            let cols = (*cols).max(*cols_padded);
            rearrange_cycles(*order, *precision, rows, cols, target)
        }
        KernelSpec::Add {
            precision,
            rows,
            cols,
            ..
        } => add_cycles(*precision, *rows, *cols, target),
        KernelSpec::Gelu { form, elements, .. } => gelu_cycles(*form, *elements, target),
        KernelSpec::Softmax {
            precision,
            rows,
            cols,
            ..
        } => softmax_cycles(*precision, *rows, *cols, target),
        KernelSpec::LayerNorm {
            precision,
            rows,
            cols,
            ..
        } => layer_norm_cycles(*precision, *rows, *cols, target),
        KernelSpec::ReduceAdd {
            partials_precision,
            output,
            elements,
            partials,
        } => reduce_add_cycles(*partials_precision, *output, *elements, *partials, target),
        KernelSpec::Copy { bytes } => copy_cycles(u64::from(*bytes), target),
        // Reading the 4-byte counter (and the address arithmetic) is priced as 4 more bytes
        // copied; advancing it as a 4-byte copy.
        KernelSpec::CopySlice { bytes, .. } => copy_cycles(u64::from(*bytes) + 4, target),
        KernelSpec::Count => copy_cycles(4, target),
        KernelSpec::Fill {
            precision,
            elements,
        } => copy_cycles(u64::from(*elements) * u64::from(precision.bytes()), target),
        KernelSpec::Transpose { rows, cols, .. } => transpose_cycles(*rows, *cols, target),
        KernelSpec::Scale {
            precision,
            elements,
        } => scale_cycles(*precision, *elements, target),
        KernelSpec::AttentionBlock {
            rows, keys, width, ..
        } => attention_block_cycles(*rows, *keys, *width, target),
        KernelSpec::AttentionFinish { rows, width, .. } => {
            attention_finish_cycles(*rows, *width, target)
        }
        KernelSpec::AttentionColumns {
            keys,
            queries,
            width,
            ..
        } => attention_columns_cycles(*queries, *keys, *width, target),
        KernelSpec::AttentionRows { rows, keys, .. } => attention_rows_cycles(*rows, *keys, target),
        KernelSpec::AttentionRowsMerge {
            rows,
            width,
            first,
            last,
            ..
        } => attention_rows_merge_cycles(*rows, *width, (*first, *last), target),
        KernelSpec::AttentionFinishColumns { queries, width, .. }
        | KernelSpec::AttentionSplitFinish { queries, width, .. } => {
            transpose_cycles(*queries, *width, target)
        }
        KernelSpec::AttentionMerge {
            splits,
            rows,
            width,
            panels,
            ..
        } => attention_merge_cycles(*splits, *rows, *width, *panels, target),
        KernelSpec::AddGroupBias {
            precision,
            elements,
            ..
        } => add_group_bias_cycles(*precision, *elements, target),
        KernelSpec::Map {
            output,
            rows,
            cols,
            body,
            inputs,
            ..
        } => map_cycles(*output, (*rows, *cols), inputs.len(), body, target),
        KernelSpec::Reduce {
            precision,
            rows,
            cols,
            ..
        } => reduce_cycles(*precision, *rows, *cols, target),
    }
}

/// A map kernel (derived from the table like the add and the softmax): per element, one vector
/// op at the output precision's vector rate for each arithmetic op of the body (at least one:
/// the loads and the store of a copy), and for each transcendental function (exp, tanh, erf,
/// log, sqrt, division) one `exp_cycles_per_element` [Derived]; plus the launch. A body of one
/// add costs what [`add_cycles`] charges; `inputs` beyond the first two add a load each.
pub fn map_cycles(
    output: Precision,
    (rows, cols): (u32, u32),
    inputs: usize,
    body: &ipu_dialects::graph::scalar::ScalarProgram,
    target: &Target,
) -> u64 {
    let elements = u128::from(rows) * u128::from(cols);
    let (simple, transcendental) = body.op_counts();
    let loads = inputs.saturating_sub(2) as u128;
    let ops = (u128::from(simple) + loads).max(1);
    let rate = u128::from(vector_elements_per_cycle(output, target));
    let exps = elements
        * u128::from(transcendental)
        * u128::from(target.kernels.exp_cycles_per_element.value);
    clamp(u128::from(div_ceil(elements * ops, rate)) + exps + launch128(target))
}

/// A row reduction (derived like the softmax's passes): one vector op per element at the
/// precision's vector rate, one pass setup per row charged like a launch, plus the launch.
pub fn reduce_cycles(precision: Precision, rows: u32, cols: u32, target: &Target) -> u64 {
    let elements = u128::from(rows) * u128::from(cols);
    let rate = u128::from(vector_elements_per_cycle(precision, target));
    clamp(
        u128::from(div_ceil(elements, rate))
            + u128::from(rows) * launch128(target)
            + launch128(target),
    )
}

/// Cycles of one concrete call of `spec` with its run-time `args` (see the ABI in
/// `kernels::spec`). Only the GEMM's cost depends on an argument: the row entry it selects.
pub fn kernel_call_cycles(
    spec: &KernelSpec,
    args: &[u32],
    target: &Target,
) -> Result<u64, CostError> {
    match spec {
        KernelSpec::Gemm {
            input,
            weights,
            k,
            c,
            rows,
            ..
        }
        | KernelSpec::GemmRowMajor {
            input,
            weights,
            k,
            c,
            rows,
            ..
        } => {
            let index = *args
                .get(3)
                .ok_or(CostError::GemmMissingRowArgument { got: args.len() })?;
            let entry = usize::try_from(index)
                .ok()
                .and_then(|i| rows.get(i))
                .ok_or_else(|| CostError::GemmRowEntry {
                    index,
                    count: rows.len(),
                    rows: rows.clone(),
                })?;
            Ok(gemm_call_cycles(*input, *weights, *k, *c, *entry, target))
        }
        _ => Ok(kernel_cycles(spec, target)),
    }
}

/// One AMP GEMM call: `C[rows x c] (+)= A[rows x k] * B[k x c]` with `input` elements and
/// weights in `weights` memory (the generalization is in the module documentation).
pub fn gemm_call_cycles(
    input: Precision,
    weights: MemoryClass,
    k: u32,
    c: u32,
    rows: u32,
    target: &Target,
) -> u64 {
    let costs = &target.kernels;
    let group_columns = u64::from(target.amp.group_columns.value.max(1));
    let groups = u64::from(c).div_ceil(group_columns);
    let c_padded = groups * group_columns;
    let (k, rows) = (u64::from(k), u64::from(rows));
    let calibration_k = u64::from(costs.gemm_calibration_k.value);
    let calibration_c = u64::from(costs.gemm_calibration_c.value);
    let macs = u64::from(target.amp.macs_per_cycle(input));
    let macs_f16 = u64::from(target.amp.macs_per_cycle(Precision::F16));

    // rows * per_row_cal * (k * c_padded / macs) / (cal_k * cal_c / macs_f16)
    let row_term = div_ceil(
        u128::from(rows)
            * u128::from(costs.gemm_per_row_per_64_columns.value)
            * u128::from(k * c_padded)
            * u128::from(macs_f16),
        u128::from(calibration_k * calibration_c * macs),
    );
    let feed_calibrated = match weights {
        MemoryClass::Interleaved => costs.gemm_weight_feed_interleaved.value,
        MemoryClass::Standard => costs.gemm_weight_feed_standard.value,
    };
    // The calibrated feed streams calibration_k rows of F16 (2-byte) weights per group.
    let feed_per_group = div_ceil(
        u128::from(feed_calibrated) * u128::from(k * u64::from(input.bytes())),
        u128::from(calibration_k * u64::from(Precision::F16.bytes())),
    );
    clamp(
        u128::from(costs.gemm_fixed.value)
            + u128::from(row_term)
            + u128::from(groups) * u128::from(feed_per_group),
    )
}

/// The single-tile AMP curve, `[n_rows x 16] @ [16 x 16]` in F16: the per-row cost is the
/// 16 x 16 MACs at the F16 AMP rate (4 cycles on IPU2/IPU21), plus the measured fixed cost of
/// a call (335 on Bow [HW-Bow]).
pub fn amp_single_tile_cycles(n_rows: u32, target: &Target) -> u64 {
    let group = u128::from(target.amp.group_columns.value);
    let macs = u128::from(target.amp.macs_per_cycle(Precision::F16));
    let per_row = u128::from(div_ceil(group * group, macs));
    clamp(u128::from(n_rows) * per_row + u128::from(target.kernels.amp_curve_intercept.value))
}

/// Cycles of an `m x k @ k x n` GEMM at peak AMP rate spread perfectly over `tiles` tiles (the
/// roofline a plan is compared with). `tiles == 0` is treated as one tile.
pub fn ideal_gemm_cycles(
    m: u64,
    n: u64,
    k: u64,
    precision: Precision,
    tiles: u32,
    target: &Target,
) -> u64 {
    let macs = u128::from(target.amp.macs_per_cycle(precision)) * u128::from(tiles.max(1));
    let work = (u128::from(m) * u128::from(n)).saturating_mul(u128::from(k));
    div_ceil(work, macs)
}

/// One host stream step (a host write or read): the fixed phase cost plus the longer of the
/// busiest tile's bytes at the tile exchange rate and all `total_bytes` over the host link
/// (`exchange.host_link_bytes_per_second`, measured on a C600 [HW-C600]) at the target's
/// clock.
pub fn host_stream_cycles(busiest_tile_bytes: u64, total_bytes: u64, target: &Target) -> u64 {
    let tiles = div_ceil(
        u128::from(busiest_tile_bytes),
        u128::from(target.exchange.bytes_per_cycle.value.max(1)),
    );
    let link = host_link_cycles(total_bytes, target);
    u64::from(target.exchange.phase_cycles.value) + tiles.max(link)
}

/// Cycles to move `bytes` over the host link at the target's clock.
pub fn host_link_cycles(bytes: u64, target: &Target) -> u64 {
    let rate = target.exchange.host_link_bytes_per_second.value.max(1);
    let cycles = (bytes as f64) * target.clock_hz.value / (rate as f64);
    clamp(cycles.ceil() as u128)
}

/// One exchange phase: the fixed phase cost (global sync, row start and the first source
/// selection: `exchange.phase_cycles`) plus the busiest endpoint at 4 bytes/cycle.
/// `max_bus_bytes_out` is the largest total over one send bus (a tile's, or a physical
/// pair's on a table whose pairs share one); `max_tile_bytes_in` the largest receive load,
/// counting each source switch as its select latency in bytes ([`receive_load`]).
pub fn exchange_phase_cycles(
    max_bus_bytes_out: u64,
    max_tile_bytes_in: u64,
    target: &Target,
) -> u64 {
    let busiest = max_bus_bytes_out.max(max_tile_bytes_in);
    u64::from(target.exchange.phase_cycles.value)
        + div_ceil(
            u128::from(busiest),
            u128::from(target.exchange.bytes_per_cycle.value),
        )
}

/// A receiver's load in bytes at the exchange rate: the `bytes` it receives plus, for each of
/// its `sources` after the first, the select latency (`exchange.latency_events` [HW-C600])
/// as the bytes it could have received meanwhile.
pub fn receive_load(bytes: u64, sources: u64, target: &Target) -> u64 {
    bytes
        + sources.saturating_sub(1)
            * u64::from(target.exchange.latency_events.value)
            * u64::from(target.exchange.bytes_per_cycle.value)
}

/// Cast: `(input bytes + output bytes) / 8 + launch` [HW-C600].
pub fn cast_cycles(from: Precision, to: Precision, elements: u32, target: &Target) -> u64 {
    let bytes = u128::from(elements) * u128::from(from.bytes() + to.bytes());
    let rate = u128::from(target.kernels.cast_bytes_per_cycle.value);
    clamp(u128::from(div_ceil(bytes, rate)) + launch128(target))
}

/// Add with broadcast: `elements / vector rate + launch` (16 elements/cycle in F16 [HW-C600]).
/// Broadcasting changes only which `b` row is read, not the work.
pub fn add_cycles(precision: Precision, rows: u32, cols: u32, target: &Target) -> u64 {
    let elements = u128::from(rows) * u128::from(cols);
    let rate = u128::from(vector_elements_per_cycle(precision, target));
    clamp(u128::from(div_ceil(elements, rate)) + launch128(target))
}

/// Group-bias add over an AMP panel range: exactly `add_cycles(precision, 1, elements)`, i.e.
/// `elements / vector rate + launch` (16 elements/cycle in F16 [HW-C600], 8 in F32). Each
/// 16-element unit is one vector add against its group's bias; moving to the next group's
/// bias at a group boundary is a pointer step, and the target table has no sourced per-group
/// cost, so none is charged. `rows` and the run-time `start` do not change the cost.
pub fn add_group_bias_cycles(precision: Precision, elements: u32, target: &Target) -> u64 {
    add_cycles(precision, 1, elements, target)
}

/// GeLU: tanh form 10 cycles/element + launch [HW-C600]. The erf form has no hardware
/// instruction (tanh has one), so it is an approximation polynomial plus an exp; we charge it
/// twice the tanh form (`gelu_erf_cycles_per_element`, [Derived]). The per-element cost is
/// dominated by the transcendental sequence, not the load width, so it is the same for every
/// precision (F32 in, or F16/FP8 widened).
pub fn gelu_cycles(form: GeluForm, elements: u32, target: &Target) -> u64 {
    let per_element = match form {
        GeluForm::Tanh => target.kernels.gelu_cycles_per_element.value,
        GeluForm::Erf => target.kernels.gelu_erf_cycles_per_element.value,
    };
    clamp(u128::from(elements) * u128::from(per_element) + launch128(target))
}

/// Scale by a run-time f32: one vector multiply per element at the add's rate,
/// `elements / vector rate + launch` (16 elements/cycle in F16 [HW-C600], so 8 in F32).
pub fn scale_cycles(precision: Precision, elements: u32, target: &Target) -> u64 {
    let rate = u128::from(vector_elements_per_cycle(precision, target));
    clamp(u128::from(div_ceil(u128::from(elements), rate)) + launch128(target))
}

/// One key block of online-softmax attention, per row: `keys` exps (`exp_cycles_per_element`,
/// as in softmax) plus `keys * width` multiply-adds (p times v into the output accumulator) and
/// `width` rescales of the output by the correction factor, both at the F32 vector rate (8/cycle
/// on the C600: the state is f32 whatever the input precision):
/// `rows * keys * exp + ceil(rows * (keys * width + width) / f32 rate) + launch`.
/// The max, the row sum and the per-row correction exp are small next to these and not charged;
/// causal masking skips work, but the offsets are run-time arguments, so the model charges the
/// unmasked worst case.
pub fn attention_block_cycles(rows: u32, keys: u32, width: u32, target: &Target) -> u64 {
    let (rows, keys, width) = (u128::from(rows), u128::from(keys), u128::from(width));
    let exps = rows * keys * u128::from(target.kernels.exp_cycles_per_element.value);
    let rate = u128::from(vector_elements_per_cycle(Precision::F32, target));
    let vector_ops = u128::from(div_ceil(rows * (keys * width + width), rate));
    clamp(exps + vector_ops + launch128(target))
}

/// One key block of the column formulation ([`KernelSpec::AttentionColumns`]): `queries *
/// keys` exps, as the row form, and at the F32 vector rate two passes over the padded score
/// block (the maximum, then the exps' stores and sum) and the rescale of the `width x
/// queries` output: `queries * keys * exp + ceil((2 * pad16(keys) * pad16(queries) + width *
/// pad16(queries)) / f32 rate) + launch`. The products with the values run on the AMP (a
/// GEMM call of their own), not here.
pub fn attention_columns_cycles(queries: u32, keys: u32, width: u32, target: &Target) -> u64 {
    let pad = |n: u32| u128::from(n.div_ceil(16) * 16);
    let exps = u128::from(queries)
        * u128::from(keys)
        * u128::from(target.kernels.exp_cycles_per_element.value);
    let rate = u128::from(vector_elements_per_cycle(Precision::F32, target));
    let passes = 2 * pad(keys) * pad(queries) + u128::from(width) * pad(queries);
    clamp(exps + u128::from(div_ceil(passes, rate)) + launch128(target))
}

/// One key block's softmax in the rows formulation ([`KernelSpec::AttentionRows`]): `rows *
/// keys` exps and at the F32 vector rate the two passes over the padded score block (the
/// maximum, then the exps' stores and sum): `rows * keys * exp + ceil(2 * rows * pad16(keys) /
/// f32 rate) + launch`. A target that knows the kernel's cost per 16-score panel row
/// (`attention_rows_update_per_panel_row`) charges that per row and panel instead.
pub fn attention_rows_cycles(rows: u32, keys: u32, target: &Target) -> u64 {
    if let Some(per_panel_row) = &target.kernels.attention_rows_update_per_panel_row {
        let panel_rows = u128::from(rows) * u128::from(keys.div_ceil(16));
        return clamp(panel_rows * u128::from(per_panel_row.value) + launch128(target));
    }
    let exps = u128::from(rows)
        * u128::from(keys)
        * u128::from(target.kernels.exp_cycles_per_element.value);
    let rate = u128::from(vector_elements_per_cycle(Precision::F32, target));
    let passes = 2 * u128::from(rows) * u128::from(keys.div_ceil(16) * 16);
    clamp(exps + u128::from(div_ceil(passes, rate)) + launch128(target))
}

/// The rows formulation's merge ([`KernelSpec::AttentionRowsMerge`]): per row two exps (none
/// for the first block), per output element two multiplies and an add (a copy for the first
/// block) and the last block's division, at the F32 vector rate, plus the launch; on a target
/// that knows it, its cost per 16-column panel row (`attention_rows_merge_per_panel_row`) per
/// row and panel, whatever the block.
pub fn attention_rows_merge_cycles(
    rows: u32,
    width: u32,
    (first, last): (bool, bool),
    target: &Target,
) -> u64 {
    if let Some(per_panel_row) = &target.kernels.attention_rows_merge_per_panel_row {
        let panel_rows = u128::from(rows) * u128::from(width.div_ceil(16));
        return clamp(panel_rows * u128::from(per_panel_row.value) + launch128(target));
    }
    let exps = if first {
        0
    } else {
        2 * u128::from(rows) * u128::from(target.kernels.exp_cycles_per_element.value)
    };
    let ops = if first { 1 } else { 3 } + u128::from(last);
    let rate = u128::from(vector_elements_per_cycle(Precision::F32, target));
    clamp(
        exps + u128::from(div_ceil(ops * u128::from(rows) * u128::from(width), rate))
            + launch128(target),
    )
}

/// The cross-tile merge of `splits` key splits' outputs ([`KernelSpec::AttentionMerge`]): per
/// row `splits` exps (`exp_cycles_per_element`) for the weights, and at the F32 vector rate
/// `splits` multiply-adds per output element plus its division: `rows * splits * exp +
/// ceil(rows * width * (splits + 1) / f32 rate) + launch`. Merged from panels, every output
/// element is also written to its own strided address, as the column finish writes its rows
/// ([`transpose_cycles`] of the `rows x width` block).
pub fn attention_merge_cycles(
    splits: u32,
    rows: u32,
    width: u32,
    panels: bool,
    target: &Target,
) -> u64 {
    let transpose = if panels {
        u128::from(transpose_cycles(rows, width, target)) - launch128(target)
    } else {
        0
    };
    let (splits, rows, width) = (u128::from(splits), u128::from(rows), u128::from(width));
    let exps = rows * splits * u128::from(target.kernels.exp_cycles_per_element.value);
    let rate = u128::from(vector_elements_per_cycle(Precision::F32, target));
    let vector_ops = u128::from(div_ceil(rows * width * (splits + 1), rate));
    clamp(exps + vector_ops + transpose + launch128(target))
}

/// Final normalization of blocked attention: `width` f32 divisions per row at the F32 vector
/// rate, `ceil(rows * width / f32 rate) + launch` (the output precision only changes the store).
pub fn attention_finish_cycles(rows: u32, width: u32, target: &Target) -> u64 {
    let elements = u128::from(rows) * u128::from(width);
    let rate = u128::from(vector_elements_per_cycle(Precision::F32, target));
    clamp(u128::from(div_ceil(elements, rate)) + launch128(target))
}

/// Transpose of a dense `rows x cols` block: `rows * cols * 4 + launch`. Every element goes to
/// its own strided address (destination stride `rows`), so nothing moves in 8-byte vectors;
/// that is the per-element shuffle of the AMP-left pack (4 cycles/element [HW-C600]), which
/// also reorders single elements into a strided layout. Like the pack, the cost does not depend
/// on the precision (one load and one store per element of 1, 2 or 4 bytes), nor on which of
/// rows and cols is larger.
pub fn transpose_cycles(rows: u32, cols: u32, target: &Target) -> u64 {
    let elements = u128::from(rows) * u128::from(cols);
    let per_element = u128::from(target.kernels.amp_left_pack_cycles_per_element.value);
    clamp(elements * per_element + launch128(target))
}

/// Rearrange between row-major and an AMP order, charged on the padded block (padding is
/// written as zeros): 4 cycles/element for AMP orders (the AMP-left pack [HW-C600]; right and
/// output orders shuffle the same way), a plain copy at 8 B/cycle for row-major to row-major.
pub fn rearrange_cycles(
    order: ElementOrder,
    precision: Precision,
    rows: u32,
    cols: u32,
    target: &Target,
) -> u64 {
    let elements = u128::from(rows) * u128::from(cols);
    match order {
        ElementOrder::RowMajor => {
            copy_cycles_wide(elements * u128::from(precision.bytes()), target)
        }
        ElementOrder::AmpLeft | ElementOrder::AmpRight | ElementOrder::AmpOutput => {
            let per_element = u128::from(target.kernels.amp_left_pack_cycles_per_element.value);
            clamp(elements * per_element + launch128(target))
        }
    }
}

/// Row softmax, three passes per row (derived from the table):
/// 1. max over the row: one vector op per element;
/// 2. `exp(x - max)` and the running sum: one exp per element (`exp_cycles_per_element`,
///    half the tanh GeLU, [Derived]);
/// 3. multiply by the reciprocal of the sum: one vector op per element.
///
/// Each pass over a row costs a loop setup charged like a launch. Causal masking skips exps
/// for masked elements, but the row offset is a run-time argument, so the model charges the
/// unmasked worst case.
pub fn softmax_cycles(precision: Precision, rows: u32, cols: u32, target: &Target) -> u64 {
    let elements = u128::from(rows) * u128::from(cols);
    let rate = u128::from(vector_elements_per_cycle(precision, target));
    let vector_passes = u128::from(div_ceil(2 * elements, rate));
    let exps = elements * u128::from(target.kernels.exp_cycles_per_element.value);
    let row_setup = 3 * u128::from(rows) * launch128(target);
    clamp(vector_passes + exps + row_setup + launch128(target))
}

/// Row layer norm (derived from the table): mean (1 op/element), variance (subtract and
/// multiply-add: 2), normalize with gamma and beta (subtract, scale, fused multiply-add: 3),
/// so 6 vector ops per element; per row one reciprocal square root (`rsqrt_cycles_per_row`,
/// [Derived]) and three pass setups charged like launches.
pub fn layer_norm_cycles(precision: Precision, rows: u32, cols: u32, target: &Target) -> u64 {
    let elements = u128::from(rows) * u128::from(cols);
    let rate = u128::from(vector_elements_per_cycle(precision, target));
    let vector_ops = u128::from(div_ceil(6 * elements, rate));
    let per_row = u128::from(target.kernels.rsqrt_cycles_per_row.value) + 3 * launch128(target);
    clamp(vector_ops + u128::from(rows) * per_row + launch128(target))
}

/// Reduce-add of `partials` blocks: the calibrated ~1 output byte per cycle [HW-C600] covers
/// converting and storing the result; each partial beyond the first adds one vector add per
/// element at the partials' precision.
pub fn reduce_add_cycles(
    partials_precision: Precision,
    output: Precision,
    elements: u32,
    partials: u32,
    target: &Target,
) -> u64 {
    let output_bytes = u128::from(elements) * u128::from(output.bytes());
    let store_rate = u128::from(target.kernels.reduction_output_bytes_per_cycle.value);
    let store = u128::from(div_ceil(output_bytes, store_rate));
    let adds = u128::from(div_ceil(
        u128::from(elements) * u128::from(partials.saturating_sub(1)),
        u128::from(vector_elements_per_cycle(partials_precision, target)),
    ));
    clamp(store + adds + launch128(target))
}

/// Local copy (and fill, which is store-bound the same way): 8 B/cycle + launch [HW-C600].
pub fn copy_cycles(bytes: u64, target: &Target) -> u64 {
    copy_cycles_wide(u128::from(bytes), target)
}

fn copy_cycles_wide(bytes: u128, target: &Target) -> u64 {
    let rate = u128::from(target.kernels.local_copy_bytes_per_cycle.value);
    clamp(u128::from(div_ceil(bytes, rate)) + launch128(target))
}
