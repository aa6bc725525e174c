//! Kernel operand footprints: which bytes of tile memory a kernel run reads and writes, from
//! its [`KernelSpec`] and run-time arguments, so that the simulator can refuse an out-of-range
//! access before handing the tile's memory to compiled code (which does not bounds-check).
//!
//! The sizes follow the argument lists documented on each `KernelSpec` variant. The kernel
//! contract does not (yet) provide operand ranges itself; when it does, this module should
//! defer to it so that there is one owner of the layout.

use crate::kernels::spec::{ElementOrder, KernelSpec};

/// How a kernel touches an operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
    ReadWrite,
}

/// One operand: its name, argument index, byte offset from the SRAM base and byte length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Operand {
    pub name: &'static str,
    pub arg: usize,
    pub offset: u32,
    pub bytes: u64,
    pub access: Access,
}

/// Why the footprint could not be computed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FootprintError {
    ArgCount { expected: usize, found: usize },
    RowIndex { index: u32, entries: usize },
}

impl std::fmt::Display for FootprintError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FootprintError::ArgCount { expected, found } => {
                write!(f, "expects {expected} arguments, got {found}")
            }
            FootprintError::RowIndex { index, entries } => {
                write!(
                    f,
                    "row count index {index} is out of range ({entries} row counts)"
                )
            }
        }
    }
}

/// A short, stable name for a kernel spec in messages and profiles.
pub fn kernel_label(spec: &KernelSpec) -> String {
    match spec {
        KernelSpec::Gemm { input, k, c, .. } => format!("gemm_{}_k{k}_c{c}", input.short_name()),
        KernelSpec::Cast { from, to, elements } => {
            format!("cast_{}_{}_n{elements}", from.short_name(), to.short_name())
        }
        KernelSpec::Rearrange {
            order, precision, ..
        } => {
            format!("rearrange_{}_{}", order.name(), precision.short_name())
        }
        KernelSpec::Add {
            precision,
            rows,
            cols,
            ..
        } => {
            format!("add_{}_r{rows}_c{cols}", precision.short_name())
        }
        KernelSpec::Gelu {
            precision,
            elements,
            ..
        } => {
            format!("gelu_{}_n{elements}", precision.short_name())
        }
        KernelSpec::Softmax {
            precision,
            rows,
            cols,
            ..
        } => {
            format!("softmax_{}_r{rows}_c{cols}", precision.short_name())
        }
        KernelSpec::LayerNorm {
            precision,
            rows,
            cols,
            ..
        } => {
            format!("layer_norm_{}_r{rows}_c{cols}", precision.short_name())
        }
        KernelSpec::ReduceAdd {
            output,
            elements,
            partials,
            ..
        } => {
            format!("reduce_add_{}_n{elements}_p{partials}", output.short_name())
        }
        KernelSpec::Copy { bytes } => format!("copy_b{bytes}"),
        KernelSpec::Fill {
            precision,
            elements,
        } => {
            format!("fill_{}_n{elements}", precision.short_name())
        }
    }
}

fn arity(args: &[u32], expected: usize) -> Result<(), FootprintError> {
    if args.len() != expected {
        return Err(FootprintError::ArgCount {
            expected,
            found: args.len(),
        });
    }
    Ok(())
}

fn operand(name: &'static str, args: &[u32], arg: usize, bytes: u64, access: Access) -> Operand {
    Operand {
        name,
        arg,
        offset: args[arg],
        bytes,
        access,
    }
}

