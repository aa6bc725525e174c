//! `ipu-opt`: mlir-opt's conventions over MLIR 22 with our dialects and passes.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Parser;
use ipu_passes::{
    manager::{build_pass_manager, print_operation, print_resolved, PrintAround},
    pipeline::{parse_pipeline, PipelineError},
    Registry,
};
use melior::{
    ir::{operation::OperationLike, Module},
    Context,
};

use crate::diagnostics::{render, Collector};
use crate::split_input::{join_outputs, split_input, Chunk, DEFAULT_SPLIT_MARKER};
use crate::verify_diagnostics::{
    combine_chunk_results, verify_with_mode, Diagnostic, Severity, VerifyMode,
};

/// Command-line options of `ipu-opt` (mlir-opt's names; single-dash long options work too).
#[derive(Parser, Debug, Clone, Default)]
#[command(
    name = "ipu-opt",
    version,
    about = "MLIR optimizer driver for the ipu dialects and passes"
)]
pub struct OptArgs {
    /// Input file (`-` for standard input).
    #[arg(default_value = "-")]
    pub input: String,
    /// Output file (`-` for standard output).
    #[arg(short = 'o', default_value = "-")]
    pub output: String,
    /// The pass pipeline, in MLIR's textual syntax: `builtin.module(ipu-canonicalize, cse)`.
    #[arg(long = "pass-pipeline", short = 'p')]
    pub pass_pipeline: Option<String>,
    /// List our passes and named pipelines with their options and defaults, then exit.
    #[arg(long = "list-passes")]
    pub list_passes: bool,
    /// Print the pipeline with every option's value before running it.
    #[arg(long = "dump-pass-pipeline")]
    pub dump_pass_pipeline: bool,
    /// Print IR before each pass named here (comma-separated pass arguments).
    #[arg(long = "mlir-print-ir-before", value_delimiter = ',')]
    pub print_ir_before: Vec<String>,
    /// Print IR after each pass named here (comma-separated pass arguments).
    #[arg(long = "mlir-print-ir-after", value_delimiter = ',')]
    pub print_ir_after: Vec<String>,
    #[arg(long = "mlir-print-ir-before-all")]
    pub print_ir_before_all: bool,
    #[arg(long = "mlir-print-ir-after-all")]
    pub print_ir_after_all: bool,
    /// With an after-printer: print only when the pass changed the IR.
    #[arg(long = "mlir-print-ir-after-change")]
    pub print_ir_after_change: bool,
    /// Print IR after a pass that failed.
    #[arg(long = "mlir-print-ir-after-failure")]
    pub print_ir_after_failure: bool,
    /// Print the whole module instead of the op a pass ran on (disables threading).
    #[arg(long = "mlir-print-ir-module-scope")]
    pub print_ir_module_scope: bool,
    /// Write printed IR into a directory tree mirroring the pass nesting instead of stderr.
    #[arg(long = "mlir-print-ir-tree-dir")]
    pub print_ir_tree_dir: Option<PathBuf>,
    /// Report wall time per pass.
    #[arg(long = "mlir-timing")]
    pub timing: bool,
    /// `tree` (following the pipeline's nesting; mlir-opt's default) or `list` (per pass name).
    #[arg(long = "mlir-timing-display", default_value = "tree", value_parser = ["list", "tree"])]
    pub timing_display: String,
    /// Report our passes' statistics.
    #[arg(long = "mlir-pass-statistics")]
    pub pass_statistics: bool,
    /// Split the input into chunks at `// -----` (or the given marker) and process each alone.
    #[arg(long = "split-input-file", num_args = 0..=1, default_missing_value = DEFAULT_SPLIT_MARKER, require_equals = true)]
    pub split_input_file: Option<String>,
    /// Check diagnostics against `expected-*` comments (`all` or `only-expected`).
    #[arg(long = "verify-diagnostics", num_args = 0..=1, default_missing_value = "all", require_equals = true, value_parser = ["all", "only-expected"])]
    pub verify_diagnostics: Option<String>,
    /// Run the verifier after each pass.
    #[arg(long = "verify-each", default_value_t = true, num_args = 0..=1, default_missing_value = "true", require_equals = true, action = clap::ArgAction::Set, value_parser = clap::builder::BoolishValueParser::new())]
    pub verify_each: bool,
    /// Print ops in the generic form.
    #[arg(long = "mlir-print-op-generic")]
    pub print_op_generic: bool,
    /// Print locations.
    #[arg(long = "mlir-print-debuginfo")]
    pub print_debuginfo: bool,
    /// Elide elements attributes with more elements than this.
    #[arg(long = "mlir-elide-elementsattrs-if-larger")]
    pub elide_elementsattrs_if_larger: Option<usize>,
    /// Accept ops of dialects that are not registered.
    #[arg(long = "allow-unregistered-dialect")]
    pub allow_unregistered_dialect: bool,
    /// Load more dialects from IRDL files.
    #[arg(long = "irdl-file")]
    pub irdl_file: Vec<String>,
    /// Write MLIR bytecode instead of text.
    #[arg(long = "emit-bytecode")]
    pub emit_bytecode: bool,
    /// On failure, write a reproducer (the input IR and the pipeline) to this file.
    #[arg(long = "mlir-pass-pipeline-crash-reproducer")]
    pub crash_reproducer: Option<PathBuf>,
    /// Run the pipeline recorded in the input reproducer.
    #[arg(long = "run-reproducer")]
    pub run_reproducer: bool,
    /// Disable multi-threading in MLIR.
    #[arg(long = "mlir-disable-threading")]
    pub disable_threading: bool,
    /// Log format: `text` or `json` (levels through RUST_LOG).
    #[arg(long = "log-format", default_value = "text", value_parser = ["text", "json"])]
    pub log_format: String,
}

