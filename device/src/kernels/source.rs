//! Kernel sources: the MLIR files of `device/kernels/`, embedded in the binary so a compiled
//! program never depends on the checkout, expanded with their includes and given their entry
//! points.

use super::describe::precision_code;
use super::error::KernelError;
use super::spec::{KernelSpec, MapOperand};

/// Directory the sources were embedded from (used in log lines and error messages).
pub const SOURCE_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/kernels");

/// Every kernel source file, by file name.
const SOURCES: &[(&str, &str)] = &[
    ("common.mlir", include_str!("../../kernels/common.mlir")),
    ("gemm.mlir", include_str!("../../kernels/gemm.mlir")),
    ("cast.mlir", include_str!("../../kernels/cast.mlir")),
    (
        "rearrange.mlir",
        include_str!("../../kernels/rearrange.mlir"),
    ),
    ("add.mlir", include_str!("../../kernels/add.mlir")),
    ("gelu.mlir", include_str!("../../kernels/gelu.mlir")),
    ("softmax.mlir", include_str!("../../kernels/softmax.mlir")),
    (
        "layer_norm.mlir",
        include_str!("../../kernels/layer_norm.mlir"),
    ),
    (
        "reduce_add.mlir",
        include_str!("../../kernels/reduce_add.mlir"),
    ),
    ("copy.mlir", include_str!("../../kernels/copy.mlir")),
    (
        "copy_slice.mlir",
        include_str!("../../kernels/copy_slice.mlir"),
    ),
    ("count.mlir", include_str!("../../kernels/count.mlir")),
    ("fill.mlir", include_str!("../../kernels/fill.mlir")),
    (
        "transpose.mlir",
        include_str!("../../kernels/transpose.mlir"),
    ),
    ("scale.mlir", include_str!("../../kernels/scale.mlir")),
    (
        "attention_block.mlir",
        include_str!("../../kernels/attention_block.mlir"),
    ),
    (
        "attention_finish.mlir",
        include_str!("../../kernels/attention_finish.mlir"),
    ),
    (
        "attention_columns.mlir",
        include_str!("../../kernels/attention_columns.mlir"),
    ),
    (
        "attention_finish_columns.mlir",
        include_str!("../../kernels/attention_finish_columns.mlir"),
    ),
    (
        "attention_merge.mlir",
        include_str!("../../kernels/attention_merge.mlir"),
    ),
    (
        "attention_rows.mlir",
        include_str!("../../kernels/attention_rows.mlir"),
    ),
    (
        "attention_rows_merge.mlir",
        include_str!("../../kernels/attention_rows_merge.mlir"),
    ),
    (
        "add_group_bias.mlir",
        include_str!("../../kernels/add_group_bias.mlir"),
    ),
    ("reduce.mlir", include_str!("../../kernels/reduce.mlir")),
];

/// A line `// ipu.include "file.mlir"` splices that file's text in place (once per file).
const INCLUDE_DIRECTIVE: &str = "// ipu.include ";

/// The text of one embedded source file.
pub fn source_text(file: &str) -> Result<&'static str, KernelError> {
    SOURCES
        .iter()
        .find(|(name, _)| *name == file)
        .map(|(_, text)| *text)
        .ok_or_else(|| KernelError::Source {
            file: file.to_string(),
            detail: "no such kernel source".into(),
        })
}

/// Full path of a source file, for log lines.
pub fn source_path(file: &str) -> String {
    format!("{SOURCE_DIR}/{file}")
}

/// The source with its includes spliced in (each file at most once, cycles rejected).
pub fn expand_includes(file: &str) -> Result<String, KernelError> {
    let mut out = String::new();
    let mut done = Vec::new();
    expand_into(file, &mut out, &mut done, &mut Vec::new())?;
    Ok(out)
}

