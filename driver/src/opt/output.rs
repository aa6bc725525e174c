//! Writing ipu-opt's results: joined chunk outputs, bytecode, crash reproducers, the pass
//! listing and the statistics report.

use std::io::Write;

use melior::ir::operation::OperationLike;
use std::path::Path;

use ipu_passes::Registry;

use super::{error, Failed, OptArgs};

/// What a reproducer file records besides the IR.
pub(super) const REPRODUCER_KEY: &str = "mlir_reproducer";
/// The chunks' outputs as mlir-opt writes them: each chunk's printed op, separated by the output
/// split marker and a newline (also around chunks that failed and printed nothing).
pub(super) fn join_chunk_outputs(
    args: &OptArgs,
    outputs: Vec<Vec<u8>>,
    chunk_count: usize,
) -> Vec<u8> {
    if outputs.len() == 1 {
        // One chunk: its printed bytes as they are (no copy of a possibly large module).
        return outputs.into_iter().next().unwrap_or_default();
    }
    if chunk_count <= 1 || args.emit_bytecode {
        return outputs.concat();
    }
    let separator = format!("{}\n", args.output_split_marker);
    let mut joined = Vec::new();
    for (index, output) in outputs.into_iter().enumerate() {
        if index > 0 {
            joined.extend_from_slice(separator.as_bytes());
        }
        joined.extend(output);
    }
    joined
}

/// `--emit-bytecode[-version=N]`.
pub(super) fn write_bytecode(
    op: melior::ir::OperationRef,
    version: Option<i64>,
) -> Result<Vec<u8>, String> {
    let Some(version) = version else {
        return Ok(op.write_bytecode());
    };
    let mut bytes: Vec<u8> = Vec::new();
    // SAFETY: the op and config are live for the call; the callback only appends to `bytes`.
    let result = unsafe {
        let config = mlir_sys::mlirBytecodeWriterConfigCreate();
        mlir_sys::mlirBytecodeWriterConfigDesiredEmitVersion(config, version);
        let result = mlir_sys::mlirOperationWriteBytecodeWithConfig(
            op.to_raw(),
            config,
            Some(collect_bytes),
            &mut bytes as *mut Vec<u8> as *mut std::ffi::c_void,
        );
        mlir_sys::mlirBytecodeWriterConfigDestroy(config);
        result
    };
    if result.value == 0 {
        return Err(format!("cannot write bytecode version {version}"));
    }
    Ok(bytes)
}

pub(super) unsafe extern "C" fn collect_bytes(
    text: mlir_sys::MlirStringRef,
    data: *mut std::ffi::c_void,
) {
    // SAFETY: `data` is the `Vec<u8>` passed by `write_bytecode`; `text` is valid for the call.
    let sink = unsafe { &mut *(data as *mut Vec<u8>) };
    if text.length > 0 {
        sink.extend_from_slice(unsafe {
            std::slice::from_raw_parts(text.data as *const u8, text.length)
        });
    }
}

/// Writes by the tools' one output rule ([`ipu_runtime::output`]): never the input file, a
/// device node or FIFO (`-o /dev/null`) written in place, a regular file atomically.
pub(super) fn write_output(output: &str, input: &str, bytes: &[u8]) -> Result<(), Failed> {
    if output == "-" {
        let mut stdout = std::io::stdout().lock();
        return stdout
            .write_all(bytes)
            .and_then(|_| stdout.flush())
            .map_err(|e| error(format!("cannot write standard output: {e}")));
    }
    let inputs: Vec<&Path> = if input == "-" {
        Vec::new()
    } else {
        vec![Path::new(input)]
    };
    ipu_runtime::output::write_output(Path::new(output), &inputs, bytes).map_err(|e| match e {
        ipu_runtime::output::OutputError::IsInput { .. } => error(format!(
            "output file '{output}' is the input file; refusing to overwrite it"
        )),
        ipu_runtime::output::OutputError::Io { source, .. } => {
            error(format!("cannot write output file '{output}': {source}"))
        }
        other => error(format!("cannot write output file '{output}': {other}")),
    })
}