/// mlir-opt accepts `-flag`; clap wants `--flag`. Single-dash long options are rewritten: a known
/// long name always (so `-pass-pipeline=...` is not `-p ass-pipeline=...`), any other word too
/// unless it is `-o`/`-p` with its value attached (`-oout.mlir`).
pub fn normalize_arguments(arguments: impl IntoIterator<Item = String>) -> Vec<String> {
    use clap::CommandFactory;
    let command = OptArgs::command();
    let long_names: std::collections::BTreeSet<&str> = command
        .get_arguments()
        .filter_map(|argument| argument.get_long())
        .chain(["help", "version"])
        .collect();
    arguments
        .into_iter()
        .enumerate()
        .map(|(index, argument)| {
            let Some(word) = argument
                .strip_prefix('-')
                .filter(|word| index > 0 && !word.starts_with('-'))
            else {
                return argument;
            };
            let name = word.split('=').next().unwrap_or(word);
            let is_long = long_names.contains(name)
                || (word.len() > 1
                    && word.as_bytes()[0].is_ascii_alphabetic()
                    && !word.starts_with('o')
                    && !word.starts_with('p'));
            if is_long {
                format!("-{argument}")
            } else {
                argument
            }
        })
        .collect()
}

/// A failure of the whole run, already reported.
#[derive(Debug)]
pub struct Failed;

fn error(message: impl AsRef<str>) -> Failed {
    eprintln!("ipu-opt: error: {}", message.as_ref());
    Failed
}

/// What a reproducer file records besides the IR.
const REPRODUCER_KEY: &str = "mlir_reproducer";

/// Runs ipu-opt. Returns the process exit code.
pub fn run(args: OptArgs) -> i32 {
    match run_inner(args) {
        Ok(()) => 0,
        Err(Failed) => 1,
    }
}

