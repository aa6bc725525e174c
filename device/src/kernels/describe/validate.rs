//! The limits a [`KernelSpec`] must respect: its constant parameters against what the kernel
//! sources support, and its operands within the 32-bit address space.

use super::*;

impl KernelSpec {
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
            }
            | KernelSpec::AttentionRowsMerge {
                precision,
                rows,
                width,
                ..
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
