//! Kernel sources: the MLIR files of `device/kernels/`, embedded in the binary so a compiled
//! program never depends on the checkout, expanded with their includes and given their entry
//! points.

use super::error::KernelError;
use super::spec::KernelSpec;

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
        "add_group_bias.mlir",
        include_str!("../../kernels/add_group_bias.mlir"),
    ),
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