fn run_inner(mut args: OptArgs) -> Result<(), Failed> {
    ipu_passes::register_upstream_passes();
    let registry = Registry::with_builtin();
    if args.list_passes {
        print!("{}", list_passes(&registry));
        return Ok(());
    }
    check_printed_pass_names(&args, &registry)?;
    let (file_name, mut buffer, bytecode) = read_input(&args.input)?;
    // MLIR parses bytecode only from a file; standard input goes through a private one.
    let stdin_bytecode = match (&bytecode, args.input.as_str()) {
        (Some(bytes), "-") => Some(TemporaryFile::write(bytes)?),
        _ => None,
    };
    if args.run_reproducer {
        let (ir, pipeline) = extract_reproducer(&buffer).ok_or_else(|| {
            error(format!("{file_name}: --run-reproducer needs a reproducer file with an `{REPRODUCER_KEY}` resource (written by --mlir-pass-pipeline-crash-reproducer)"))
        })?;
        // Replay with the recorded settings, as mlir-opt does.
        let resources = &buffer[ir.len()..];
        if let Some(value) = reproducer_flag(resources, "disable_threading") {
            args.disable_threading = value;
        }
        if let Some(value) = reproducer_flag(resources, "verify_each") {
            args.verify_each = value;
        }
        tracing::info!(
            pipeline = %pipeline,
            disable_threading = args.disable_threading,
            verify_each = args.verify_each,
            "replaying reproducer"
        );
        buffer = ir;
        args.pass_pipeline = Some(pipeline);
    }
    let pipeline_text = args.pass_pipeline.clone().unwrap_or_default();
    let pipeline = if pipeline_text.trim().is_empty() {
        None
    } else {
        Some(parse_pipeline(&pipeline_text).map_err(|e| pipeline_error(&pipeline_text, &e))?)
    };

    let chunks = match &args.split_input_file {
        Some(marker) if bytecode.is_none() => {
            for near_miss in crate::split_input::split_marker_near_misses(&buffer, marker) {
                eprintln!("{}", near_miss.render(&file_name));
            }
            split_input(&buffer, marker)
        }
        _ => vec![Chunk::whole(&buffer)],
    };
    let verify_mode = match args.verify_diagnostics.as_deref() {
        None => None,
        Some("only-expected") => Some(VerifyMode::OnlyExpected),
        Some(_) => Some(VerifyMode::All),
    };
    let mut outputs = Vec::new();
    let mut verify_results = Vec::new();
    let mut failed = false;
    for chunk in &chunks {
        let whole = chunks.len() == 1;
        let direct = match &stdin_bytecode {
            Some(file) => Some(file.path_text()),
            None => {
                (whole && args.input != "-" && !args.run_reproducer).then(|| args.input.clone())
            }
        };
        let mut outcome = process_chunk(
            &args,
            &registry,
            pipeline.as_ref(),
            &pipeline_text,
            &file_name,
            chunk,
            direct.as_deref(),
        )?;
        match verify_mode {
            Some(mode) => {
                // mlir-opt turns off MLIR's "see current operation" notes under
                // -verify-diagnostics; the C API cannot, so they are dropped here.
                outcome.diagnostics.retain(|diagnostic| {
                    !(diagnostic.severity == Severity::Note
                        && diagnostic.message.starts_with("see current operation:"))
                });
                verify_results.push(verify_with_mode(
                    chunk,
                    &file_name,
                    &outcome.diagnostics,
                    mode,
                ))
            }
            None => {
                // A note at its error's own location does not repeat the source line (mlir-opt).
                let mut parent = None;
                for diagnostic in &outcome.diagnostics {
                    let location = (&diagnostic.file, diagnostic.line, diagnostic.column);
                    let repeats = diagnostic.severity == Severity::Note && parent == Some(location);
                    if diagnostic.severity != Severity::Note {
                        parent = Some(location);
                    }
                    let text = if repeats {
                        render(diagnostic)
                    } else {
                        render_with_source(diagnostic, &file_name, &buffer)
                    };
                    eprintln!("{text}");
                }
            }
        }
        failed |= outcome.output.is_none();
        outputs.push(outcome.output.unwrap_or_default());
    }
    if verify_mode.is_some() {
        if let Err(failure) = combine_chunk_results(verify_results) {
            eprintln!("{failure}");
            return Err(Failed);
        }
        // Under -verify-diagnostics a failing chunk is expected; its output is not printed.
        return Ok(());
    }
    if failed {
        return Err(Failed);
    }
    if args.emit_bytecode {
        let bytes: Vec<u8> = outputs.concat();
        return write_output(&args.output, &args.input, &bytes);
    }
    if let [output] = outputs.as_slice() {
        // One chunk: write the printed bytes as they are (no copies of a possibly large module).
        return write_output(&args.output, &args.input, output);
    }
    let texts: Vec<String> = outputs
        .iter()
        .map(|bytes| String::from_utf8_lossy(bytes).into_owned())
        .collect();
    let marker = args
        .split_input_file
        .as_deref()
        .unwrap_or(DEFAULT_SPLIT_MARKER);
    let text = if chunks.len() > 1 {
        join_outputs(&texts, marker)
    } else {
        texts.concat()
    };
    write_output(&args.output, &args.input, text.as_bytes())
}

struct ChunkOutcome {
    /// Printed output, or None if the chunk failed.
    output: Option<Vec<u8>>,
    diagnostics: Vec<Diagnostic>,
}

