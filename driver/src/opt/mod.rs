//! `ipu-opt`: mlir-opt's conventions over MLIR 22 with our dialects and passes.

use std::io::Write;
use std::path::PathBuf;

use clap::Parser;
use ipu_passes::{
    manager::{
        build_pass_manager, print_operation, print_resolved, print_resolved_inline, PrintAround,
    },
    mlir_cxx::Timing,
    pipeline::{parse_pipeline, Element, Pipeline, PipelineError, Spanned},
    Registry,
};

pub mod command_line;
mod input;
mod output;
pub use command_line::{CommandLine, CommandLineError, PassFlag};
use input::{
    load_extra_irdl, op_ref, parse_module, read_input, too_deep, Parsing, TemporaryFile,
    MAX_NESTING,
};
use melior::{ir::operation::OperationLike, Context};
pub use output::{extract_reproducer, list_passes};
use output::{
    join_chunk_outputs, reproducer_flag, statistics_report, write_bytecode, write_output,
    write_reproducer, REPRODUCER_KEY,
};

use crate::diagnostics::{render, Collector};
use crate::split_input::{split_input, Chunk, DEFAULT_SPLIT_MARKER};
use crate::verify_diagnostics::{
    combine_chunk_results, verify_with_mode, Diagnostic, Severity, VerifyMode,
};

/// Command-line options of `ipu-opt` (mlir-opt's names, read as mlir-opt reads them: see
/// [`command_line`]; every registered pass and pipeline is a flag too).
#[derive(Parser, Debug, Clone, Default)]
#[command(
    name = "ipu-opt",
    about = "MLIR modular optimizer driver with the ipu dialects and passes",
    disable_help_flag = true,
    disable_version_flag = true
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
    /// Display execution times (MLIR's timing manager: Parser, passes, analyses, Output, Rest).
    #[arg(long = "mlir-timing")]
    pub timing: bool,
    /// `tree` (following the pipeline's nesting; mlir-opt's default) or `list` (per pass name).
    #[arg(long = "mlir-timing-display", default_value = "tree", value_parser = ["list", "tree"])]
    pub timing_display: String,
    /// Output format for timing data: `text` or `json`.
    #[arg(long = "mlir-output-format", default_value = "text", value_parser = ["text", "json"])]
    pub timing_output_format: String,
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
    /// Print locations in their pretty form.
    #[arg(long = "mlir-pretty-debuginfo")]
    pub pretty_debuginfo: bool,
    /// Print with local scope and inline information (no aliases, full locations).
    #[arg(long = "mlir-print-local-scope")]
    pub print_local_scope: bool,
    /// Print users of results and block arguments as comments.
    #[arg(long = "mlir-print-value-users")]
    pub print_value_users: bool,
    /// Print SSA names unique across regions.
    #[arg(long = "mlir-print-unique-ssa-ids")]
    pub print_unique_ssa_ids: bool,
    /// Print dense elements attributes with more elements than this as hex strings.
    #[arg(long = "mlir-print-elementsattrs-with-hex-if-larger")]
    pub print_elementsattrs_with_hex_if_larger: Option<i64>,
    /// Print without verifying the op first (may crash on invalid IR).
    #[arg(long = "mlir-print-assume-verified")]
    pub print_assume_verified: bool,
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
    /// The bytecode version to write (with --emit-bytecode).
    #[arg(long = "emit-bytecode-version")]
    pub emit_bytecode_version: Option<i64>,
    /// Print the registered dialects and exit.
    #[arg(long = "show-dialects")]
    pub show_dialects: bool,
    /// Do not verify the input after parsing (as mlir-opt's flag: invalid IR goes on to passes).
    #[arg(long = "mlir-very-unsafe-disable-verifier-on-parsing")]
    pub disable_verifier_on_parsing: bool,
    /// Parse the input's single top-level op as it is, without wrapping it in a module.
    #[arg(long = "no-implicit-module")]
    pub no_implicit_module: bool,
    /// The marker written between the outputs of split input chunks.
    #[arg(long = "output-split-marker", default_value = DEFAULT_SPLIT_MARKER)]
    pub output_split_marker: String,
    /// On failure, write a reproducer (the input IR and the pipeline) to this file.
    #[arg(long = "mlir-pass-pipeline-crash-reproducer")]
    pub crash_reproducer: Option<PathBuf>,
    /// Accepted for mlir-opt's command lines; the reproducer always records the whole pipeline
    /// from its start (which reproduces a local failure too).
    #[arg(long = "mlir-pass-pipeline-local-reproducer")]
    pub local_reproducer: bool,
    /// Write a reproducer (the input IR and the pipeline) to this file before running.
    #[arg(long = "mlir-generate-reproducer")]
    pub generate_reproducer: Option<PathBuf>,
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

