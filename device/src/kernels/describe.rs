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
            } => {
                format!(
                    "attention_rows_merge_{}_r{rows}_w{width}",
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
            KernelSpec::AttentionColumns { .. } | KernelSpec::AttentionRows { .. } => {
                "attention_columns.mlir"
            }
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
                ("rows_form", 0),
            ],
            // One source with the columns form: the queries are the rows, no output width.
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
                ("width", 1),
                ("causal", i64::from(*causal)),
                ("rows_form", 1),
            ],
            KernelSpec::AttentionRowsMerge {
                precision,
                rows,
                width,
            } => vec![
                ("partials", p(default_partials(*precision))),
                ("rows", i64::from(*rows)),
                ("width", i64::from(*width)),
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

    /// Checks the constant parameters against what the kernel sources support.
    pub fn validate(&self) -> Result<(), KernelError> {
        self.validate_parameters()?;
        // Every operand must be addressable with u32 byte offsets.
        self.largest_operand_bytes().map(|_| ())
    }

    /// The error refusing this specialization for `detail`.
    fn invalid(&self, detail: String) -> KernelError {
        KernelError::InvalidSpec {
            kernel: self.name(),
            detail,
        }
    }

    /// Refuses an FP8 `precision` for arithmetic the kernels do in f16 or f32 only.
    fn require_arithmetic(&self, what: &str, precision: Precision) -> Result<(), KernelError> {
        if precision.is_fp8() {
            return Err(self.invalid(format!(
                "{what} precision {} is not supported (f16 or f32 only)",
                precision.short_name()
            )));
        }
        Ok(())
    }

    /// Refuses a zero `value` for a parameter that must be at least 1.
    fn require_positive(&self, what: &str, value: u32) -> Result<(), KernelError> {
        if value == 0 {
            return Err(self.invalid(format!("{what} must be at least 1")));
        }
        Ok(())
    }

    /// Checks each variant's own parameters (everything but the operand sizes).
    fn validate_parameters(&self) -> Result<(), KernelError> {
        match self {
            KernelSpec::Gemm {
                input,
                partials,
                k,
                c,
                rows,
                ..
            }
            | KernelSpec::GemmRowMajor {
                input,
                partials,
                k,
                c,
                rows,
                ..
            } => self.validate_gemm(*input, *partials, *k, *c, rows)?,
            KernelSpec::Cast { elements, .. } => self.require_positive("elements", *elements)?,
            KernelSpec::Rearrange {
                order,
                offset,
                rows,
                rows_padded,
                cols,
                cols_padded,
                ..
            } => {
                self.validate_rearrange(*order, *offset, *rows, *rows_padded, *cols, *cols_padded)?
            }
            KernelSpec::Add {
                precision,
                rows,
                cols,
                b_rows,
            } => {
                self.require_arithmetic("element", *precision)?;
                self.require_positive("rows", *rows)?;
                self.require_positive("cols", *cols)?;
                if *b_rows != 1 && b_rows != rows {
                    return Err(
                        self.invalid(format!("b_rows = {b_rows} must be 1 or rows = {rows}"))
                    );
                }
            }
            KernelSpec::Gelu {
                precision,
                elements,
                ..
            } => {
                self.require_arithmetic("element", *precision)?;
                self.require_positive("elements", *elements)?;
            }
            KernelSpec::Softmax {
                precision,
                rows,
                cols,
                ..
            }
            | KernelSpec::LayerNorm {
                precision,
                rows,
                cols,
                ..
            } => self.validate_row_normalization(*precision, *rows, *cols)?,
            KernelSpec::ReduceAdd {
                partials_precision,
                output,
                elements,
                partials,
            } => {
                self.require_arithmetic("partials", *partials_precision)?;
                self.require_arithmetic("output", *output)?;
                self.require_positive("elements", *elements)?;
                self.require_positive("partials", *partials)?;
            }
            KernelSpec::Copy { bytes } => self.require_positive("bytes", *bytes)?,
            KernelSpec::CopySlice {
                bytes,
                stride,
                slices,
            } => {
                self.require_positive("bytes", *bytes)?;
                self.require_positive("slices", *slices)?;
                if *slices > 1 && stride < bytes {
                    return Err(self.invalid(format!(
                        "a store's slices are {stride} bytes apart, less than the {bytes} bytes copied: slices would overlap"
                    )));
                }
                let span = u64::from(*slices - 1) * u64::from(*stride) + u64::from(*bytes);
                if span > u64::from(u32::MAX) {
                    return Err(self.invalid(format!(
                        "a store of {slices} slices {stride} bytes apart spans {span} bytes, beyond the 32-bit address space"
                    )));
                }
            }
            KernelSpec::Count => {}
            KernelSpec::Fill { elements, .. } => self.require_positive("elements", *elements)?,
            // Raw bytes: every precision moves, FP8 included.
            KernelSpec::Transpose { rows, cols, .. } => {
                self.require_positive("rows", *rows)?;
                self.require_positive("cols", *cols)?;
            }
            KernelSpec::Scale {
                precision,
                elements,
            } => {
                self.require_arithmetic("element", *precision)?;
                self.require_positive("elements", *elements)?;
            }
            KernelSpec::AttentionBlock {
                precision,
                rows,
                keys,
                width,
                ..
            } => self.validate_attention_block(*precision, *rows, *keys, *width)?,
            KernelSpec::AttentionFinish {
                precision,
                rows,
                width,
            } => {
                self.require_arithmetic("element", *precision)?;
                self.require_positive("rows", *rows)?;
                self.require_positive("width", *width)?;
            }
            KernelSpec::AttentionColumns {
                precision,
                keys,
                queries,
                width,
                ..
            } => self.validate_attention_block(*precision, *queries, *keys, *width)?,
            KernelSpec::AttentionRows {
                precision,
                rows,
                keys,
                ..
            } => self.validate_attention_block(*precision, *rows, *keys, 1)?,
            KernelSpec::AttentionRowsMerge {
                precision,
                rows,
                width,
            } => {
                self.require_arithmetic("element", *precision)?;
                self.require_positive("rows", *rows)?;
                self.require_positive("width", *width)?;
            }
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
                self.require_arithmetic("element", *precision)?;
                self.require_positive("queries", *queries)?;
                self.require_positive("width", *width)?;
            }
            KernelSpec::AttentionMerge {
                precision,
                splits,
                rows,
                width,
                panels,
            } => {
                self.require_arithmetic("element", *precision)?;
                self.require_positive("splits", *splits)?;
                self.require_positive("rows", *rows)?;
                self.require_positive("width", *width)?;
                if *panels && !rows.is_multiple_of(16) {
                    return Err(self.invalid(format!(
                        "merged panels need rows in whole 16-column groups, not {rows}"
                    )));
                }
            }
            KernelSpec::AddGroupBias {
                precision,
                rows,
                elements,
            } => {
                self.require_arithmetic("element", *precision)?;
                self.require_positive("rows", *rows)?;
                if *elements < AMP_GROUP || elements % AMP_GROUP != 0 {
                    return Err(self.invalid(format!(
                        "elements = {elements} must be a positive multiple of {AMP_GROUP} (whole group rows)"
                    )));
                }
            }
            KernelSpec::Map {
                inputs,
                rows,
                cols,
                index_shape,
                body,
                ..
            } => {
                self.require_positive("rows", *rows)?;
                self.require_positive("cols", *cols)?;
                if inputs.len() > MAP_MAX_INPUTS || inputs.len() != body.inputs {
                    return Err(self.invalid(format!(
                        "{} inputs for a body of {} (at most {MAP_MAX_INPUTS})",
                        inputs.len(),
                        body.inputs
                    )));
                }
                body.types()
                    .map_err(|e| self.invalid(format!("body: {e}")))?;
                let indexed = body.uses_indices();
                if indexed == index_shape.is_empty()
                    || (indexed && index_shape.len() != body.indices)
                {
                    return Err(self.invalid(format!(
                        "index shape {index_shape:?} for a body reading {} indices",
                        if indexed { body.indices } else { 0 }
                    )));
                }
                for input in inputs {
                    if input.precision.is_fp8() && !SCALE_RANGE.contains(&input.scale) {
                        return Err(
                            self.invalid(format!("input scale {} is out of range", input.scale))
                        );
                    }
                }
            }
            KernelSpec::Reduce {
                precision,
                rows,
                cols,
                ..
            } => {
                self.require_arithmetic("element", *precision)?;
                self.require_positive("rows", *rows)?;
                self.require_positive("cols", *cols)?;
            }
        }
        Ok(())
    }

    /// Checks a GEMM's precisions, block sizes against the AMP group and the weight buffer,
    /// and its row counts (at least one, each positive and listed once).
    fn validate_gemm(
        &self,
        input: Precision,
        partials: Precision,
        k: u32,
        c: u32,
        rows: &[u32],
    ) -> Result<(), KernelError> {
        self.require_arithmetic("partials", partials)?;
        if input == Precision::F32 && partials != Precision::F32 {
            return Err(self.invalid("f32 inputs need f32 partials".into()));
        }
        if k == 0 || c == 0 || !k.is_multiple_of(AMP_GROUP) || !c.is_multiple_of(AMP_GROUP) {
            return Err(self.invalid(format!(
                "k = {k} and c = {c} must be positive multiples of {AMP_GROUP}"
            )));
        }
        if u64::from(k) * u64::from(c) > u64::from(GEMM_MAX_WEIGHT_ELEMENTS) {
            return Err(self.invalid(format!(
                "k * c = {} exceeds {GEMM_MAX_WEIGHT_ELEMENTS}",
                u64::from(k) * u64::from(c)
            )));
        }
        if rows.is_empty() {
            return Err(self.invalid("no row counts".into()));
        }
        for (i, r) in rows.iter().enumerate() {
            self.require_positive("every row count", *r)?;
            if rows[..i].contains(r) {
                return Err(self.invalid(format!("row count {r} is listed twice")));
            }
        }
        Ok(())
    }

    /// Checks a rearrangement: an AMP order, a non-empty block, and padding that holds it.
    fn validate_rearrange(
        &self,
        order: ElementOrder,
        offset: u32,
        rows: u32,
        rows_padded: u32,
        cols: u32,
        cols_padded: u32,
    ) -> Result<(), KernelError> {
        if order == ElementOrder::RowMajor {
            return Err(self.invalid(
                "the order must be an AMP order (amp_left, amp_right or amp_output)".into(),
            ));
        }
        self.require_positive("rows", rows)?;
        self.require_positive("cols", cols)?;
        if !cols_padded.is_multiple_of(AMP_GROUP) || cols > cols_padded {
            return Err(self.invalid(format!(
                "cols_padded = {cols_padded} must be a multiple of {AMP_GROUP} and at least cols = {cols}"
            )));
        }
        if u64::from(offset) + u64::from(rows) > u64::from(rows_padded) {
            return Err(self.invalid(format!(
                "offset {offset} + rows {rows} exceeds rows_padded {rows_padded}"
            )));
        }
        Ok(())
    }

    /// Checks a softmax or layer norm: arithmetic precision, a non-empty block, and (layer
    /// norm) an epsilon the kernel's i32 argument holds.
    fn validate_row_normalization(
        &self,
        precision: Precision,
        rows: u32,
        cols: u32,
    ) -> Result<(), KernelError> {
        self.require_arithmetic("element", precision)?;
        self.require_positive("rows", rows)?;
        self.require_positive("cols", cols)?;
        if let KernelSpec::LayerNorm { epsilon_nano, .. } = self {
            if i32::try_from(*epsilon_nano).is_err() {
                return Err(self.invalid(format!(
                    "epsilon_nano = {epsilon_nano} exceeds {}",
                    i32::MAX
                )));
            }
        }
        Ok(())
    }

    /// Checks an attention block: arithmetic precision, positive sizes, and keys that fit
    /// the kernel's stack buffer.
    fn validate_attention_block(
        &self,
        precision: Precision,
        rows: u32,
        keys: u32,
        width: u32,
    ) -> Result<(), KernelError> {
        self.require_arithmetic("element", precision)?;
        self.require_positive("rows", rows)?;
        self.require_positive("keys", keys)?;
        self.require_positive("width", width)?;
        // The block's p values live in an f32 stack buffer of `keys` elements.
        if keys > ATTENTION_MAX_KEYS {
            return Err(self.invalid(format!("keys = {keys} exceeds {ATTENTION_MAX_KEYS}")));
        }
        Ok(())
    }

    /// Bytes of the largest operand, or an error when one exceeds u32.
    fn largest_operand_bytes(&self) -> Result<u64, KernelError> {
        let largest = self
            .operand_sizes_for_rows(self.max_rows())
            .into_iter()
            .map(|(_, bytes)| bytes)
            .max()
            .unwrap_or(0);
        if largest > u64::from(u32::MAX) {
            return Err(KernelError::InvalidSpec {
                kernel: self.name(),
                detail: format!("an operand of {largest} bytes exceeds the 32-bit address space"),
            });
        }
        Ok(largest)
    }

    fn max_rows(&self) -> u32 {
        match self {
            KernelSpec::Gemm { rows, .. } | KernelSpec::GemmRowMajor { rows, .. } => {
                rows.iter().copied().max().unwrap_or(0)
            }
            _ => 0,
        }
    }
}