fn process_chunk(
    args: &OptArgs,
    registry: &Registry,
    pipeline: Option<&ipu_passes::pipeline::Pipeline>,
    pipeline_text: &str,
    file_name: &str,
    chunk: &Chunk,
    direct: Option<&str>,
) -> Result<ChunkOutcome, Failed> {
    // Module-scope printing from several threads aborts MLIR; so does a reproducer run that
    // asked for a single thread. Keep one thread in those cases.
    let threading = !(args.disable_threading || args.print_ir_module_scope);
    let context = ipu_dialects::create_context(threading).map_err(|e| error(e.to_string()))?;
    context.set_allow_unregistered_dialects(args.allow_unregistered_dialect);
    for path in &args.irdl_file {
        load_extra_irdl(&context, path)?;
    }
    let collector = Collector::attach(&context);
    let failed = |collector: &Collector| ChunkOutcome {
        output: None,
        diagnostics: collector.take(),
    };

    let source = chunk.source_with_original_lines();
    collector.set_file_name(file_name);
    // MLIR's parser stops at a NUL byte and drops the rest of the text: refuse it, at its place.
    if let Some((line, column)) = ipu_dialects::context::nul_byte(&source) {
        ipu_dialects::diagnostics::error_at(
            melior::ir::Location::new(&context, file_name, line, column),
            "input contains a NUL byte",
        );
        return Ok(failed(&collector));
    }
    let Some(module) = parse_module(&context, &source, direct, file_name, &collector) else {
        if !collector.has_errors() {
            ipu_dialects::diagnostics::error_at(
                melior::ir::Location::new(&context, file_name, chunk.start_line as usize, 1),
                "input is not a valid MLIR module",
            );
        }
        return Ok(failed(&collector));
    };
    if !ipu_dialects::ipu::verify::verify_module(module.as_operation()) {
        return Ok(failed(&collector));
    }
    // As in mlir-opt, -after-failure means "after a pass only if it failed": it silences the
    // after-dumps of passes that succeed.
    let after_on_success = !args.print_ir_after_failure;
    let print = PrintAround {
        before: args.print_ir_before.iter().cloned().collect(),
        after: if after_on_success {
            args.print_ir_after.iter().cloned().collect()
        } else {
            Default::default()
        },
        before_all: args.print_ir_before_all,
        after_all: args.print_ir_after_all && after_on_success,
        tree_dir: args.print_ir_tree_dir.clone(),
        only_on_change: args.print_ir_after_change,
        module_scope: args.print_ir_module_scope,
        generic: args.print_op_generic,
        debug_info: args.print_debuginfo,
        elide_elements_larger_than: args.elide_elementsattrs_if_larger,
    };
    let mut module = module;
    if pipeline.is_none() && args.dump_pass_pipeline {
        let root = module
            .as_operation()
            .name()
            .as_string_ref()
            .as_str()
            .unwrap_or("builtin.module")
            .to_string();
        eprintln!("Pass Manager with 0 passes:\n{root}()\n");
    }
    if let Some(pipeline) = pipeline {
        let root = module
            .as_operation()
            .name()
            .as_string_ref()
            .as_str()
            .unwrap_or("builtin.module")
            .to_string();
        let built = build_pass_manager(&context, registry, pipeline, &root, &print, args.timing)
            .map_err(|e| pipeline_error(pipeline_text, &e))?;
        if args.dump_pass_pipeline {
            eprintln!(
                "Pass Manager with {} passes:",
                count_passes(&built.resolved)
            );
            eprintln!("{}\n", print_resolved(&built.root, &built.resolved));
        }
        built.manager.enable_verifier(args.verify_each);
        enable_mlir_printing(&built.manager, args, &print);
        let input_text = args
            .crash_reproducer
            .as_ref()
            .map(|_| module.as_operation().to_string());
        let started = Instant::now();
        let mut succeeded = built.manager.run(&mut module).is_ok();
        let elapsed = started.elapsed();
        // MLIR's verifier, run after each pass under --verify-each, knows only the IRDL
        // constraints; our semantic checks (shapes, repeat bodies, ...) run on the result.
        if succeeded && args.verify_each {
            succeeded = ipu_dialects::ipu::verify::verify_module(module.as_operation());
        }
        if let Some(timing) = &built.timing {
            eprint!("{}", timing.report(args.timing_display == "tree", elapsed));
        }
        if args.pass_statistics {
            eprint!("{}", statistics_report(&built));
        }
        if !succeeded {
            if let (Some(path), Some(input)) = (&args.crash_reproducer, input_text) {
                write_reproducer(
                    path,
                    &input,
                    &print_resolved(&built.root, &built.resolved),
                    args,
                )?;
            }
            if !collector.has_errors() {
                ipu_dialects::diagnostics::error_at(
                    module.as_operation().location(),
                    "pass pipeline failed",
                );
            }
            return Ok(failed(&collector));
        }
    }
    let output = if args.emit_bytecode {
        module.as_operation().write_bytecode()
    } else {
        let mut text = print_operation(module.as_operation(), &print);
        text.push('\n');
        text.into_bytes()
    };
    Ok(ChunkOutcome {
        output: Some(output),
        diagnostics: collector.take(),
    })
}

