//! What a [`KernelSpec`] means to the compiler: its name, source file, constant parameters,
//! entry points and the limits a specialization must respect.

use super::error::KernelError;
use sha2::{Digest, Sha256};

use super::spec::{ElementOrder, GeluForm, KernelSpec, MAP_MAX_INPUTS};
use crate::numerics::SCALE_RANGE;
use crate::precision::Precision;
use ipu_dialects::ipu::Combiner;

/// Combiner code used by `device/kernels/reduce.mlir`.
pub const fn combiner_code(combiner: Combiner) -> i64 {
    match combiner {
        Combiner::Add => 0,
        Combiner::Mul => 1,
        Combiner::Max => 2,
        Combiner::Min => 3,
    }
}

/// Largest `k * c` of a GEMM call: the kernel widens B into an f32 stack buffer of this many
/// elements (256 KiB), which must fit the stacks of the simulator's worker threads.
pub const GEMM_MAX_WEIGHT_ELEMENTS: u32 = 65_536;

/// Largest `keys` of an attention block: the kernel keeps the block's `p` values in an f32
/// stack buffer of this many elements (256 KiB, like the GEMM's widened weights).
pub const ATTENTION_MAX_KEYS: u32 = 65_536;

/// Width of a column group in every AMP order (the AMP works on 16 columns at a time).
pub const AMP_GROUP: u32 = 16;

/// Precision code used by the kernel sources (`device/kernels/common.mlir`).
pub const fn precision_code(precision: Precision) -> i64 {
    match precision {
        Precision::F32 => 0,
        Precision::F16 => 1,
        Precision::F8E4M3 => 2,
        Precision::F8E5M2 => 3,
    }
}

/// The default partials precision of a GEMM with these inputs: f16 for f16 and FP8 inputs
/// ("half is the only supported partials type for quarter"), f32 for f32.
pub const fn default_partials(input: Precision) -> Precision {
    match input {
        Precision::F32 => Precision::F32,
        _ => Precision::F16,
    }
}