fn expand_into<'a>(
    file: &'a str,
    out: &mut String,
    done: &mut Vec<&'a str>,
    stack: &mut Vec<&'a str>,
) -> Result<(), KernelError> {
    if stack.contains(&file) {
        return Err(KernelError::Source {
            file: file.to_string(),
            detail: format!("include cycle {stack:?}"),
        });
    }
    if done.contains(&file) {
        return Ok(());
    }
    stack.push(file);
    let text = source_text(file)?;
    for (number, line) in text.lines().enumerate() {
        if let Some(rest) = line.trim_start().strip_prefix(INCLUDE_DIRECTIVE) {
            let included = rest.trim().trim_matches('"');
            let (name, _) = SOURCES
                .iter()
                .find(|(name, _)| *name == included)
                .ok_or_else(|| KernelError::Source {
                    file: file.to_string(),
                    detail: format!(
                        "line {}: included file {included:?} does not exist",
                        number + 1
                    ),
                })?;
            expand_into(name, out, done, stack)?;
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    stack.pop();
    done.push(file);
    Ok(())
}

/// The complete module text for `spec`: the expanded source plus one public entry per variant
/// (`llvm.emit_c_interface`, so the loader calls `_mlir_ciface_<entry>(mem*, args*)` with two
/// memref descriptors), each calling the source's `@body` with its variant as a constant.
pub fn module_text(spec: &KernelSpec) -> Result<String, KernelError> {
    let mut text = expand_includes(spec.source_file())?;
    if let KernelSpec::Map { .. } = spec {
        text.push_str(&map_body(spec));
    }
    for (symbol, variant) in spec.entries() {
        text.push_str(&format!(
            "func.func @{symbol}(%mem: memref<?xi8>, %args: memref<?xi32>) attributes {{llvm.emit_c_interface}} {{\n  \
             %variant = arith.constant {variant} : index\n  \
             func.call @body(%mem, %args, %variant) : (memref<?xi8>, memref<?xi32>, index) -> ()\n  \
             return\n}}\n"
        ));
    }
    Ok(text)
}

/// The `@body` of a map kernel, generated from its spec: a loop over the block's rows and
/// columns that loads each input (by its [`MapOperand`]), computes the scalar program in f32
/// and stores the result (the helpers of `common.mlir` do the loads, stores and rounding).
pub fn map_body(spec: &KernelSpec) -> String {
    let KernelSpec::Map {
        output,
        inputs,
        rows,
        cols,
        index_shape,
        body,
    } = spec
    else {
        return String::new();
    };
    let mut text = String::from(
        "func.func private @body(%mem: memref<?xi8>, %args: memref<?xi32>, %variant: index) {\n",
    );
    let mut line = |s: String| {
        text.push_str("  ");
        text.push_str(&s);
        text.push('\n');
    };
    line("%c0 = arith.constant 0 : index".into());
    line("%c1 = arith.constant 1 : index".into());
    line(format!("%rows = arith.constant {rows} : index"));
    line(format!("%cols = arith.constant {cols} : index"));
    line(format!(
        "%pout = arith.constant {} : index",
        precision_code(*output)
    ));
    line("%s0 = arith.constant 0 : i32".into());
    let n = inputs.len();
    for (k, input) in inputs.iter().enumerate() {
        line(format!("%ak{k} = arith.constant {k} : index"));
        line(format!(
            "%a{k} = func.call @ipu_arg_index(%args, %ak{k}) : (memref<?xi32>, index) -> index"
        ));
        line(format!(
            "%p{k} = arith.constant {} : index",
            precision_code(input.precision)
        ));
        line(format!("%s{k}x = arith.constant {} : i32", input.scale));
    }
    for (name, at) in [("out", n), ("row0", n + 1), ("col0", n + 2)] {
        line(format!("%{name}k = arith.constant {at} : index"));
        line(format!(
            "%{name} = func.call @ipu_arg_index(%args, %{name}k) : (memref<?xi32>, index) -> index"
        ));
    }
    line("scf.for %r = %c0 to %rows step %c1 {".into());
    line("  %row = arith.muli %r, %cols : index".into());
    line("  scf.for %c = %c0 to %cols step %c1 {".into());
    line("    %i = arith.addi %row, %c : index".into());
    for (k, input) in inputs.iter().enumerate() {
        let at = match input.operand {
            MapOperand::Full => "%i",
            MapOperand::Row => "%c",
            MapOperand::Column => "%r",
            MapOperand::Scalar => "%c0",
        };
        line(format!(
            "    %x{k} = func.call @ipu_load(%mem, %a{k}, {at}, %p{k}, %s{k}x) : (memref<?xi8>, index, index, index, i32) -> f32"
        ));
    }
    // Element indices: the last axis is the column, the leading axes unravel the row.
    let rank = index_shape.len();
    if rank > 0 {
        line("    %gr = arith.addi %row0, %r : index".into());
        line(format!(
            "    %ix{} = arith.addi %col0, %c : index",
            rank - 1
        ));
        let mut rest = "%gr".to_string();
        for axis in (0..rank - 1).rev() {
            line(format!(
                "    %d{axis} = arith.constant {} : index",
                index_shape[axis]
            ));
            if axis == 0 {
                line(format!("    %ix0 = arith.addi {rest}, %c0 : index"));
            } else {
                line(format!(
                    "    %ix{axis} = arith.remui {rest}, %d{axis} : index"
                ));
                line(format!(
                    "    %q{axis} = arith.divui {rest}, %d{axis} : index"
                ));
                rest = format!("%q{axis}");
            }
        }
    }
    let (ops, result) = body.to_mlir_ops("v", &|k| format!("%x{k}"), &|k| format!("%ix{k}"));
    for op in ops.lines() {
        line(format!("    {op}"));
    }
    line(format!(
        "    func.call @ipu_store(%mem, %out, %i, %pout, %s0, {result}) : (memref<?xi8>, index, index, index, i32, f32) -> ()"
    ));
    line("  }".into());
    line("}".into());
    line("return".into());
    text.push_str("}\n");
    text
}