fn count_passes(elements: &[ipu_passes::manager::Resolved]) -> usize {
    elements
        .iter()
        .map(|element| match element {
            ipu_passes::manager::Resolved::Nested { elements, .. } => count_passes(elements),
            _ => 1,
        })
        .sum()
}

/// MLIR's own IR printing, used only for `-after-failure` (our printers cannot run after a
/// failed pass). MLIR prints on failure only where its after-filter says yes, so it is set too.
fn enable_mlir_printing(manager: &melior::pass::PassManager, args: &OptArgs, print: &PrintAround) {
    if !args.print_ir_after_failure {
        return;
    }
    let mut flags = melior::ir::operation::OperationPrintingFlags::new();
    if print.generic {
        flags = flags.print_generic_operation_form();
    }
    if print.debug_info {
        flags = flags.enable_debug_info(true, false);
    }
    if let Some(limit) = print.elide_elements_larger_than {
        flags = flags.elide_large_elements_attributes(limit);
    }
    manager.enable_ir_printing(&melior::pass::PassIrPrintingOptions {
        before_all: false,
        after_all: true,
        module_scope: args.print_ir_module_scope,
        on_change: false,
        on_failure: true,
        flags,
        tree_printing_path: args.print_ir_tree_dir.clone().unwrap_or_default(),
    });
}

/// A diagnostic as mlir-opt prints it: `file:line:col: severity: message`, then, when the
/// location is in the input, its source line and a caret under the column.
fn render_with_source(diagnostic: &Diagnostic, file_name: &str, buffer: &str) -> String {
    let mut text = render(diagnostic);
    if let (Some(file), Some(line), Some(column)) =
        (&diagnostic.file, diagnostic.line, diagnostic.column)
    {
        let source = (file == file_name && line > 0)
            .then(|| buffer.lines().nth(line as usize - 1))
            .flatten();
        if let Some(source) = source {
            let indent = source
                .chars()
                .take(column.saturating_sub(1) as usize)
                .count();
            text.push_str(&format!("\n{source}\n{}^", " ".repeat(indent)));
        }
    }
    text
}

/// `--irdl-file`: loads a dialect declared in IRDL. MLIR aborts the process when a dialect is
/// registered twice, so a file declaring a dialect the context already has is refused, except
/// our own ipu declaration (which mlir-opt needs, and a user may pass out of habit): it is
/// built in, so loading it again is a no-op.
fn load_extra_irdl(context: &Context, path: &str) -> Result<(), Failed> {
    let source =
        std::fs::read_to_string(path).map_err(|e| error(format!("IRDL file {path}: {e}")))?;
    if source == ipu_dialects::IRDL_IPU {
        return Ok(());
    }
    let module = ipu_dialects::context::parse_module(context, &source).map_err(|detail| {
        error(format!(
            "IRDL file {path}: not a valid IRDL module: {detail}"
        ))
    })?;
    {
        let body = module.body();
        let mut next = melior::ir::block::BlockLike::first_operation(&body);
        while let Some(op) = next {
            let is_dialect = op.name().as_string_ref().as_str() == Ok("irdl.dialect");
            let name = op
                .attribute("sym_name")
                .ok()
                .map(|name| name.to_string().trim_matches('"').to_string());
            if let (true, Some(name)) = (is_dialect, name) {
                let name_ref = melior::StringRef::new(&name);
                // SAFETY: the context is live; a null dialect means none is registered by that name.
                let existing = unsafe {
                    mlir_sys::mlirContextGetOrLoadDialect(context.to_raw(), name_ref.to_raw())
                };
                if !existing.ptr.is_null() {
                    return Err(error(format!(
                        "IRDL file {path} declares dialect '{name}', which is already loaded (built in, or declared by an earlier --irdl-file)"
                    )));
                }
            }
            next = op.next_in_block();
        }
    }
    ipu_dialects::context::load_irdl_file(context, path).map_err(|e| error(e.to_string()))
}

