//! Building an MLIR pass manager from a parsed pipeline: our passes become external passes,
//! upstream elements are handed to MLIR's own pipeline parser, named pipelines are expanded, and
//! MLIR's own IR printing and timing instrumentation are installed (through the C++ shim,
//! [`crate::mlir_cxx`]), so dumps and reports look exactly as mlir-opt's.

use std::collections::BTreeSet;
use std::ffi::c_void;
use std::sync::Arc;

use melior::{
    ir::OperationRef,
    pass::{OperationPassManager, PassManager},
    Context, StringRef,
};

use crate::mlir_cxx::{enable_ir_printing, IrPrinting, Timing};
use crate::pass::{to_mlir_pass, DynPass, Statistics};
use crate::pipeline::{
    parse_pipeline, unknown_pass_error, Element, Pipeline, PipelineError, Span, ANY_ANCHOR,
};
use crate::registry::Registry;

/// How deep named pipelines may expand into each other before we call it a cycle.
const MAX_EXPANSION_DEPTH: usize = 16;

/// A pipeline element after name resolution.
#[derive(Clone)]
pub enum Resolved {
    /// One of our passes, with its options parsed.
    Ours { pass: Arc<dyn DynPass>, span: Span },
    /// An upstream pass, as text for MLIR's parser.
    Upstream {
        name: String,
        text: String,
        span: Span,
    },
    /// A nested pipeline on an op anchor (or `any`).
    Nested {
        anchor: String,
        elements: Vec<Resolved>,
    },
}

impl Resolved {
    /// The pass argument (None for nested pipelines).
    pub fn argument(&self) -> Option<&str> {
        match self {
            Resolved::Ours { pass, .. } => Some(pass.argument()),
            Resolved::Upstream { name, .. } => Some(name),
            Resolved::Nested { .. } => None,
        }
    }
}

/// Resolves names and options against the registry, expanding named pipelines.
pub fn resolve(registry: &Registry, elements: &[Element]) -> Result<Vec<Resolved>, PipelineError> {
    resolve_at_depth(registry, elements, 0, None)
}

fn resolve_at_depth(
    registry: &Registry,
    elements: &[Element],
    depth: usize,
    blame: Option<Span>,
) -> Result<Vec<Resolved>, PipelineError> {
    let mut resolved = Vec::new();
    for element in elements {
        let span = |own: Span| blame.unwrap_or(own);
        match element {
            Element::Nested {
                anchor, elements, ..
            } => resolved.push(Resolved::Nested {
                anchor: anchor.value.clone(),
                elements: resolve_at_depth(registry, elements, depth, blame)?,
            }),
            Element::Pass {
                name,
                options,
                span: element_span,
            } => {
                if let Some(info) = registry.pass(&name.value) {
                    let pass = (info.create)(options).map_err(|error| match blame {
                        Some(blame) => PipelineError::new(error.message.clone(), blame),
                        None => error,
                    })?;
                    resolved.push(Resolved::Ours {
                        pass,
                        span: span(name.span),
                    });
                } else if let Some(info) = registry.pipeline(&name.value) {
                    if depth >= MAX_EXPANSION_DEPTH {
                        return Err(PipelineError::new(
                            format!("named pipeline '{}' expands more than {MAX_EXPANSION_DEPTH} levels deep (a cycle?)", name.value),
                            span(name.span),
                        ));
                    }
                    let text = (info.expand)(options)?;
                    let expanded = parse_pipeline(&text).map_err(|error| {
                        PipelineError::new(
                            format!(
                                "named pipeline '{}' expanded to an invalid pipeline '{text}': {}",
                                name.value, error.message
                            ),
                            span(name.span),
                        )
                    })?;
                    let inner = resolve_at_depth(
                        registry,
                        &expanded.elements,
                        depth + 1,
                        Some(span(*element_span)),
                    )?;
                    match expanded.anchor {
                        Some(anchor) => resolved.push(Resolved::Nested {
                            anchor: anchor.value,
                            elements: inner,
                        }),
                        None => resolved.extend(inner),
                    }
                } else if name.value.starts_with("ipu-") {
                    // Our namespace: MLIR cannot know it, so say so with our list.
                    return Err(unknown_pass_error(
                        &name.value,
                        span(name.span),
                        registry.known_names(),
                    ));
                } else {
                    resolved.push(Resolved::Upstream {
                        name: name.value.clone(),
                        text: element.to_string(),
                        span: span(name.span),
                    });
                }
            }
        }
    }
    Ok(resolved)
}