/// A failure of the whole run, already reported.
#[derive(Debug)]
pub struct Failed;

fn error(message: impl AsRef<str>) -> Failed {
    eprintln!("ipu-opt: error: {}", message.as_ref());
    Failed
}

/// An error MLIR's driver reports at no location (`<unknown>:0: error: ...`), worded as
/// mlir-opt words it.
fn unlocated_error(message: impl AsRef<str>) -> Failed {
    eprintln!("<unknown>:0: error: {}", message.as_ref());
    Failed
}

/// Reads the command line and runs ipu-opt. Returns the process exit code: 0 on success, 1 on
/// any failure, command-line errors included (as mlir-opt).
pub fn main_with_arguments(arguments: Vec<String>) -> i32 {
    ipu_passes::register_upstream_passes();
    let registry = Registry::with_builtin();
    let line = match command_line::parse(arguments, &registry) {
        Ok(line) => line,
        Err(CommandLineError(message)) => {
            eprintln!("ipu-opt: {message}");
            return 1;
        }
    };
    if let Some(text) = &line.print_and_exit {
        print!("{text}");
        return 0;
    }
    crate::logging::init(&line.args.log_format);
    run_line(line, &registry)
}

/// Runs ipu-opt with options and no pass flags. Returns the process exit code.
pub fn run(args: OptArgs) -> i32 {
    ipu_passes::register_upstream_passes();
    let registry = Registry::with_builtin();
    run_line(
        CommandLine {
            args,
            pass_flags: Vec::new(),
            print_and_exit: None,
        },
        &registry,
    )
}

fn run_line(line: CommandLine, registry: &Registry) -> i32 {
    let timing = line.args.timing.then(|| {
        Timing::new(
            line.args.timing_display == "tree",
            line.args.timing_output_format == "json",
        )
    });
    let result = run_inner(line.args, &line.pass_flags, registry, timing.as_ref());
    drop(timing);
    match result {
        Ok(()) => 0,
        Err(Failed) => 1,
    }
}

/// Where the pipeline comes from: `--pass-pipeline` text, or pass flags nested under the root.
enum PipelineSource {
    None,
    Text(String, Pipeline),
    Flags(Vec<PassFlag>),
}

impl PipelineSource {
    /// The pipeline to run on a chunk whose top-level op is `root`.
    fn for_root(&self, root: &str) -> Option<Pipeline> {
        match self {
            PipelineSource::None => None,
            PipelineSource::Text(_, pipeline) => Some(pipeline.clone()),
            PipelineSource::Flags(flags) => Some(Pipeline {
                anchor: Some(Spanned::unspanned(root.to_string())),
                elements: flags
                    .iter()
                    .map(|flag| match &flag.anchor {
                        Some(anchor) if anchor != root => Element::Nested {
                            anchor: Spanned::unspanned(anchor.clone()),
                            elements: vec![flag.element.clone()],
                            span: Default::default(),
                        },
                        _ => flag.element.clone(),
                    })
                    .collect(),
            }),
        }
    }

    fn text(&self) -> &str {
        match self {
            PipelineSource::Text(text, _) => text,
            _ => "",
        }
    }
}

fn pipeline_source(args: &OptArgs, pass_flags: &[PassFlag]) -> Result<PipelineSource, Failed> {
    match (&args.pass_pipeline, pass_flags.is_empty()) {
        (Some(_), false) => Err(unlocated_error(
            "'-pass-pipeline' option can't be used with individual pass options",
        )),
        (None, true) => Ok(PipelineSource::None),
        (None, false) => Ok(PipelineSource::Flags(pass_flags.to_vec())),
        (Some(text), true) => {
            let pipeline = parse_pipeline(text).map_err(|e| {
                // mlir-opt's words for the same mistake first, then ours with the caret.
                if let Some(message) = ipu_passes::mlir_cxx::mlir_pipeline_error(text) {
                    eprintln!("<unknown>:0: error: {message}");
                }
                pipeline_error(text, &e)
            })?;
            if pipeline.anchor.is_none() {
                return Err(unlocated_error(
                    "expected pass pipeline to be wrapped with the anchor operation type, e.g. 'builtin.module(...)'",
                ));
            }
            Ok(PipelineSource::Text(text.clone(), pipeline))
        }
    }
}

