//! The memory a kernel call touches: which run-time arguments are addresses, how many bytes
//! each operand spans and whether it is read or written. The runner validates calls with it and
//! the simulator uses [`KernelSpec::operand_ranges`] for its hazard checks.

use std::ops::Range;

use super::describe::{default_partials, AMP_GROUP};
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
    pub fn arg_count(&self) -> usize {
        match self {
            KernelSpec::Map { inputs, .. } => inputs.len() + 3,
            KernelSpec::Reduce { .. } => 2,
            KernelSpec::Gemm { .. } | KernelSpec::GemmRowMajor { .. } => 6,
            KernelSpec::Cast { .. } | KernelSpec::Softmax { .. } => 3,
            KernelSpec::Add { .. } | KernelSpec::Scale { .. } => 3,
            KernelSpec::LayerNorm { .. }
            | KernelSpec::AddGroupBias { .. }
            | KernelSpec::AttentionMerge { .. } => 4,
            KernelSpec::AttentionBlock { .. } | KernelSpec::AttentionColumns { .. } => 8,
            KernelSpec::AttentionRows { .. } => 7,
            KernelSpec::AttentionRowsMerge { .. } => 6,
            KernelSpec::AttentionFinish { .. }
            | KernelSpec::AttentionFinishColumns { .. }
            | KernelSpec::AttentionSplitFinish { .. }
            | KernelSpec::CopySlice { .. } => 3,
            KernelSpec::Count => 1,
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
            KernelSpec::Gemm { .. } | KernelSpec::GemmRowMajor { .. } => &[4, 5],
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
            KernelSpec::Add { .. }
            | KernelSpec::Scale { .. }
            | KernelSpec::AddGroupBias { .. }
            | KernelSpec::Map { .. } => true,
            KernelSpec::Cast { from, to, .. } => from.bytes() == to.bytes(),
            _ => false,
        }
    }

    /// The operands of a call that selects `rows` (GEMM: the row entry) and starts at group row
    /// `group_start` (AddGroupBias); other kernels ignore both.
    fn operands(&self, rows: u32, group_start: u32) -> Vec<Operand> {
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
            } => gemm_operands(*input, *partials, *k, *c, rows, *accumulate),
            KernelSpec::Cast { from, to, elements } => vec![
                operand(0, "src", Access::Read, *from, count(elements)),
                operand(1, "dst", Access::Write, *to, count(elements)),
            ],
            KernelSpec::Rearrange {
                to_amp,
                precision,
                rows,
                rows_padded,
                cols,
                cols_padded,
                ..
            } => rearrange_operands(
                *precision,
                *to_amp,
                count(rows) * count(cols),
                count(rows_padded) * count(cols_padded),
            ),
            KernelSpec::Add {
                precision,
                rows,
                cols,
                b_rows,
            } => add_operands(*precision, *rows, *cols, *b_rows),
            KernelSpec::Gelu {
                precision,
                elements,
                ..
            } => unary(*precision, count(elements)),
            KernelSpec::Softmax {
                precision,
                rows,
                cols,
                ..
            } => unary(*precision, count(rows) * count(cols)),
            KernelSpec::LayerNorm {
                precision,
                rows,
                cols,
                ..
            } => layer_norm_operands(*precision, *rows, *cols),
            KernelSpec::ReduceAdd {
                partials_precision,
                output,
                elements,
                partials,
            } => vec![
                operand(
                    0,
                    "partials",
                    Access::Read,
                    *partials_precision,
                    count(partials) * count(elements),
                ),
                operand(1, "dst", Access::Write, *output, count(elements)),
            ],
            KernelSpec::Copy { bytes } => copy_operands(*bytes),
            KernelSpec::CopySlice {
                bytes,
                stride,
                slices,
            } => {
                // The store as a whole: which slice is read is known only at run time.
                let span = u64::from(slices.saturating_sub(1)) * u64::from(*stride);
                vec![
                    Operand {
                        arg: 0,
                        what: "store",
                        access: Access::Read,
                        element_bytes: 1,
                        elements: span + u64::from(*bytes),
                    },
                    Operand {
                        arg: 1,
                        what: "dst",
                        access: Access::Write,
                        element_bytes: 1,
                        elements: count(bytes),
                    },
                    Operand {
                        arg: 2,
                        what: "counter",
                        access: Access::Read,
                        element_bytes: 4,
                        elements: 1,
                    },
                ]
            }
            KernelSpec::Count => vec![Operand {
                arg: 0,
                what: "counter",
                access: Access::ReadWrite,
                element_bytes: 4,
                elements: 1,
            }],
            KernelSpec::Fill {
                precision,
                elements,
            } => vec![operand(
                0,
                "dst",
                Access::Write,
                *precision,
                count(elements),
            )],
            KernelSpec::Transpose {
                precision,
                rows,
                cols,
            } => unary(*precision, count(rows) * count(cols)),
            // Argument 2 (value_bits) is an f32 bit pattern, not an address.
            KernelSpec::Scale {
                precision,
                elements,
            } => unary(*precision, count(elements)),
            KernelSpec::AttentionBlock {
                precision,
                rows,
                keys,
                width,
                ..
            } => attention_block_operands(*precision, *rows, *keys, *width),
            KernelSpec::AttentionFinish {
                precision,
                rows,
                width,
            } => attention_finish_operands(*precision, *rows, *width),
            KernelSpec::AttentionColumns {
                precision,
                keys,
                queries,
                width,
                ..
            } => attention_columns_operands(*precision, *keys, *queries, *width),
            KernelSpec::AttentionRows {
                precision,
                rows,
                keys,
                ..
            } => {
                let (keys, rows) = (pad16(count(keys)), count(rows));
                let partials = default_partials(*precision);
                vec![
                    operand(0, "s", Access::Read, partials, rows * keys),
                    operand(1, "p", Access::Write, *precision, rows * keys),
                    operand(2, "m_blk", Access::Write, Precision::F32, rows),
                    operand(3, "l_blk", Access::Write, Precision::F32, rows),
                ]
            }
            KernelSpec::AttentionRowsMerge {
                precision,
                rows,
                width,
                first,
                ..
            } => {
                let (rows, width) = (count(rows), count(width));
                // The first block only writes the state.
                let state = if *first {
                    Access::Write
                } else {
                    Access::ReadWrite
                };
                vec![
                    operand(
                        0,
                        "pv",
                        Access::Read,
                        default_partials(*precision),
                        rows * pad16(width),
                    ),
                    operand(1, "m_blk", Access::Read, Precision::F32, rows),
                    operand(2, "l_blk", Access::Read, Precision::F32, rows),
                    operand(3, "m", state, Precision::F32, rows),
                    operand(4, "l", state, Precision::F32, rows),
                    operand(5, "o", state, Precision::F32, rows * width),
                ]
            }
            KernelSpec::AttentionFinishColumns {
                precision,
                queries,
                width,
            } => finish_columns_operands(*precision, *precision, *queries, *width),
            KernelSpec::AttentionSplitFinish {
                precision,
                queries,
                width,
            } => finish_columns_operands(*precision, Precision::F32, *queries, *width),
            KernelSpec::AttentionMerge {
                precision,
                splits,
                rows,
                width,
                panels,
            } => {
                let (splits, rows, width) = (count(splits), count(rows), count(width));
                let o = if *panels {
                    default_partials(*precision)
                } else {
                    Precision::F32
                };
                vec![
                    operand(0, "o", Access::Read, o, splits * rows * width),
                    operand(1, "m", Access::Read, Precision::F32, splits * rows),
                    operand(2, "l", Access::Read, Precision::F32, splits * rows),
                    operand(3, "dst", Access::Write, *precision, rows * width),
                ]
            }
            KernelSpec::AddGroupBias {
                precision,
                rows,
                elements,
            } => add_group_bias_operands(*precision, *rows, *elements, group_start),
            KernelSpec::Map {
                output,
                inputs,
                rows,
                cols,
                ..
            } => {
                let mut operands: Vec<Operand> = inputs
                    .iter()
                    .enumerate()
                    .map(|(k, input)| {
                        operand(
                            k,
                            MAP_INPUT_NAMES[k.min(MAP_INPUT_NAMES.len() - 1)],
                            Access::Read,
                            input.precision,
                            input.operand.elements(*rows, *cols),
                        )
                    })
                    .collect();
                operands.push(operand(
                    inputs.len(),
                    "dst",
                    Access::Write,
                    *output,
                    count(rows) * count(cols),
                ));
                operands
            }
            KernelSpec::Reduce {
                precision,
                rows,
                cols,
                ..
            } => vec![
                operand(
                    0,
                    "src",
                    Access::Read,
                    *precision,
                    count(rows) * count(cols),
                ),
                operand(1, "dst", Access::Write, *precision, count(rows)),
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
            KernelSpec::Gemm { rows, .. } | KernelSpec::GemmRowMajor { rows, .. } => {
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

/// An operand of `elements` elements of `precision` at argument `arg`.
fn operand(
    arg: usize,
    what: &'static str,
    access: Access,
    precision: Precision,
    elements: u64,
) -> Operand {
    Operand {
        arg,
        what,
        access,
        element_bytes: precision.bytes(),
        elements,
    }
}

/// A constant parameter widened for size arithmetic.
/// Operand names of a map kernel's inputs (at most [`super::spec::MAP_MAX_INPUTS`]).
const MAP_INPUT_NAMES: [&str; 16] = [
    "input0", "input1", "input2", "input3", "input4", "input5", "input6", "input7", "input8",
    "input9", "input10", "input11", "input12", "input13", "input14", "input15",
];

fn count(value: &u32) -> u64 {
    u64::from(*value)
}

/// `src` read and `dst` written, `elements` of one precision each.
fn unary(precision: Precision, elements: u64) -> Vec<Operand> {
    vec![
        operand(0, "src", Access::Read, precision, elements),
        operand(1, "dst", Access::Write, precision, elements),
    ]
}

/// A GEMM call of `rows` rows: A and B read, C written (read too when accumulating).
fn gemm_operands(
    input: Precision,
    partials: Precision,
    k: u32,
    c: u32,
    rows: u32,
    accumulate: bool,
) -> Vec<Operand> {
    let c_access = if accumulate {
        Access::ReadWrite
    } else {
        Access::Write
    };
    vec![
        operand(0, "a", Access::Read, input, u64::from(rows) * count(&k)),
        operand(1, "b", Access::Read, input, count(&k) * count(&c)),
        operand(2, "c", c_access, partials, u64::from(rows) * count(&c)),
    ]
}

/// A byte copy: `bytes` raw bytes read from `src` and written to `dst`.
fn copy_operands(bytes: u32) -> Vec<Operand> {
    vec![
        Operand {
            arg: 0,
            what: "src",
            access: Access::Read,
            element_bytes: 1,
            elements: count(&bytes),
        },
        Operand {
            arg: 1,
            what: "dst",
            access: Access::Write,
            element_bytes: 1,
            elements: count(&bytes),
        },
    ]
}

/// An attention block: s and v read, the running state m, l, o read and written.
/// Arguments 5..=7 (scale_bits, row_offset, key_offset) are not addresses. The running state
/// m, l, o is f32 whatever the precision of s and v.
fn attention_block_operands(
    precision: Precision,
    rows: u32,
    keys: u32,
    width: u32,
) -> Vec<Operand> {
    let (rows, keys, width) = (count(&rows), count(&keys), count(&width));
    vec![
        operand(0, "s", Access::Read, precision, rows * keys),
        operand(1, "v", Access::Read, precision, keys * width),
        operand(2, "m", Access::ReadWrite, Precision::F32, rows),
        operand(3, "l", Access::ReadWrite, Precision::F32, rows),
        operand(4, "o", Access::ReadWrite, Precision::F32, rows * width),
    ]
}

/// One key block of the column formulation: the transposed scores read, the probabilities
/// written, the running maximum, sum and unnormalized output (all queries padded to whole
/// 16-column panels, the keys of s and p to whole 16-row groups) read and written.
fn attention_columns_operands(
    precision: Precision,
    keys: u32,
    queries: u32,
    width: u32,
) -> Vec<Operand> {
    let (keys, queries, width) = (pad16(count(&keys)), count(&queries), count(&width));
    let partials = default_partials(precision);
    vec![
        operand(0, "s", Access::Read, partials, keys * pad16(queries)),
        operand(1, "p", Access::Write, precision, keys * pad16(queries)),
        operand(2, "m", Access::ReadWrite, Precision::F32, queries),
        operand(3, "l", Access::ReadWrite, Precision::F32, queries),
        operand(4, "o", Access::ReadWrite, partials, width * pad16(queries)),
    ]
}

/// `n` rounded up to whole 16-element groups.
fn pad16(n: u64) -> u64 {
    n.div_ceil(16) * 16
}

/// A rearrangement between a dense block of `dense_elements` and an AMP block of
/// `amp_elements`: the source read and the destination written, in the direction `to_amp`.
fn rearrange_operands(
    precision: Precision,
    to_amp: bool,
    dense_elements: u64,
    amp_elements: u64,
) -> Vec<Operand> {
    let (src, dst) = if to_amp {
        (dense_elements, amp_elements)
    } else {
        (amp_elements, dense_elements)
    };
    vec![
        operand(0, "src", Access::Read, precision, src),
        operand(1, "dst", Access::Write, precision, dst),
    ]
}

/// A broadcast add: a and b (`b_rows` rows) read, the sum written.
fn add_operands(precision: Precision, rows: u32, cols: u32, b_rows: u32) -> Vec<Operand> {
    let (rows, cols, b_rows) = (count(&rows), count(&cols), count(&b_rows));
    vec![
        operand(0, "a", Access::Read, precision, rows * cols),
        operand(1, "b", Access::Read, precision, b_rows * cols),
        operand(2, "out", Access::Write, precision, rows * cols),
    ]
}

/// A layer norm: the block and its gamma and beta vectors read, the result written.
fn layer_norm_operands(precision: Precision, rows: u32, cols: u32) -> Vec<Operand> {
    let (rows, cols) = (count(&rows), count(&cols));
    vec![
        operand(0, "src", Access::Read, precision, rows * cols),
        operand(1, "gamma", Access::Read, precision, cols),
        operand(2, "beta", Access::Read, precision, cols),
        operand(3, "dst", Access::Write, precision, rows * cols),
    ]
}

/// An attention finish: the f32 running state o and l read, the result written.
/// The column formulation's finish of `queries` rows of `width` (`precision`'s elements and
/// partials) into `output` rows: the transposed partials and the sums read, the rows written.
fn finish_columns_operands(
    precision: Precision,
    output: Precision,
    queries: u32,
    width: u32,
) -> Vec<Operand> {
    let (queries, width) = (count(&queries), count(&width));
    vec![
        operand(
            0,
            "o",
            Access::Read,
            default_partials(precision),
            pad16(queries) * width,
        ),
        operand(1, "l", Access::Read, Precision::F32, queries),
        operand(2, "dst", Access::Write, output, queries * width),
    ]
}

fn attention_finish_operands(precision: Precision, rows: u32, width: u32) -> Vec<Operand> {
    let (rows, width) = (count(&rows), count(&width));
    vec![
        operand(0, "o", Access::Read, Precision::F32, rows * width),
        operand(1, "l", Access::Read, Precision::F32, rows),
        operand(2, "dst", Access::Write, precision, rows * width),
    ]
}

/// A group-bias add starting at group row `group_start`: the block and the bias read, the
/// result written.
/// Argument 3 (start) is a group row, not an address. The bias spans the groups the call's
/// group rows start..start + units fall in.
fn add_group_bias_operands(
    precision: Precision,
    rows: u32,
    elements: u32,
    group_start: u32,
) -> Vec<Operand> {
    vec![
        operand(0, "a", Access::Read, precision, count(&elements)),
        operand(
            1,
            "bias",
            Access::Read,
            precision,
            group_bias_elements(rows, elements, group_start),
        ),
        operand(2, "out", Access::Write, precision, count(&elements)),
    ]
}
