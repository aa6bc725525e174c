//! The memory a kernel call touches: which run-time arguments are addresses, how many bytes
//! each operand spans and whether it is read or written. The runner validates calls with it and
//! the simulator uses [`KernelSpec::operand_ranges`] for its hazard checks.

use std::ops::Range;

use super::describe::AMP_GROUP;
use super::spec::{KernelRunError, KernelSpec};
use crate::numerics::SCALE_RANGE;
use crate::precision::Precision;

/// How a kernel uses an operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Access {
    Read,
    Write,
    /// Read, then written (GEMM partials when accumulating).
    ReadWrite,
}

impl Access {
    pub const fn reads(self) -> bool {
        matches!(self, Access::Read | Access::ReadWrite)
    }
    pub const fn writes(self) -> bool {
        matches!(self, Access::Write | Access::ReadWrite)
    }
}

/// One operand of a kernel call: the argument holding its byte offset and the bytes it spans
/// (offsets from the SRAM base, like the arguments).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperandRange {
    pub arg: usize,
    pub what: &'static str,
    pub access: Access,
    pub bytes: Range<u32>,
}

/// An operand before its offset is known: (argument index, name, access, element bytes, count).
struct Operand {
    arg: usize,
    what: &'static str,
    access: Access,
    element_bytes: u32,
    elements: u64,
}

impl KernelSpec {
    /// Number of `u32` run-time arguments.
    pub const fn arg_count(&self) -> usize {
        match self {
            KernelSpec::Gemm { .. } => 6,
            KernelSpec::Cast { .. } | KernelSpec::Softmax { .. } => 3,
            KernelSpec::Add { .. } | KernelSpec::Scale { .. } => 3,
            KernelSpec::LayerNorm { .. } | KernelSpec::AddGroupBias { .. } => 4,
            KernelSpec::AttentionBlock { .. } => 8,
            KernelSpec::AttentionFinish { .. } => 3,
            KernelSpec::Rearrange { .. }
            | KernelSpec::Gelu { .. }
            | KernelSpec::ReduceAdd { .. }
            | KernelSpec::Copy { .. }
            | KernelSpec::Fill { .. }
            | KernelSpec::Transpose { .. } => 2,
        }
    }