fn run_inner(
    mut args: OptArgs,
    pass_flags: &[PassFlag],
    registry: &Registry,
    timing: Option<&Timing>,
) -> Result<(), Failed> {
    if args.list_passes {
        print!("{}", list_passes(registry));
        println!(
            "Upstream MLIR passes and pipelines (registered, usable as flags and in pipelines):"
        );
        let _ = std::io::stdout().flush();
        ipu_passes::mlir_cxx::print_registered_passes();
        return Ok(());
    }
    if args.show_dialects {
        println!("{}", show_dialects(&args)?);
        return Ok(());
    }
    check_printed_pass_names(&args, registry)?;
    if args.print_ir_module_scope && !args.disable_threading {
        // mlir-opt refuses the flag with threads whether or not anything prints; its diagnostic
        // ends with a blank line.
        return Err(unlocated_error(
            "IR print for module scope can't be setup on a pass-manager without disabling multi-threading first.\n",
        ));
    }
    let (file_name, mut buffer, bytecode) = read_input(&args.input)?;
    // MLIR parses bytecode only from a file; standard input goes through a private one.
    let stdin_bytecode = match (&bytecode, args.input.as_str()) {
        (Some(bytes), "-") => Some(TemporaryFile::write(bytes)?),
        _ => None,
    };
    let mut pass_flags = pass_flags.to_vec();
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
        pass_flags.clear();
    }
    let source = pipeline_source(&args, &pass_flags)?;

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
            registry,
            &source,
            &file_name,
            chunk,
            direct.as_deref(),
            timing,
        )?;
        if chunk.index > 0 {
            // A location at line 0 of a chunk (MLIR's "the whole source" location) is, as in
            // mlir-opt, the place the chunk starts: right after its split marker.
            for diagnostic in &mut outcome.diagnostics {
                if diagnostic.file.as_deref() == Some(file_name.as_str())
                    && diagnostic.line == Some(0)
                {
                    diagnostic.line = Some(chunk.start_line);
                    diagnostic.column = Some(chunk.start_column);
                }
            }
        }
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
            None => print_diagnostics(&outcome.diagnostics, &file_name, &buffer),
        }
        failed |= outcome.output.is_none();
        outputs.push(outcome.output.unwrap_or_default());
    }
    let output = {
        let _output_timing = timing.map(|timing| timing.scope("Output"));
        join_chunk_outputs(&args, outputs, chunks.len())
    };
    if verify_mode.is_some() {
        // As mlir-opt: what the chunks that succeeded printed is written, and the verdict is
        // the diagnostics' (a failing chunk is expected to fail).
        let verdict = combine_chunk_results(verify_results);
        write_output(&args.output, &args.input, &output)?;
        if let Err(failure) = verdict {
            eprintln!("{failure}");
            return Err(Failed);
        }
        return Ok(());
    }
    if failed {
        // Every chunk's output still goes to standard output (mlir-opt prints as it goes); an
        // output file is not written, so a failed run leaves no partial file behind.
        if args.output == "-" {
            write_output(&args.output, &args.input, &output)?;
        }
        return Err(Failed);
    }
    write_output(&args.output, &args.input, &output)
}

fn print_diagnostics(diagnostics: &[Diagnostic], file_name: &str, buffer: &str) {
    // A note at its error's own location does not repeat the source line (mlir-opt).
    let mut parent = None;
    for diagnostic in diagnostics {
        let location = (&diagnostic.file, diagnostic.line, diagnostic.column);
        let repeats = diagnostic.severity == Severity::Note && parent == Some(location);
        if diagnostic.severity != Severity::Note {
            parent = Some(location);
        }
        let text = if repeats {
            render(diagnostic)
        } else {
            render_with_source(diagnostic, file_name, buffer)
        };
        eprintln!("{text}");
    }
}