/// Where and when IR is printed around passes (mlir-opt's `--mlir-print-ir-*` flags), and the
/// printing flags for op text.
#[derive(Clone, Debug, Default)]
pub struct PrintAround {
    /// Pass arguments to print before / after.
    pub before: BTreeSet<String>,
    pub after: BTreeSet<String>,
    pub before_all: bool,
    pub after_all: bool,
    /// Print after a pass only when it failed (`--mlir-print-ir-after-failure`).
    pub after_failure: bool,
    /// Write each dump into a file under this directory instead of stderr.
    pub tree_dir: Option<std::path::PathBuf>,
    pub only_on_change: bool,
    pub module_scope: bool,
    /// Printing flags for the op text (generic form, debug info, elision).
    pub generic: bool,
    pub debug_info: bool,
    pub pretty_debug_info: bool,
    pub local_scope: bool,
    pub assume_verified: bool,
    pub value_users: bool,
    pub unique_ssa_ids: bool,
    pub elide_elements_larger_than: Option<usize>,
    pub hex_elements_larger_than: Option<i64>,
}

impl PrintAround {
    /// MLIR's printing flags for these settings.
    pub fn flags(&self) -> melior::ir::operation::OperationPrintingFlags {
        let mut flags = melior::ir::operation::OperationPrintingFlags::new();
        if self.generic {
            flags = flags.print_generic_operation_form();
        }
        if self.debug_info || self.pretty_debug_info {
            flags = flags.enable_debug_info(true, self.pretty_debug_info);
        }
        if let Some(limit) = self.elide_elements_larger_than {
            flags = flags.elide_large_elements_attributes(limit);
        }
        if self.local_scope {
            flags = flags.use_local_scope();
        }
        if self.assume_verified {
            // SAFETY: the flags are live; this only sets a field.
            unsafe { mlir_sys::mlirOpPrintingFlagsAssumeVerified(flags.to_raw()) };
        }
        crate::mlir_cxx::set_extra_printing_flags(
            &flags,
            self.value_users,
            self.unique_ssa_ids,
            self.hex_elements_larger_than,
        );
        flags
    }

    fn ir_printing(&self) -> IrPrinting {
        IrPrinting {
            before: self.before.iter().cloned().collect(),
            after: self.after.iter().cloned().collect(),
            before_all: self.before_all,
            after_all: self.after_all,
            module_scope: self.module_scope,
            after_only_on_change: self.only_on_change,
            after_only_on_failure: self.after_failure,
            tree_dir: self.tree_dir.clone(),
        }
    }
}

/// A pass manager ready to run, with the statistics sink of our passes.
pub struct BuiltPipeline<'c> {
    pub manager: PassManager<'c>,
    pub statistics: Statistics,
    /// Our passes in pipeline order (instance index = position), for statistics reports.
    pub instances: Vec<Arc<dyn DynPass>>,
    /// The resolved pipeline, for `--dump-pass-pipeline` and reports.
    pub resolved: Vec<Resolved>,
    pub root: String,
}

