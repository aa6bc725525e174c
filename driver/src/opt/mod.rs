//! `ipu-opt`: mlir-opt's conventions over MLIR 22 with our dialects and passes.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

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
pub use command_line::{CommandLine, CommandLineError, PassFlag};
use melior::{ir::operation::OperationLike, Context};

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

/// What a reproducer file records besides the IR.
const REPRODUCER_KEY: &str = "mlir_reproducer";

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

/// The chunks' outputs as mlir-opt writes them: each chunk's printed op, separated by the output
/// split marker and a newline (also around chunks that failed and printed nothing).
fn join_chunk_outputs(args: &OptArgs, outputs: Vec<Vec<u8>>, chunk_count: usize) -> Vec<u8> {
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
        built.manager.enable_verifier(args.verify_each);
        let recorded = print_resolved_inline(&built.root, &built.resolved);
        let input_text = (args.crash_reproducer.is_some() || args.generate_reproducer.is_some())
            .then(|| print_operation(op_ref(&root), &PrintAround::default()));
        if let (Some(path), Some(input)) = (&args.generate_reproducer, &input_text) {
            write_reproducer(path, input, &recorded, args)?;
        }
        // SAFETY: the manager and the root op are live; the run only mutates the op.
        let mut succeeded = unsafe {
            mlir_sys::mlirPassManagerRunOnOp(built.manager.to_raw(), op_ref(&root).to_raw())
        }
        .value
            != 0;
        // MLIR's verifier, run after each pass under --verify-each, knows only the IRDL
        // constraints; our semantic checks (shapes, repeat bodies, ...) run on the result.
        if succeeded && args.verify_each {
            succeeded = ipu_dialects::ipu::verify::verify_module(op_ref(&root));
        }
        if args.pass_statistics {
            eprint!("{}", statistics_report(&built));
        }
        if !succeeded {
            if let (Some(path), Some(input)) = (&args.crash_reproducer, input_text) {
                write_reproducer(path, &input, &recorded, args)?;
                // mlir-opt's words, at the top-level op.
                ipu_passes::mlir_cxx::emit_error_with_note(
                    op_ref(&root).location(),
                    "Failures have been detected while processing an MLIR pass pipeline",
                    &format!(
                        "Pipeline failed while executing [`{recorded}` on '{root_name}' operation]: reproducer generated at `{}`",
                        path.display()
                    ),
                );
            }
            if !collector.has_errors() {
                ipu_dialects::diagnostics::error_at(
                    op_ref(&root).location(),
                    "pass pipeline failed",
                );
            }
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

/// How deeply brackets (`{ ( [ <`) may nest in the input: a region nests two (`({`), so this
/// allows about 500 nested regions. MLIR parses, verifies and prints nested IR recursively; far
/// deeper input overflows the stack and crashes mlir-opt.
const MAX_NESTING: usize = 1000;

/// The position (line, column) of the first bracket nested deeper than [`MAX_NESTING`], outside
/// strings and `//` comments. Scans bytes: brackets, quotes and newlines are ASCII and never
/// part of a multi-byte UTF-8 character.
fn too_deep(source: &str) -> Option<(usize, usize)> {
    let bytes = source.as_bytes();
    let mut depth = 0usize;
    let (mut line, mut line_start) = (1usize, 0usize);
    let mut index = 0usize;
    while index < bytes.len() {
        match bytes[index] {
            b'\n' => {
                line += 1;
                line_start = index + 1;
            }
            b'"' => {
                // Skip the string literal (escapes included); it ends at its line.
                index += 1;
                while index < bytes.len() && bytes[index] != b'"' && bytes[index] != b'\n' {
                    index += if bytes[index] == b'\\' { 2 } else { 1 };
                }
                if index < bytes.len() && bytes[index] == b'\n' {
                    continue;
                }
            }
            b'/' if bytes.get(index + 1) == Some(&b'/') => {
                while index < bytes.len() && bytes[index] != b'\n' {
                    index += 1;
                }
                continue;
            }
            b'{' | b'(' | b'[' | b'<' => {
                depth += 1;
                if depth > MAX_NESTING {
                    let column = source[line_start..=index].chars().count();
                    return Some((line, column));
                }
            }
            // `->` is an arrow, not a closing bracket.
            b'>' if index > 0 && bytes[index - 1] == b'-' => {}
            b'}' | b')' | b']' | b'>' => depth = depth.saturating_sub(1),
            _ => {}
        }
        index += 1;
    }
    None
}

#[cfg(test)]
mod nesting_tests {
    use super::{too_deep, MAX_NESTING};

    #[test]
    fn nesting_is_measured_outside_strings_and_comments() {
        let deep = format!(
            "x = {}1{}",
            "[".repeat(MAX_NESTING + 1),
            "]".repeat(MAX_NESTING + 1)
        );
        assert_eq!(too_deep(&deep), Some((1, 5 + MAX_NESTING)));
        let shallow = format!(
            "x = {}1{}",
            "[".repeat(MAX_NESTING),
            "]".repeat(MAX_NESTING)
        );
        assert_eq!(too_deep(&shallow), None);
        let quoted = format!(
            "s = \"{}\\\"\" // {}\nok",
            "(".repeat(2 * MAX_NESTING),
            "{".repeat(2 * MAX_NESTING)
        );
        assert_eq!(too_deep(&quoted), None);
        let arrows = format!(
            "{}{}",
            "(i32) -> i32 ".repeat(3 * MAX_NESTING),
            "é[".repeat(MAX_NESTING + 1)
        );
        let position = too_deep(&arrows).unwrap();
        assert_eq!(position.0, 1);
        assert_eq!(position.1, 13 * 3 * MAX_NESTING + 2 * (MAX_NESTING + 1));
    }
}

/// `--emit-bytecode[-version=N]`.
fn write_bytecode(op: melior::ir::OperationRef, version: Option<i64>) -> Result<Vec<u8>, String> {
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

unsafe extern "C" fn collect_bytes(text: mlir_sys::MlirStringRef, data: *mut std::ffi::c_void) {
    // SAFETY: `data` is the `Vec<u8>` passed by `write_bytecode`; `text` is valid for the call.
    let sink = unsafe { &mut *(data as *mut Vec<u8>) };
    if text.length > 0 {
        sink.extend_from_slice(unsafe {
            std::slice::from_raw_parts(text.data as *const u8, text.length)
        });
    }
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
    parsing: Parsing,
) -> Option<melior::ir::operation::Operation<'c>> {
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
    let parsed = ipu_passes::mlir_cxx::parse_source_file(
        context,
        &path,
        parsing.verify,
        parsing.implicit_module,
    );
    if let Some((directory, path)) = &temporary {
        let _ = std::fs::remove_file(path);
        let _ = std::fs::remove_dir(directory);
    }
    let op = parsed?;
    if let Some((_, path)) = &temporary {
        relocate(context, op_ref(&op), &path.display().to_string(), file_name);
    }
    Some(op)
}

/// A reference to an op we own.
fn op_ref<'c, 'a>(
    op: &'a melior::ir::operation::Operation<'c>,
) -> melior::ir::OperationRef<'c, 'a> {
    // SAFETY: the op is owned by the caller and outlives the reference.
    unsafe { melior::ir::OperationRef::from_raw(op.to_raw()) }
}

/// How the input is parsed (mlir-opt's --no-implicit-module and
/// --mlir-very-unsafe-disable-verifier-on-parsing).
#[derive(Clone, Copy)]
struct Parsing {
    verify: bool,
    implicit_module: bool,
}

/// Points the locations the parser gave a temporary chunk file back at the input file, so printed
/// `loc(...)`, later diagnostics and reproducers name the file the user wrote (as mlir-opt does).
fn relocate(context: &Context, root: melior::ir::OperationRef, temporary: &str, file_name: &str) {
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
    root.walk(WalkOrder::PreOrder, |op| {
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