    /// Indices of the arguments that are signed scale exponents.
    pub const fn scale_args(&self) -> &'static [usize] {
        match self {
            KernelSpec::Gemm { .. } => &[4, 5],
            KernelSpec::Cast { .. } => &[2],
            _ => &[],
        }
    }

    /// Whether a written operand may be exactly the same bytes as a read one (elementwise or
    /// row-wise kernels that read every input element before writing it).
    pub fn in_place_allowed(&self) -> bool {
        match self {
            KernelSpec::Gelu { .. } | KernelSpec::Softmax { .. } | KernelSpec::LayerNorm { .. } => {
                true
            }
            KernelSpec::Add { .. } | KernelSpec::Scale { .. } | KernelSpec::AddGroupBias { .. } => {
                true
            }
            KernelSpec::Cast { from, to, .. } => from.bytes() == to.bytes(),
            _ => false,
        }
    }

    /// The operands of a call that selects `rows` (GEMM: the row entry) and starts at group row
    /// `group_start` (AddGroupBias); other kernels ignore both.
    fn operands(&self, rows: u32, group_start: u32) -> Vec<Operand> {
        let op = |arg, what, access, precision: Precision, elements: u64| Operand {
            arg,
            what,
            access,
            element_bytes: precision.bytes(),
            elements,
        };
        let n = |x: &u32| u64::from(*x);
        // `src` read and `dst` written, `elements` of one precision each.
        let unary = |precision: Precision, elements: u64| {
            vec![
                op(0, "src", Access::Read, precision, elements),
                op(1, "dst", Access::Write, precision, elements),
            ]
        };
        match self {
            KernelSpec::Gemm {
                input,
                partials,
                k,
                c,
                accumulate,
                ..
            } => {
                let c_access = if *accumulate {
                    Access::ReadWrite
                } else {
                    Access::Write
                };
                vec![
                    op(0, "a", Access::Read, *input, u64::from(rows) * n(k)),
                    op(1, "b", Access::Read, *input, n(k) * n(c)),
                    op(2, "c", c_access, *partials, u64::from(rows) * n(c)),
                ]
            }
            KernelSpec::Cast { from, to, elements } => vec![
                op(0, "src", Access::Read, *from, n(elements)),
                op(1, "dst", Access::Write, *to, n(elements)),
            ],
            KernelSpec::Rearrange {
                to_amp,
                precision,
                rows,
                rows_padded,
                cols,
                cols_padded,
                ..
            } => {
                let dense = n(rows) * n(cols);
                let amp = n(rows_padded) * n(cols_padded);
                let (src, dst) = if *to_amp { (dense, amp) } else { (amp, dense) };
                vec![
                    op(0, "src", Access::Read, *precision, src),
                    op(1, "dst", Access::Write, *precision, dst),
                ]
            }
            KernelSpec::Add {
                precision,
                rows,
                cols,
                b_rows,
            } => vec![
                op(0, "a", Access::Read, *precision, n(rows) * n(cols)),
                op(1, "b", Access::Read, *precision, n(b_rows) * n(cols)),
                op(2, "out", Access::Write, *precision, n(rows) * n(cols)),
            ],
            KernelSpec::Gelu {
                precision,
                elements,
                ..
            } => unary(*precision, n(elements)),
            KernelSpec::Softmax {
                precision,
                rows,
                cols,
                ..
            } => unary(*precision, n(rows) * n(cols)),
            KernelSpec::LayerNorm {
                precision,
                rows,
                cols,
                ..
            } => vec![
                op(0, "src", Access::Read, *precision, n(rows) * n(cols)),
                op(1, "gamma", Access::Read, *precision, n(cols)),
                op(2, "beta", Access::Read, *precision, n(cols)),
                op(3, "dst", Access::Write, *precision, n(rows) * n(cols)),
            ],
            KernelSpec::ReduceAdd {
                partials_precision,
                output,
                elements,
                partials,
            } => vec![
                op(
                    0,
                    "partials",
                    Access::Read,
                    *partials_precision,
                    n(partials) * n(elements),
                ),
                op(1, "dst", Access::Write, *output, n(elements)),
            ],
            KernelSpec::Copy { bytes } => vec![
                Operand {
                    arg: 0,
                    what: "src",
                    access: Access::Read,
                    element_bytes: 1,
                    elements: n(bytes),
                },
                Operand {
                    arg: 1,
                    what: "dst",
                    access: Access::Write,
                    element_bytes: 1,
                    elements: n(bytes),
                },
            ],
            KernelSpec::Fill {
                precision,
                elements,
            } => vec![op(0, "dst", Access::Write, *precision, n(elements))],
            KernelSpec::Transpose {
                precision,
                rows,
                cols,
            } => unary(*precision, n(rows) * n(cols)),
            // Argument 2 (value_bits) is an f32 bit pattern, not an address.
            KernelSpec::Scale {
                precision,
                elements,
            } => unary(*precision, n(elements)),
            // Arguments 5..=7 (scale_bits, row_offset, key_offset) are not addresses. The
            // running state m, l, o is f32 whatever the precision of s and v.
            KernelSpec::AttentionBlock {
                precision,
                rows,
                keys,
                width,
                ..
            } => vec![
                op(0, "s", Access::Read, *precision, n(rows) * n(keys)),
                op(1, "v", Access::Read, *precision, n(keys) * n(width)),
                op(2, "m", Access::ReadWrite, Precision::F32, n(rows)),
                op(3, "l", Access::ReadWrite, Precision::F32, n(rows)),
                op(
                    4,
                    "o",
                    Access::ReadWrite,
                    Precision::F32,
                    n(rows) * n(width),
                ),
            ],
            KernelSpec::AttentionFinish {
                precision,
                rows,
                width,
            } => vec![
                op(0, "o", Access::Read, Precision::F32, n(rows) * n(width)),
                op(1, "l", Access::Read, Precision::F32, n(rows)),
                op(2, "dst", Access::Write, *precision, n(rows) * n(width)),
            ],
            // Argument 3 (start) is a group row, not an address. The bias spans the groups the
            // call's group rows start..start + units fall in.
            KernelSpec::AddGroupBias {
                precision,
                rows,
                elements,
            } => vec![
                op(0, "a", Access::Read, *precision, n(elements)),
                op(
                    1,
                    "bias",
                    Access::Read,
                    *precision,
                    group_bias_elements(*rows, *elements, group_start),
                ),
                op(2, "out", Access::Write, *precision, n(elements)),
            ],
        }
    }

    /// (name, bytes) of every operand for a call with `rows` rows (GEMM) — for limits checks.
    /// AddGroupBias is sized for its largest call, the one starting at the last group row.
    pub(crate) fn operand_sizes_for_rows(&self, rows: u32) -> Vec<(&'static str, u64)> {
        let group_start = match self {
            KernelSpec::AddGroupBias {
                rows: group_rows, ..
            } => group_rows.saturating_sub(1),
            _ => 0,
        };
        self.operands(rows, group_start)
            .into_iter()
            .map(|o| (o.what, u64::from(o.element_bytes) * o.elements))
            .collect()
    }

    /// The GEMM row count a call selects with its `row_count_index` argument (0 for others).
    pub fn call_rows(&self, args: &[u32]) -> Result<u32, KernelRunError> {
        match self {
            KernelSpec::Gemm { rows, .. } => {
                let index = *args
                    .get(3)
                    .ok_or_else(|| self.bad_arg(3, "row_count_index", "missing".into()))?;
                rows.get(index as usize).copied().ok_or_else(|| {
                    self.bad_arg(
                        3,
                        "row_count_index",
                        format!("{index} but the kernel has {} row counts", rows.len()),
                    )
                })
            }
            _ => Ok(0),
        }
    }

    /// The first group row an AddGroupBias call selects with its `start` argument (0 for
    /// others); refused unless it is below the spec's `rows`.
    pub fn call_group_start(&self, args: &[u32]) -> Result<u32, KernelRunError> {
        match self {
            KernelSpec::AddGroupBias { rows, .. } => {
                let start = *args
                    .get(3)
                    .ok_or_else(|| self.bad_arg(3, "start", "missing".into()))?;
                if start >= *rows {
                    return Err(self.bad_arg(
                        3,
                        "start",
                        format!(
                            "group row {start} is not below the {rows} rows of a 16-column group"
                        ),
                    ));
                }
                Ok(start)
            }
            _ => Ok(0),
        }
    }

    /// Byte ranges (from the SRAM base) a call with `args` reads and writes. Checks the argument
    /// count, the GEMM row index, the AddGroupBias start row, offset alignment to the element
    /// size, 32-bit overflow and the scale exponents, but not the memory size (see
    /// [`KernelSpec::check_call`]).
    pub fn operand_ranges(&self, args: &[u32]) -> Result<Vec<OperandRange>, KernelRunError> {
        if args.len() != self.arg_count() {
            return Err(self.bad_arg(
                args.len().min(self.arg_count()),
                "argument count",
                format!(
                    "{} arguments given, {} expected",
                    args.len(),
                    self.arg_count()
                ),
            ));
        }
        for &index in self.scale_args() {
            // The numerics' range (poplar's FP8 metadata range); the kernels build 2^scale from
            // the f32 exponent field, which is exact well beyond it.
            let scale = args[index] as i32;
            if !SCALE_RANGE.contains(&scale) {
                return Err(self.bad_arg(
                    index,
                    "scale exponent",
                    format!(
                        "{scale} is outside [{}, {}]",
                        SCALE_RANGE.start(),
                        SCALE_RANGE.end()
                    ),
                ));
            }
        }
        let rows = self.call_rows(args)?;
        let group_start = self.call_group_start(args)?;
        let mut ranges = Vec::new();
        for operand in self.operands(rows, group_start) {
            let start = args[operand.arg];
            if !start.is_multiple_of(operand.element_bytes) {
                return Err(self.bad_arg(
                    operand.arg,
                    operand.what,
                    format!(
                        "offset {start:#x} is not aligned to its {}-byte elements",
                        operand.element_bytes
                    ),
                ));
            }
            let len = u64::from(operand.element_bytes) * operand.elements;
            let end = u64::from(start) + len;
            let end = u32::try_from(end).map_err(|_| {
                self.bad_arg(
                    operand.arg,
                    operand.what,
                    format!("offset {start:#x} + {len} bytes overflows 32 bits"),
                )
            })?;
            ranges.push(OperandRange {
                arg: operand.arg,
                what: operand.what,
                access: operand.access,
                bytes: start..end,
            });
        }
        Ok(ranges)
    }

    /// Everything [`KernelSpec::operand_ranges`] checks, plus: every range inside a tile memory
    /// of `memory_bytes`, and no written range overlapping another operand (except the exact
    /// in-place aliasing the kernel allows).
    pub fn check_call(
        &self,
        memory_bytes: usize,
        args: &[u32],
    ) -> Result<Vec<OperandRange>, KernelRunError> {
        let ranges = self.operand_ranges(args)?;
        for range in &ranges {
            if range.bytes.end as usize > memory_bytes {
                return Err(self.bad_arg(
                    range.arg,
                    range.what,
                    format!(
                        "bytes {:#x}..{:#x} end beyond the tile memory of {memory_bytes:#x} bytes",
                        range.bytes.start, range.bytes.end
                    ),
                ));
            }
        }
        for (i, written) in ranges.iter().enumerate() {
            if !written.access.writes() {
                continue;
            }
            for (j, other) in ranges.iter().enumerate() {
                if i == j || written.bytes.is_empty() || other.bytes.is_empty() {
                    continue;
                }
                let overlap =
                    written.bytes.start < other.bytes.end && other.bytes.start < written.bytes.end;
                let exact_in_place = written.bytes == other.bytes
                    && !other.access.writes()
                    && self.in_place_allowed();
                if overlap && !exact_in_place {
                    return Err(self.bad_arg(
                        written.arg,
                        written.what,
                        format!(
                            "written bytes {:#x}..{:#x} overlap {} at {:#x}..{:#x}",
                            written.bytes.start,
                            written.bytes.end,
                            other.what,
                            other.bytes.start,
                            other.bytes.end
                        ),
                    ));
                }
            }
        }
        Ok(ranges)
    }

    fn bad_arg(&self, index: usize, what: &'static str, detail: String) -> KernelRunError {
        KernelRunError::BadArgument {
            kernel: self.name(),
            index,
            what,
            detail,
        }
    }
}

/// Bias elements an AddGroupBias call touches: the 16-element biases of the groups holding
/// group rows `start..start + elements / 16`, i.e. `((start + units - 1) / rows + 1) * 16`
/// (none for an empty range; `rows` 0 is treated as 1, the spec refuses it anyway).
fn group_bias_elements(rows: u32, elements: u32, start: u32) -> u64 {
    let group = u64::from(AMP_GROUP);
    let units = u64::from(elements) / group;
    if units == 0 {
        return 0;
    }
    let last = u64::from(start) + units - 1;
    (last / u64::from(rows.max(1)) + 1) * group
}