/// Parses with a source name so diagnostics carry `file:line:col`. MLIR's C API parses a
/// buffer with a name only as a single operation, so text that is not the whole input file goes
/// through a private temporary file whose name the diagnostic collector maps back.
fn parse_module<'c>(
    context: &'c Context,
    source: &str,
    direct_path: Option<&str>,
    file_name: &str,
    collector: &Collector,
) -> Option<Module<'c>> {
    let (path, temporary) = match direct_path {
        Some(path) => (path.to_string(), None),
        None => {
            let directory = std::env::temp_dir().join(format!("ipu-opt-{}", std::process::id()));
            std::fs::create_dir_all(&directory).ok()?;
            let path = directory.join(format!(
                "chunk-{}.mlir",
                TEMP_COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            ));
            std::fs::write(&path, source).ok()?;
            collector.map_file(&path.display().to_string());
            (path.display().to_string(), Some((directory, path)))
        }
    };
    let name = melior::StringRef::new(&path);
    // SAFETY: the path outlives the call; a null module means the parse failed.
    let raw = unsafe { mlir_sys::mlirModuleCreateParseFromFile(context.to_raw(), name.to_raw()) };
    if let Some((directory, path)) = &temporary {
        let _ = std::fs::remove_file(path);
        let _ = std::fs::remove_dir(directory);
    }
    if raw.ptr.is_null() {
        return None;
    }
    // SAFETY: `raw` is a freshly parsed, owned module.
    let module = unsafe { Module::from_raw(raw) };
    if let Some((_, path)) = &temporary {
        relocate(context, &module, &path.display().to_string(), file_name);
    }
    Some(module)
}

/// Points the locations the parser gave a temporary chunk file back at the input file, so printed
/// `loc(...)`, later diagnostics and reproducers name the file the user wrote (as mlir-opt does).
fn relocate(context: &Context, module: &Module, temporary: &str, file_name: &str) {
    use melior::ir::{
        block::BlockLike, operation::WalkOrder, operation::WalkResult, RegionLike, ValueLike,
    };
    let remap = |location: mlir_sys::MlirLocation| -> Option<mlir_sys::MlirLocation> {
        // SAFETY: `location` is a live location of this context; the getters only read it.
        unsafe {
            if !mlir_sys::mlirLocationIsAFileLineColRange(location) {
                return None;
            }
            let name = mlir_sys::mlirIdentifierStr(
                mlir_sys::mlirLocationFileLineColRangeGetFilename(location),
            );
            let bytes = std::slice::from_raw_parts(name.data as *const u8, name.length);
            if bytes != temporary.as_bytes() {
                return None;
            }
            let line = mlir_sys::mlirLocationFileLineColRangeGetStartLine(location).max(0) as u32;
            let column =
                mlir_sys::mlirLocationFileLineColRangeGetStartColumn(location).max(0) as u32;
            let file = melior::StringRef::new(file_name);
            Some(mlir_sys::mlirLocationFileLineColGet(
                context.to_raw(),
                file.to_raw(),
                line,
                column,
            ))
        }
    };
    module.as_operation().walk(WalkOrder::PreOrder, |op| {
        if let Some(location) = remap(op.location().to_raw()) {
            // SAFETY: the op is live for the walk; MLIR uniques the new location in the context.
            unsafe { mlir_sys::mlirOperationSetLocation(op.to_raw(), location) };
        }
        for region in op.regions() {
            let mut block = region.first_block();
            while let Some(current) = block {
                for index in 0..current.argument_count() {
                    if let Ok(argument) = current.argument(index) {
                        // SAFETY: block arguments of a live block; only their location changes.
                        let location = unsafe { mlir_sys::mlirValueGetLocation(argument.to_raw()) };
                        if let Some(location) = remap(location) {
                            unsafe {
                                mlir_sys::mlirBlockArgumentSetLocation(argument.to_raw(), location)
                            };
                        }
                    }
                }
                block = current.next_in_region();
            }
        }
        WalkResult::Advance
    });
}

static TEMP_COUNTER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The magic number that starts MLIR bytecode.
const BYTECODE_MAGIC: &[u8] = b"ML\xefR";