/// The memory operands of one run of `spec` with `args`.
pub fn operands(spec: &KernelSpec, args: &[u32]) -> Result<Vec<Operand>, FootprintError> {
    use Access::*;
    let n = |x: u32| u64::from(x);
    Ok(match spec {
        KernelSpec::Gemm {
            input,
            partials,
            k,
            c,
            rows,
            accumulate,
            ..
        } => {
            arity(args, 6)?;
            let index = args[3];
            let row_count = *rows.get(index as usize).ok_or(FootprintError::RowIndex {
                index,
                entries: rows.len(),
            })?;
            let input_bytes = n(input.bytes());
            let output_access = if *accumulate { ReadWrite } else { Write };
            vec![
                operand("a", args, 0, n(row_count) * n(*k) * input_bytes, Read),
                operand("b", args, 1, n(*k) * n(*c) * input_bytes, Read),
                operand(
                    "c",
                    args,
                    2,
                    n(row_count) * n(*c) * n(partials.bytes()),
                    output_access,
                ),
            ]
        }
        KernelSpec::Cast { from, to, elements } => {
            arity(args, 3)?;
            vec![
                operand("src", args, 0, n(*elements) * n(from.bytes()), Read),
                operand("dst", args, 1, n(*elements) * n(to.bytes()), Write),
            ]
        }
        KernelSpec::Rearrange {
            order,
            to_amp,
            precision,
            rows,
            rows_padded,
            cols,
            cols_padded,
            ..
        } => {
            arity(args, 2)?;
            let element = n(precision.bytes());
            let plain = n(*rows) * n(*cols) * element;
            let padded = n(*rows_padded) * n(*cols_padded) * element;
            // Row-major to row-major is a plain copy of the unpadded block.
            let (src, dst) = match (order, to_amp) {
                (ElementOrder::RowMajor, _) => (plain, plain),
                (_, true) => (plain, padded),
                (_, false) => (padded, plain),
            };
            vec![
                operand("src", args, 0, src, Read),
                operand("dst", args, 1, dst, Write),
            ]
        }
        KernelSpec::Add {
            precision,
            rows,
            cols,
            b_rows,
        } => {
            arity(args, 3)?;
            let element = n(precision.bytes());
            vec![
                operand("a", args, 0, n(*rows) * n(*cols) * element, Read),
                operand("b", args, 1, n(*b_rows) * n(*cols) * element, Read),
                operand("out", args, 2, n(*rows) * n(*cols) * element, Write),
            ]
        }
        KernelSpec::Gelu {
            precision,
            elements,
            ..
        } => {
            arity(args, 2)?;
            let bytes = n(*elements) * n(precision.bytes());
            vec![
                operand("src", args, 0, bytes, Read),
                operand("dst", args, 1, bytes, Write),
            ]
        }
        KernelSpec::Softmax {
            precision,
            rows,
            cols,
            ..
        } => {
            arity(args, 3)?;
            let bytes = n(*rows) * n(*cols) * n(precision.bytes());
            vec![
                operand("src", args, 0, bytes, Read),
                operand("dst", args, 1, bytes, Write),
            ]
        }
        KernelSpec::LayerNorm {
            precision,
            rows,
            cols,
            ..
        } => {
            arity(args, 4)?;
            let element = n(precision.bytes());
            let block = n(*rows) * n(*cols) * element;
            vec![
                operand("src", args, 0, block, Read),
                operand("gamma", args, 1, n(*cols) * element, Read),
                operand("beta", args, 2, n(*cols) * element, Read),
                operand("dst", args, 3, block, Write),
            ]
        }
        KernelSpec::ReduceAdd {
            partials_precision,
            output,
            elements,
            partials,
        } => {
            arity(args, 2)?;
            vec![
                operand(
                    "partials",
                    args,
                    0,
                    n(*elements) * n(*partials) * n(partials_precision.bytes()),
                    Read,
                ),
                operand("dst", args, 1, n(*elements) * n(output.bytes()), Write),
            ]
        }
        KernelSpec::Copy { bytes } => {
            arity(args, 2)?;
            vec![
                operand("src", args, 0, n(*bytes), Read),
                operand("dst", args, 1, n(*bytes), Write),
            ]
        }
        KernelSpec::Fill {
            precision,
            elements,
        } => {
            arity(args, 2)?;
            vec![operand(
                "dst",
                args,
                0,
                n(*elements) * n(precision.bytes()),
                Write,
            )]
        }
    })
}