impl KernelSpec {
    /// The specialization name, also the symbol of its entry point (GEMM: `<name>_r<rows>` per
    /// row count). Follows the seed: `gemm_f8_interleaved_k32_c64_r32_r34`,
    /// `rearrange_amp_left_f16_o0_r31_p32_c32_p32`, `cast_f16_f8_n1024`; the kernels added
    /// since use the same shape: `transpose_f32_r16_c32`, `scale_f16_n1024`,
    /// `add_group_bias_f16_r8_n64`.
    pub fn name(&self) -> String {
        match self {
            KernelSpec::Gemm {
                input,
                partials,
                weights,
                k,
                c,
                rows,
                accumulate,
            }
            | KernelSpec::GemmRowMajor {
                input,
                partials,
                weights,
                k,
                c,
                rows,
                accumulate,
                ..
            } => {
                let (row_a, row_c) = self.gemm_row_major();
                let a = match (row_a, row_c) {
                    (false, false) => "",
                    (true, false) => "_arow",
                    (false, true) => "_crow",
                    (true, true) => "_arow_crow",
                };
                let mut name = format!(
                    "gemm_{}_{}{a}_k{k}_c{c}",
                    input.short_name(),
                    weights.name()
                );
                for r in rows {
                    name.push_str(&format!("_r{r}"));
                }
                if *partials != default_partials(*input) {
                    name.push_str(&format!("_p{}", partials.short_name()));
                }
                if *accumulate {
                    name.push_str("_acc");
                }
                name
            }
            KernelSpec::Cast { from, to, elements } => {
                format!("cast_{}_{}_n{elements}", from.short_name(), to.short_name())
            }
            KernelSpec::Rearrange {
                order,
                to_amp,
                precision,
                offset,
                rows,
                rows_padded,
                cols,
                cols_padded,
            } => {
                let direction = if *to_amp { "" } else { "from_" };
                format!(
                    "rearrange_{direction}{}_{}_o{offset}_r{rows}_p{rows_padded}_c{cols}_p{cols_padded}",
                    order.name(),
                    precision.short_name()
                )
            }
            KernelSpec::Add {
                precision,
                rows,
                cols,
                b_rows,
            } => {
                format!("add_{}_r{rows}_c{cols}_b{b_rows}", precision.short_name())
            }
            KernelSpec::Gelu {
                precision,
                form,
                elements,
            } => {
                let form = match form {
                    GeluForm::Erf => "erf",
                    GeluForm::Tanh => "tanh",
                };
                format!("gelu_{form}_{}_n{elements}", precision.short_name())
            }
            KernelSpec::Softmax {
                precision,
                rows,
                cols,
                causal,
            } => {
                let causal = if *causal { "_causal" } else { "" };
                format!("softmax_{}_r{rows}_c{cols}{causal}", precision.short_name())
            }
            KernelSpec::LayerNorm {
                precision,
                rows,
                cols,
                epsilon_nano,
            } => {
                format!(
                    "layer_norm_{}_r{rows}_c{cols}_e{epsilon_nano}",
                    precision.short_name()
                )
            }
            KernelSpec::ReduceAdd {
                partials_precision,
                output,
                elements,
                partials,
            } => format!(
                "reduce_add_{}_{}_n{elements}_p{partials}",
                partials_precision.short_name(),
                output.short_name()
            ),
            KernelSpec::Copy { bytes } => format!("copy_b{bytes}"),
            KernelSpec::CopySlice {
                bytes,
                stride,
                slices,
            } => format!("copy_slice_b{bytes}_s{stride}_n{slices}"),
            KernelSpec::Count => "count".to_string(),
            KernelSpec::Fill {
                precision,
                elements,
            } => {
                format!("fill_{}_n{elements}", precision.short_name())
            }
            KernelSpec::Transpose {
                precision,
                rows,
                cols,
            } => {
                format!("transpose_{}_r{rows}_c{cols}", precision.short_name())
            }
            KernelSpec::Scale {
                precision,
                elements,
            } => {
                format!("scale_{}_n{elements}", precision.short_name())
            }
            KernelSpec::AttentionBlock {
                precision,
                rows,
                keys,
                width,
                causal,
            } => {
                let causal = if *causal { "_causal" } else { "" };
                format!(
                    "attention_block_{}_r{rows}_k{keys}_w{width}{causal}",
                    precision.short_name()
                )
            }
            KernelSpec::AttentionFinish {
                precision,
                rows,
                width,
            } => {
                format!(
                    "attention_finish_{}_r{rows}_w{width}",
                    precision.short_name()
                )
            }
            KernelSpec::AttentionColumns {
                precision,
                keys,
                queries,
                width,
                causal,
            } => {
                let causal = if *causal { "_causal" } else { "" };
                format!(
                    "attention_columns_{}_q{queries}_k{keys}_w{width}{causal}",
                    precision.short_name()
                )
            }
            KernelSpec::AttentionRows {
                precision,
                rows,
                keys,
                causal,
            } => {
                let causal = if *causal { "_causal" } else { "" };
                format!(
                    "attention_rows_{}_r{rows}_k{keys}{causal}",
                    precision.short_name()
                )
            }
            KernelSpec::AttentionRowsMerge {
                precision,
                rows,
                width,
                first,
                last,
            } => {
                let role = match (first, last) {
                    (true, true) => "_single",
                    (true, false) => "_first",
                    (false, true) => "_last",
                    (false, false) => "",
                };
                format!(
                    "attention_rows_merge_{}_r{rows}_w{width}{role}",
                    precision.short_name()
                )
            }
            KernelSpec::AttentionFinishColumns {
                precision,
                queries,
                width,
            } => {
                format!(
                    "attention_finish_columns_{}_q{queries}_w{width}",
                    precision.short_name()
                )
            }
            KernelSpec::AttentionSplitFinish {
                precision,
                queries,
                width,
            } => {
                format!(
                    "attention_split_finish_{}_q{queries}_w{width}",
                    precision.short_name()
                )
            }
            KernelSpec::AttentionMerge {
                precision,
                splits,
                rows,
                width,
                panels,
            } => {
                let panels = if *panels { "_panels" } else { "" };
                format!(
                    "attention_merge_{}_s{splits}_r{rows}_w{width}{panels}",
                    precision.short_name()
                )
            }
            KernelSpec::AddGroupBias {
                precision,
                rows,
                elements,
            } => {
                format!(
                    "add_group_bias_{}_r{rows}_n{elements}",
                    precision.short_name()
                )
            }
            KernelSpec::Map {
                output, rows, cols, ..
            } => {
                // The body and inputs are in the name by a digest: a symbol must stay short.
                let digest = Sha256::digest(serde_json::to_vec(self).unwrap_or_default());
                let tag: String = digest[..6].iter().map(|b| format!("{b:02x}")).collect();
                format!("map_{}_r{rows}_c{cols}_{tag}", output.short_name())
            }
            KernelSpec::Reduce {
                precision,
                combiner,
                rows,
                cols,
            } => format!(
                "reduce_{}_{}_r{rows}_c{cols}",
                combiner.name(),
                precision.short_name()
            ),
        }
    }