/// Builds a pass manager running `pipeline` on an operation named `root` (usually
/// `builtin.module`), with IR printing as `print` asks and, given a timing session, pass timing.
pub fn build_pass_manager<'c>(
    context: &'c Context,
    registry: &Registry,
    pipeline: &Pipeline,
    root: &str,
    print: &PrintAround,
    timing: Option<&Timing>,
) -> Result<BuiltPipeline<'c>, PipelineError> {
    let anchor = pipeline
        .anchor
        .as_ref()
        .map(|anchor| anchor.value.as_str())
        .unwrap_or(root);
    if anchor != root && anchor != ANY_ANCHOR {
        let span = pipeline
            .anchor
            .as_ref()
            .map(|anchor| anchor.span)
            .unwrap_or_default();
        return Err(PipelineError::new(
            format!("can't run '{anchor}' pass manager on '{root}' op"),
            span,
        ));
    }
    let elements = resolve(registry, &pipeline.elements)?;
    let manager = create_manager_on(context, root);
    let mut builder = Builder {
        statistics: Statistics::default(),
        instances: Vec::new(),
    };
    builder.add(&manager.as_operation_pass_manager(), root, &elements)?;
    enable_ir_printing(&manager, &print.ir_printing(), &print.flags());
    if let Some(timing) = timing {
        timing.attach(&manager);
    }
    Ok(BuiltPipeline {
        manager,
        statistics: builder.statistics,
        instances: builder.instances,
        resolved: elements,
        root: root.to_string(),
    })
}

fn create_manager_on<'c>(context: &'c Context, root: &str) -> PassManager<'c> {
    let name = StringRef::new(root);
    // SAFETY: the context outlives the manager ('c); the name is copied by MLIR.
    unsafe {
        PassManager::from_raw(mlir_sys::mlirPassManagerCreateOnOperation(
            context.to_raw(),
            name.to_raw(),
        ))
    }
}

struct Builder {
    statistics: Statistics,
    instances: Vec<Arc<dyn DynPass>>,
}

impl Builder {
    /// Adds `elements` to `manager`, which runs on `anchor` ops.
    fn add(
        &mut self,
        manager: &OperationPassManager,
        anchor: &str,
        elements: &[Resolved],
    ) -> Result<(), PipelineError> {
        // MLIR aborts the process when a pass restricted to one op is added to a manager of
        // another: refuse it here, at the pass, instead (MLIR's own words, as mlir-opt says it).
        for element in elements {
            if let Resolved::Ours { pass, span } = element {
                let runs_on = pass.anchor();
                if !runs_on.is_empty() && runs_on != anchor {
                    return Err(PipelineError::new(
                        format!(
                            "Can't add pass '{}' restricted to '{runs_on}' on a PassManager intended to run on '{anchor}', did you intend to nest? ('{}' runs on '{runs_on}' ops: place it at the '{runs_on}' level of the pipeline)",
                            crate::pass::display_name(pass.argument()),
                            pass.argument()
                        ),
                        *span,
                    ));
                }
            }
        }
        for element in elements {
            match element {
                Resolved::Ours { pass, .. } => {
                    let instance = self.instances.len();
                    self.instances.push(pass.clone());
                    manager.add_pass(to_mlir_pass(
                        pass.clone(),
                        instance,
                        self.statistics.clone(),
                    ));
                }
                Resolved::Upstream { name, text, span } => {
                    add_upstream(manager, name, text, *span)?
                }
                Resolved::Nested { anchor, elements } => {
                    let nested = manager.nested_under(anchor);
                    self.add(&nested, anchor, elements)?;
                }
            }
        }
        Ok(())
    }
}

/// Prints an operation with the driver's printing flags.
pub fn print_operation(op: OperationRef, print: &PrintAround) -> String {
    let flags = print.flags();
    // Collect raw bytes and validate once: melior's `to_string_with_flags` checks UTF-8 and
    // appends per printer chunk (~5% of ipu-opt's run on the 100k-op benchmark, BENCHMARKS.md).
    let mut bytes: Vec<u8> = Vec::new();
    // SAFETY: the op and flags are live for the call; the callback only appends to `bytes`.
    unsafe {
        mlir_sys::mlirOperationPrintWithFlags(
            op.to_raw(),
            flags.to_raw(),
            Some(collect_bytes),
            &mut bytes as *mut Vec<u8> as *mut c_void,
        )
    };
    match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(error) => String::from_utf8_lossy(error.as_bytes()).into_owned(),
    }
}