struct ChunkOutcome {
    /// Printed output, or None if the chunk failed.
    output: Option<Vec<u8>>,
    diagnostics: Vec<Diagnostic>,
}

fn print_settings(args: &OptArgs) -> PrintAround {
    PrintAround {
        before: args.print_ir_before.iter().cloned().collect(),
        after: args.print_ir_after.iter().cloned().collect(),
        before_all: args.print_ir_before_all,
        after_all: args.print_ir_after_all,
        after_failure: args.print_ir_after_failure,
        tree_dir: args.print_ir_tree_dir.clone(),
        only_on_change: args.print_ir_after_change,
        module_scope: args.print_ir_module_scope,
        generic: args.print_op_generic,
        debug_info: args.print_debuginfo,
        pretty_debug_info: args.pretty_debuginfo,
        local_scope: args.print_local_scope,
        assume_verified: args.print_assume_verified,
        value_users: args.print_value_users,
        unique_ssa_ids: args.print_unique_ssa_ids,
        elide_elements_larger_than: args.elide_elementsattrs_if_larger,
        hex_elements_larger_than: args.print_elementsattrs_with_hex_if_larger,
    }
}

fn process_chunk(
    args: &OptArgs,
    registry: &Registry,
    source_pipeline: &PipelineSource,
    file_name: &str,
    chunk: &Chunk,
    direct: Option<&str>,
    timing: Option<&Timing>,
) -> Result<ChunkOutcome, Failed> {
    let context =
        ipu_dialects::create_context(!args.disable_threading).map_err(|e| error(e.to_string()))?;
    context.set_allow_unregistered_dialects(args.allow_unregistered_dialect);
    for path in &args.irdl_file {
        load_extra_irdl(&context, path)?;
    }
    let _actions = command_line::action_options_given()
        .then(|| ipu_passes::mlir_cxx::DebugHandler::install(&context));
    let collector = Collector::attach(&context);
    let failed = |collector: &Collector| ChunkOutcome {
        output: None,
        diagnostics: collector.take(),
    };

    let source = chunk.source_with_original_lines();
    collector.set_file_name(file_name);
    let parser_timing = timing.map(|timing| timing.scope("Parser"));
    // MLIR's parser stops at a NUL byte and drops the rest of the text: refuse it, at its place.
    if let Some((line, column)) = ipu_dialects::context::nul_byte(&source) {
        ipu_dialects::diagnostics::error_at(
            melior::ir::Location::new(&context, file_name, line, column),
            "input contains a NUL byte",
        );
        return Ok(failed(&collector));
    }
    if let Some((line, column)) = too_deep(&source) {
        ipu_dialects::diagnostics::error_at(
            melior::ir::Location::new(&context, file_name, line, column),
            &format!("input is nested more than {MAX_NESTING} levels deep here; ipu-opt refuses it (MLIR parses, verifies and prints nested IR recursively, which would overflow the stack)"),
        );
        return Ok(failed(&collector));
    }
    let parsing = Parsing {
        verify: !args.disable_verifier_on_parsing,
        implicit_module: !args.no_implicit_module,
    };
    let Some(root) = parse_module(&context, &source, direct, file_name, &collector, parsing) else {
        if !collector.has_errors() {
            ipu_dialects::diagnostics::error_at(
                melior::ir::Location::new(&context, file_name, chunk.start_line as usize, 1),
                "input is not a valid MLIR module",
            );
        }
        return Ok(failed(&collector));
    };
    if !ipu_dialects::ipu::verify::verify_module(op_ref(&root)) {
        return Ok(failed(&collector));
    }
    drop(parser_timing);
    let print = print_settings(args);
    let root_name = root
        .name()
        .as_string_ref()
        .as_str()
        .unwrap_or("builtin.module")
        .to_string();
    let pipeline = source_pipeline.for_root(&root_name);
    let pipeline_text = source_pipeline.text();
    let built = match &pipeline {
        Some(pipeline) => Some(
            build_pass_manager(&context, registry, pipeline, &root_name, &print, timing).map_err(
                |e| {
                    // An unknown name: mlir-opt's message first, when MLIR's parser stops at
                    // the same problem.
                    if e.message.contains("does not refer to a registered pass") {
                        if let Some(message) = ipu_passes::mlir_cxx::mlir_pipeline_error(
                            pipeline_text,
                        )
                        .filter(|message| message.contains("does not refer to a registered pass"))
                        {
                            eprintln!("<unknown>:0: error: {message}");
                        }
                    }
                    pipeline_error(pipeline_text, &e)
                },
            )?,
        ),
        None => None,
    };
    if args.dump_pass_pipeline {
        let (count, text) = match &built {
            Some(built) => (
                built.resolved.len(),
                print_resolved(&built.root, &built.resolved),
            ),
            None => (0, print_resolved(&root_name, &[])),
        };
        eprintln!("Pass Manager with {count} passes:\n{text}\n");
    }
    if let Some(built) = built {
        if !run_pipeline(args, &built, op_ref(&root), &root_name, &collector)? {
            return Ok(failed(&collector));
        }
    }
    let _output_timing = timing.map(|timing| timing.scope("Output"));
    let output = if args.emit_bytecode {
        write_bytecode(op_ref(&root), args.emit_bytecode_version)
            .map_err(|message| error(format!("{file_name}: {message}")))?
    } else {
        let mut text = print_operation(op_ref(&root), &print);
        text.push('\n');
        text.into_bytes()
    };
    Ok(ChunkOutcome {
        output: Some(output),
        diagnostics: collector.take(),
    })
}