/// Reads the input: its name for diagnostics, its text, and its bytes instead when it is MLIR
/// bytecode (which mlir-opt accepts wherever it accepts text).
fn read_input(path: &str) -> Result<(String, String, Option<Vec<u8>>), Failed> {
    let (name, bytes) = if path == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| error(format!("cannot read standard input: {e}")))?;
        ("<stdin>".to_string(), bytes)
    } else {
        let bytes = std::fs::read(path)
            .map_err(|e| error(format!("cannot open input file '{path}': {e}")))?;
        (path.to_string(), bytes)
    };
    if bytes.starts_with(BYTECODE_MAGIC) {
        return Ok((name, String::new(), Some(bytes)));
    }
    let buffer = String::from_utf8(bytes).map_err(|e| {
        error(format!(
            "input '{name}' is neither UTF-8 text nor MLIR bytecode (first bad byte at offset {})",
            e.utf8_error().valid_up_to()
        ))
    })?;
    Ok((name, buffer, None))
}

/// A private temporary file, removed when dropped.
struct TemporaryFile(PathBuf);

impl TemporaryFile {
    fn write(bytes: &[u8]) -> Result<TemporaryFile, Failed> {
        let path =
            std::env::temp_dir().join(format!("ipu-opt-{}-stdin.mlirbc", std::process::id()));
        std::fs::write(&path, bytes)
            .map_err(|e| error(format!("cannot write '{}': {e}", path.display())))?;
        Ok(TemporaryFile(path))
    }

    fn path_text(&self) -> String {
        self.0.display().to_string()
    }
}

impl Drop for TemporaryFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Writes by the tools' one output rule ([`ipu_runtime::output`]): never the input file, a
/// device node or FIFO (`-o /dev/null`) written in place, a regular file atomically.
fn write_output(output: &str, input: &str, bytes: &[u8]) -> Result<(), Failed> {
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

fn pipeline_error(text: &str, error_value: &PipelineError) -> Failed {
    eprintln!(
        "ipu-opt: invalid pass pipeline:\n{}",
        error_value.render(text)
    );
    Failed
}

fn write_reproducer(
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
    eprintln!("ipu-opt: wrote a reproducer to {}", path.display());
    Ok(())
}

/// `--mlir-print-ir-before/after=` name passes by argument. A name that is no pass would
/// silently print nothing (and a test checking for no dump could never fail), so it is an error,
/// as in mlir-opt. Upstream names are checked against MLIR's own pass registry.
fn check_printed_pass_names(args: &OptArgs, registry: &Registry) -> Result<(), Failed> {
    let flags = [
        ("--mlir-print-ir-before", &args.print_ir_before),
        ("--mlir-print-ir-after", &args.print_ir_after),
    ];
    for (flag, names) in flags {
        for name in names {
            if registry.pass(name).is_some() {
                continue;
            }
            if registry.pipeline(name).is_some() {
                return Err(error(format!(
                    "{flag}: '{name}' is a pass pipeline, not a pass; name one of the passes it expands to (see --dump-pass-pipeline)"
                )));
            }
            let context = Context::new();
            let manager = melior::pass::PassManager::new(&context);
            let source = format!("builtin.module({name})");
            if !name.is_empty()
                && name.chars().all(|character| {
                    character.is_ascii_alphanumeric() || character == '-' || character == '_'
                })
                && melior::utility::parse_pass_pipeline(
                    manager.as_operation_pass_manager(),
                    &source,
                )
                .is_ok()
            {
                continue;
            }
            let hint = ipu_passes::pipeline::suggest(name, registry.known_names())
                .map(|candidate| format!("; did you mean '{candidate}'?"))
                .unwrap_or_default();
            return Err(error(format!("{flag}: unknown pass '{name}'{hint}")));
        }
    }
    Ok(())
}

/// A `key: true|false` entry of a reproducer's resource block.
fn reproducer_flag(resources: &str, key: &str) -> Option<bool> {
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
    text.push_str(
        "Upstream MLIR passes (canonicalize, cse, symbol-dce, ...) are accepted in any pipeline.\n",
    );
    text
}

fn statistics_report(built: &ipu_passes::manager::BuiltPipeline) -> String {
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

/// Severity re-export for tests.
pub fn is_error(diagnostic: &Diagnostic) -> bool {
    diagnostic.severity == Severity::Error
}