pub(super) fn write_reproducer(
    path: &Path,
    input: &str,
    pipeline: &str,
    args: &OptArgs,
) -> Result<(), Failed> {
    let escaped = pipeline.replace('\\', "\\\\").replace('"', "\\\"");
    let text = format!(
        "{input}\n\n{{-#\n  external_resources: {{\n    {REPRODUCER_KEY}: {{\n      pipeline: \"{escaped}\",\n      disable_threading: {},\n      verify_each: {}\n    }}\n  }}\n#-}}\n",
        args.disable_threading, args.verify_each
    );
    std::fs::write(path, text)
        .map_err(|e| error(format!("cannot write reproducer '{}': {e}", path.display())))?;
    Ok(())
}

/// A `key: true|false` entry of a reproducer's resource block.
pub(super) fn reproducer_flag(resources: &str, key: &str) -> Option<bool> {
    let at = resources.find(&format!("{key}:"))?;
    let value = resources[at + key.len() + 1..].trim_start();
    if value.starts_with("true") {
        Some(true)
    } else if value.starts_with("false") {
        Some(false)
    } else {
        None
    }
}

/// Splits a reproducer into its IR and pipeline.
pub fn extract_reproducer(buffer: &str) -> Option<(String, String)> {
    // The resource block starts a line; `{-#` inside a comment (say, a test's CHECK line) is
    // not one.
    let start = buffer
        .match_indices("{-#")
        .map(|(index, _)| index)
        .filter(|&index| {
            buffer[..index]
                .rsplit('\n')
                .next()
                .is_some_and(|before| before.trim().is_empty())
        })
        .last()?;
    let resources = &buffer[start..];
    let key = resources.find(REPRODUCER_KEY)?;
    let after = &resources[key..];
    let pipeline_at = after.find("pipeline:")?;
    let rest = after[pipeline_at + "pipeline:".len()..]
        .trim_start()
        .strip_prefix('"')?;
    let mut pipeline = String::new();
    let mut characters = rest.chars();
    loop {
        match characters.next()? {
            '"' => break,
            '\\' => pipeline.push(characters.next()?),
            other => pipeline.push(other),
        }
    }
    Some((buffer[..start].to_string(), pipeline))
}

/// `--list-passes`: our passes and pipelines with options, types, defaults and help.
pub fn list_passes(registry: &Registry) -> String {
    let mut text = String::from("Passes:\n");
    let describe = |text: &mut String,
                    argument: &str,
                    summary: &str,
                    options: Vec<ipu_passes::pipeline::OptionInfo>| {
        text.push_str(&format!("  {argument}  -  {summary}\n"));
        for option in options {
            text.push_str(&format!(
                "    {}=<{}>  (default: {})  -  {}\n",
                option.name,
                option.type_name,
                if option.default.is_empty() {
                    "\"\"".to_string()
                } else {
                    option.default.clone()
                },
                option.help
            ));
        }
    };
    for info in registry.passes() {
        describe(&mut text, info.argument, info.summary, (info.options)());
    }
    text.push_str("Pass Pipelines:\n");
    for info in registry.pipelines() {
        describe(&mut text, info.argument, info.summary, (info.options)());
    }
    text
}

pub(super) fn statistics_report(built: &ipu_passes::manager::BuiltPipeline) -> String {
    let table = built.statistics.snapshot();
    let mut text = String::new();
    text.push_str(
        "===-------------------------------------------------------------------------===\n",
    );
    text.push_str("                         ... Pass statistics report ...\n");
    text.push_str(
        "===-------------------------------------------------------------------------===\n",
    );
    for (instance, pass) in built.instances.iter().enumerate() {
        text.push_str(&format!(
            "{}\n",
            ipu_passes::pass::display_name(pass.argument())
        ));
        if let Some(values) = table.get(&(instance, pass.argument())) {
            for (name, (value, help)) in values {
                text.push_str(&format!("  (S) {value} {name} - {help}\n"));
            }
        }
    }
    text
}