/// `--show-dialects`: every dialect a context of ours knows, as mlir-opt lists them.
fn show_dialects(args: &OptArgs) -> Result<String, Failed> {
    let context = ipu_dialects::create_context(false).map_err(|e| error(e.to_string()))?;
    for path in &args.irdl_file {
        load_extra_irdl(&context, path)?;
    }
    let names = ipu_passes::mlir_cxx::dialect_names(&context);
    Ok(format!("Available Dialects: {}", names.join(",")))
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

fn pipeline_error(text: &str, error_value: &PipelineError) -> Failed {
    eprintln!(
        "ipu-opt: invalid pass pipeline:\n{}",
        error_value.render(text)
    );
    Failed
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

/// Severity re-export for tests.
pub fn is_error(diagnostic: &Diagnostic) -> bool {
    diagnostic.severity == Severity::Error
}

/// Runs a built pipeline on the parsed root (reproducers, verification after each pass,
/// statistics). Returns whether it succeeded; a failure is reported through the diagnostics.
fn run_pipeline(
    args: &OptArgs,
    built: &ipu_passes::manager::BuiltPipeline,
    root: melior::ir::OperationRef,
    root_name: &str,
    collector: &Collector,
) -> Result<bool, Failed> {
    built.manager.enable_verifier(args.verify_each);
    let recorded = print_resolved_inline(&built.root, &built.resolved);
    let input_text = (args.crash_reproducer.is_some() || args.generate_reproducer.is_some())
        .then(|| print_operation(root, &PrintAround::default()));
    if let (Some(path), Some(input)) = (&args.generate_reproducer, &input_text) {
        write_reproducer(path, input, &recorded, args)?;
    }
    // SAFETY: the manager and the root op are live; the run only mutates the op.
    let mut succeeded =
        unsafe { mlir_sys::mlirPassManagerRunOnOp(built.manager.to_raw(), root.to_raw()) }.value
            != 0;
    // MLIR's verifier, run after each pass under --verify-each, knows only the IRDL
    // constraints; our semantic checks (shapes, repeat bodies, ...) run on the result.
    if succeeded && args.verify_each {
        succeeded = ipu_dialects::ipu::verify::verify_module(root);
    }
    if args.pass_statistics {
        eprint!("{}", statistics_report(built));
    }
    if !succeeded {
        if let (Some(path), Some(input)) = (&args.crash_reproducer, input_text) {
            write_reproducer(path, &input, &recorded, args)?;
            // mlir-opt's words, at the top-level op.
            ipu_passes::mlir_cxx::emit_error_with_note(
                root.location(),
                "Failures have been detected while processing an MLIR pass pipeline",
                &format!(
                    "Pipeline failed while executing [`{recorded}` on '{root_name}' operation]: reproducer generated at `{}`",
                    path.display()
                ),
            );
        }
        if !collector.has_errors() {
            ipu_dialects::diagnostics::error_at(root.location(), "pass pipeline failed");
        }
        return Ok(false);
    }
    Ok(true)
}