unsafe extern "C" fn collect_bytes(text: mlir_sys::MlirStringRef, data: *mut c_void) {
    // SAFETY: `data` is the `Vec<u8>` passed by `print_operation`; `text` is valid for the call.
    let sink = unsafe { &mut *(data as *mut Vec<u8>) };
    if text.length > 0 {
        sink.extend_from_slice(unsafe {
            std::slice::from_raw_parts(text.data as *const u8, text.length)
        });
    }
}

unsafe extern "C" fn collect_string(text: mlir_sys::MlirStringRef, data: *mut c_void) {
    // SAFETY: `data` is the `String` passed by `add_upstream`; MLIR hands valid UTF-8 slices.
    let sink = unsafe { &mut *(data as *mut String) };
    let bytes = unsafe { std::slice::from_raw_parts(text.data as *const u8, text.length) };
    sink.push_str(&String::from_utf8_lossy(bytes));
}

fn add_upstream(
    manager: &OperationPassManager,
    name: &str,
    text: &str,
    span: Span,
) -> Result<(), PipelineError> {
    let mut message = String::new();
    let source = StringRef::new(text);
    // SAFETY: the manager is live; the callback only appends to `message` during the call.
    let result = unsafe {
        mlir_sys::mlirOpPassManagerAddPipeline(
            manager.to_raw(),
            source.to_raw(),
            Some(collect_string),
            &mut message as *mut String as *mut c_void,
        )
    };
    if result.value != 0 {
        return Ok(());
    }
    let message = message.trim().to_string();
    if message.contains("does not refer to a registered pass") {
        let registry = Registry::with_builtin();
        return Err(unknown_pass_error(name, span, registry.known_names()));
    }
    Err(PipelineError::new(
        format!("pass '{name}': {message}"),
        span,
    ))
}

/// Prints a resolved pipeline the way `--dump-pass-pipeline` shows it (MLIR's pretty textual
/// form): our passes with every option and its value, upstream passes as MLIR prints them.
pub fn print_resolved(root: &str, elements: &[Resolved]) -> String {
    let mut text = String::new();
    print_nested(&mut text, root, elements, 0);
    text
}

fn print_nested(text: &mut String, anchor: &str, elements: &[Resolved], depth: usize) {
    let indent = "  ".repeat(depth);
    text.push_str(&format!("{anchor}(\n"));
    for (index, element) in elements.iter().enumerate() {
        if index > 0 {
            text.push_str(",\n");
        }
        text.push_str(&"  ".repeat(depth + 1));
        match element {
            Resolved::Ours { pass, .. } => {
                text.push_str(&format!("{}{}", pass.argument(), pass.options_text()))
            }
            Resolved::Upstream { text: source, .. } => text.push_str(
                &crate::mlir_cxx::print_pipeline_element(source).unwrap_or_else(|_| source.clone()),
            ),
            Resolved::Nested { anchor, elements } => {
                print_nested(text, anchor, elements, depth + 1)
            }
        }
    }
    text.push_str(&format!("\n{indent})"));
}

/// The same pipeline on one line, as a reproducer records it.
pub fn print_resolved_inline(root: &str, elements: &[Resolved]) -> String {
    format!("{root}({})", print_elements(elements))
}

fn print_elements(elements: &[Resolved]) -> String {
    let items: Vec<String> = elements
        .iter()
        .map(|element| match element {
            Resolved::Ours { pass, .. } => format!("{}{}", pass.argument(), pass.options_text()),
            Resolved::Upstream { text, .. } => text.clone(),
            Resolved::Nested { anchor, elements } => {
                format!("{anchor}({})", print_elements(elements))
            }
        })
        .collect();
    items.join(",")
}