    /// The kernel source file (in `device/kernels/`) this spec specializes; a map kernel's
    /// body is generated ([`super::source::map_body`]) after the shared helpers of this file.
    pub const fn source_file(&self) -> &'static str {
        match self {
            KernelSpec::Gemm { .. } | KernelSpec::GemmRowMajor { .. } => "gemm.mlir",
            KernelSpec::Cast { .. } => "cast.mlir",
            KernelSpec::Rearrange { .. } => "rearrange.mlir",
            KernelSpec::Add { .. } => "add.mlir",
            KernelSpec::Gelu { .. } => "gelu.mlir",
            KernelSpec::Softmax { .. } => "softmax.mlir",
            KernelSpec::LayerNorm { .. } => "layer_norm.mlir",
            KernelSpec::ReduceAdd { .. } => "reduce_add.mlir",
            KernelSpec::Copy { .. } => "copy.mlir",
            KernelSpec::CopySlice { .. } => "copy_slice.mlir",
            KernelSpec::Count => "count.mlir",
            KernelSpec::Fill { .. } => "fill.mlir",
            KernelSpec::Transpose { .. } => "transpose.mlir",
            KernelSpec::Scale { .. } => "scale.mlir",
            KernelSpec::AttentionBlock { .. } => "attention_block.mlir",
            KernelSpec::AttentionFinish { .. } => "attention_finish.mlir",
            KernelSpec::AttentionColumns { .. } => "attention_columns.mlir",
            KernelSpec::AttentionRows { .. } => "attention_rows.mlir",
            KernelSpec::AttentionRowsMerge { .. } => "attention_rows_merge.mlir",
            KernelSpec::AttentionFinishColumns { .. } | KernelSpec::AttentionSplitFinish { .. } => {
                "attention_finish_columns.mlir"
            }
            KernelSpec::AttentionMerge { .. } => "attention_merge.mlir",
            KernelSpec::AddGroupBias { .. } => "add_group_bias.mlir",
            KernelSpec::Map { .. } => "common.mlir",
            KernelSpec::Reduce { .. } => "reduce.mlir",
        }
    }

    /// Values of the source's marked constants (`arith.constant {ipu.param = "..."}`).
    pub fn params(&self) -> Vec<(&'static str, i64)> {
        let p = precision_code;
        match self {
            KernelSpec::Gemm {
                input,
                partials,
                k,
                c,
                accumulate,
                ..
            }
            | KernelSpec::GemmRowMajor {
                input,
                partials,
                k,
                c,
                accumulate,
                ..
            } => vec![
                ("k", i64::from(*k)),
                ("c", i64::from(*c)),
                ("input_precision", p(*input)),
                ("partials_precision", p(*partials)),
                ("accumulate", i64::from(*accumulate)),
                ("a_row_major", i64::from(self.gemm_row_major().0)),
                ("c_row_major", i64::from(self.gemm_row_major().1)),
            ],
            KernelSpec::Cast { from, to, elements } => vec![
                ("elements", i64::from(*elements)),
                ("from_precision", p(*from)),
                ("to_precision", p(*to)),
            ],
            KernelSpec::Rearrange {
                to_amp,
                precision,
                offset,
                rows,
                rows_padded,
                cols,
                cols_padded,
                ..
            } => vec![
                ("precision", p(*precision)),
                ("to_amp", i64::from(*to_amp)),
                ("offset", i64::from(*offset)),
                ("rows", i64::from(*rows)),
                ("rows_padded", i64::from(*rows_padded)),
                ("cols", i64::from(*cols)),
                ("cols_padded", i64::from(*cols_padded)),
            ],
            KernelSpec::Add {
                precision,
                rows,
                cols,
                b_rows,
            } => vec![
                ("precision", p(*precision)),
                ("rows", i64::from(*rows)),
                ("cols", i64::from(*cols)),
                ("b_rows", i64::from(*b_rows)),
            ],
            KernelSpec::Gelu {
                precision,
                form,
                elements,
            } => vec![
                ("precision", p(*precision)),
                ("form", if *form == GeluForm::Erf { 0 } else { 1 }),
                ("elements", i64::from(*elements)),
            ],
            KernelSpec::Softmax {
                precision,
                rows,
                cols,
                causal,
            } => vec![
                ("precision", p(*precision)),
                ("rows", i64::from(*rows)),
                ("cols", i64::from(*cols)),
                ("causal", i64::from(*causal)),
            ],
            KernelSpec::LayerNorm {
                precision,
                rows,
                cols,
                epsilon_nano,
            } => vec![
                ("precision", p(*precision)),
                ("rows", i64::from(*rows)),
                ("cols", i64::from(*cols)),
                ("epsilon_nano", i64::from(*epsilon_nano)),
            ],
            KernelSpec::ReduceAdd {
                partials_precision,
                output,
                elements,
                partials,
            } => vec![
                ("partials_precision", p(*partials_precision)),
                ("output_precision", p(*output)),
                ("elements", i64::from(*elements)),
                ("partials", i64::from(*partials)),
            ],
            KernelSpec::Copy { bytes } => vec![("bytes", i64::from(*bytes))],
            KernelSpec::CopySlice {
                bytes,
                stride,
                slices,
            } => vec![
                ("bytes", i64::from(*bytes)),
                ("stride", i64::from(*stride)),
                ("slices", i64::from(*slices)),
            ],
            KernelSpec::Count => Vec::new(),
            KernelSpec::Fill {
                precision,
                elements,
            }
            | KernelSpec::Scale {
                precision,
                elements,
            } => {
                vec![
                    ("precision", p(*precision)),
                    ("elements", i64::from(*elements)),
                ]
            }
            KernelSpec::Transpose {
                precision,
                rows,
                cols,
            } => vec![
                ("precision", p(*precision)),
                ("rows", i64::from(*rows)),
                ("cols", i64::from(*cols)),
            ],
            KernelSpec::AttentionBlock {
                precision,
                rows,
                keys,
                width,
                causal,
            } => vec![
                ("precision", p(*precision)),
                ("rows", i64::from(*rows)),
                ("keys", i64::from(*keys)),
                ("width", i64::from(*width)),
                ("causal", i64::from(*causal)),
            ],
            KernelSpec::AttentionFinish {
                precision,
                rows,
                width,
            } => vec![
                ("precision", p(*precision)),
                ("rows", i64::from(*rows)),
                ("width", i64::from(*width)),
            ],
            KernelSpec::AttentionColumns {
                precision,
                keys,
                queries,
                width,
                causal,
            } => vec![
                ("precision", p(*precision)),
                ("partials", p(default_partials(*precision))),
                ("keys", i64::from(*keys)),
                ("queries", i64::from(*queries)),
                ("width", i64::from(*width)),
                ("causal", i64::from(*causal)),
            ],
            KernelSpec::AttentionRows {
                precision,
                rows,
                keys,
                causal,
            } => vec![
                ("precision", p(*precision)),
                ("partials", p(default_partials(*precision))),
                ("keys", i64::from(*keys)),
                ("queries", i64::from(*rows)),
                ("causal", i64::from(*causal)),
            ],
            KernelSpec::AttentionRowsMerge {
                precision,
                rows,
                width,
                first,
                last,
            } => vec![
                ("partials", p(default_partials(*precision))),
                ("rows", i64::from(*rows)),
                ("width", i64::from(*width)),
                ("first", i64::from(*first)),
                ("last", i64::from(*last)),
            ],
            // One source: the split's finish writes f32 rows from its element's partials.
            KernelSpec::AttentionFinishColumns {
                precision,
                queries,
                width,
            }
            | KernelSpec::AttentionSplitFinish {
                precision,
                queries,
                width,
            } => {
                let output = match self {
                    KernelSpec::AttentionSplitFinish { .. } => Precision::F32,
                    _ => *precision,
                };
                vec![
                    ("precision", p(output)),
                    ("partials", p(default_partials(*precision))),
                    ("queries", i64::from(*queries)),
                    ("width", i64::from(*width)),
                ]
            }
            KernelSpec::AttentionMerge {
                precision,
                splits,
                rows,
                width,
                panels,
            } => vec![
                ("precision", p(*precision)),
                ("partials", p(default_partials(*precision))),
                ("splits", i64::from(*splits)),
                ("rows", i64::from(*rows)),
                ("width", i64::from(*width)),
                ("panels", i64::from(*panels)),
            ],
            KernelSpec::AddGroupBias {
                precision,
                rows,
                elements,
            } => vec![
                ("precision", p(*precision)),
                ("rows", i64::from(*rows)),
                ("elements", i64::from(*elements)),
            ],
            // Generated: every constant is in the generated text.
            KernelSpec::Map { .. } => Vec::new(),
            KernelSpec::Reduce {
                precision,
                combiner,
                rows,
                cols,
            } => vec![
                ("precision", p(*precision)),
                ("combiner", combiner_code(*combiner)),
                ("rows", i64::from(*rows)),
                ("cols", i64::from(*cols)),
            ],
        }
    }

    /// Whether a GEMM call reads A and writes C row-major (`(false, false)` for
    /// [`KernelSpec::Gemm`] and any other kernel).
    pub fn gemm_row_major(&self) -> (bool, bool) {
        match self {
            KernelSpec::GemmRowMajor {
                row_major_a,
                row_major_c,
                ..
            } => (*row_major_a, *row_major_c),
            _ => (false, false),
        }
    }

    /// Entry points of the compiled object: (symbol, value of the body's variant argument).
    /// GEMM has one per row count (`<name>_r<rows>`, variant = rows); the others one (`<name>`).
    pub fn entries(&self) -> Vec<(String, u32)> {
        let name = self.name();
        match self {
            KernelSpec::Gemm { rows, .. } | KernelSpec::GemmRowMajor { rows, .. } => {
                rows.iter().map(|r| (format!("{name}_r{r}"), *r)).collect()
            }
            _ => vec![(name, 0)],
        }
    }
}

mod validate;
