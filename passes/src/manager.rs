//! Building an MLIR pass manager from a parsed pipeline: our passes become external passes,
//! upstream elements are handed to MLIR's own pipeline parser, named pipelines are expanded,
//! and `--mlir-print-ir-before/after=<pass>` inserts IR printers around the chosen passes.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use melior::{
    ir::{operation::OperationLike, r#type::TypeId, OperationRef},
    pass::{create_external, ExternalPass, OperationPassManager, PassManager},
    Context, StringRef,
};

use crate::pass::{display_name, to_mlir_pass, DynPass, Statistics};
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

/// Where and when IR printers go around passes chosen by argument.
#[derive(Clone, Debug, Default)]
pub struct PrintAround {
    pub before: BTreeSet<String>,
    pub after: BTreeSet<String>,
    /// `-before-all` / `-after-all`: printed by these printers too, not by MLIR's
    /// instrumentation, which would also dump our timing markers and printers.
    pub before_all: bool,
    pub after_all: bool,
    /// Write each dump into a file under this directory instead of stderr.
    pub tree_dir: Option<std::path::PathBuf>,
    pub only_on_change: bool,
    pub module_scope: bool,
    /// Printing flags for the op text (generic form, debug info, elision).
    pub generic: bool,
    pub debug_info: bool,
    pub elide_elements_larger_than: Option<usize>,
}

impl PrintAround {
    fn prints_before(&self, argument: &str) -> bool {
        self.before_all || self.before.contains(argument)
    }

    fn prints_after(&self, argument: &str) -> bool {
        self.after_all || self.after.contains(argument)
    }
}

/// A pass manager ready to run, with the statistics sink of our passes.
pub struct BuiltPipeline<'c> {
    pub manager: PassManager<'c>,
    pub statistics: Statistics,
    /// Our passes in pipeline order (instance index = position), for statistics reports.
    pub instances: Vec<Arc<dyn DynPass>>,
    /// Wall time per pipeline element, when timing was requested.
    pub timing: Option<crate::timing::Timing>,
    /// The resolved pipeline, for `--dump-pass-pipeline` and reports.
    pub resolved: Vec<Resolved>,
    pub root: String,
}

/// Builds a pass manager running `pipeline` on an operation named `root` (usually
/// `builtin.module`).
pub fn build_pass_manager<'c>(
    context: &'c Context,
    registry: &Registry,
    pipeline: &Pipeline,
    root: &str,
    print: &PrintAround,
    timed: bool,
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
            format!("pipeline is anchored on '{anchor}' but the input's top-level operation is '{root}'"),
            span,
        ));
    }
    let elements = resolve(registry, &pipeline.elements)?;
    let manager = create_manager_on(context, root);
    let timing = timed.then(|| crate::timing::Timing::new(&elements));
    let mut builder = Builder {
        statistics: Statistics::default(),
        instances: Vec::new(),
        print: print.clone(),
        timing: timing.clone(),
        next_element: 0,
        dump_counter: Arc::default(),
    };
    builder.add(&manager.as_operation_pass_manager(), root, &elements)?;
    Ok(BuiltPipeline {
        manager,
        statistics: builder.statistics,
        instances: builder.instances,
        timing,
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
    print: PrintAround,
    timing: Option<crate::timing::Timing>,
    /// Pre-order index of the next element, matching `Timing`'s numbering.
    next_element: usize,
    /// Numbers the files of `--mlir-print-ir-tree-dir` in the order they are written.
    dump_counter: Arc<std::sync::atomic::AtomicUsize>,
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
        // another: refuse it here, at the pass, instead.
        for element in elements {
            if let Resolved::Ours { pass, span } = element {
                let runs_on = pass.anchor();
                if !runs_on.is_empty() && runs_on != anchor {
                    return Err(PipelineError::new(
                        format!(
                            "'{}' runs on '{runs_on}' ops and cannot be nested under '{anchor}'; place it at the '{runs_on}' level of the pipeline",
                            pass.argument()
                        ),
                        *span,
                    ));
                }
            }
        }
        for element in elements {
            let element_index = self.next_element;
            self.next_element += 1;
            if let Some(timing) = &self.timing {
                manager.add_pass(timing.marker(element_index, true));
            }
            let argument = element.argument().map(str::to_string);
            // Before-snapshots by op: nested passes run on several ops at once.
            let snapshot = Arc::new(Mutex::new(BTreeMap::<usize, String>::new()));
            if let Some(argument) = &argument {
                if self.print.prints_before(argument)
                    || (self.print.only_on_change && self.print.prints_after(argument))
                {
                    manager.add_pass(self.printer(argument, true, snapshot.clone()));
                }
            }
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
            if let Some(timing) = &self.timing {
                manager.add_pass(timing.marker(element_index, false));
            }
            if let Some(argument) = &argument {
                if self.print.prints_after(argument) {
                    manager.add_pass(self.printer(argument, false, snapshot));
                }
            }
        }
        Ok(())
    }

    /// A pass that prints the IR like MLIR's instrumentation (`// -----// IR Dump Before ...`).
    /// Before-printers also record a snapshot so an after-printer can skip unchanged IR.
    fn printer(
        &self,
        argument: &str,
        before: bool,
        snapshot: Arc<Mutex<BTreeMap<usize, String>>>,
    ) -> melior::pass::Pass {
        let print = self.print.clone();
        let title = format!("{} ({argument})", display_name(argument));
        let print_before = print.prints_before(argument);
        let file_stem = argument.to_string();
        let counter = self.dump_counter.clone();
        let callback = move |op: OperationRef, _pass: ExternalPass| {
            let (scope, text) = printed_scope(op, &print);
            let emit = |when: &str, text: &str| match &print.tree_dir {
                None => eprint!("// -----// IR Dump {when} {title}{scope} //----- //\n{text}\n\n"),
                Some(directory) => {
                    let number = counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let suffix = if when == "Before" { "_before" } else { "" };
                    let folder = directory.join(tree_path(op));
                    let file = folder.join(format!("{number}_{file_stem}{suffix}.mlir"));
                    let written = std::fs::create_dir_all(&folder)
                        .and_then(|_| std::fs::write(&file, format!("{text}\n")));
                    if let Err(error) = written {
                        eprintln!(
                            "ipu-opt: error: cannot write IR dump '{}': {error}",
                            file.display()
                        );
                    }
                }
            };
            let key = op.to_raw().ptr as usize;
            if before {
                if let Ok(mut stored) = snapshot.lock() {
                    stored.insert(key, text.clone());
                }
                if !print_before {
                    return;
                }
                emit("Before", &text);
            } else {
                if print.only_on_change {
                    let unchanged = snapshot
                        .lock()
                        .map(|mut stored| stored.remove(&key).as_deref() == Some(text.as_str()))
                        .unwrap_or(false);
                    if unchanged {
                        return;
                    }
                }
                emit("After", &text);
            }
        };
        #[repr(align(8))]
        struct PrinterId;
        static PRINTER_ID: PrinterId = PrinterId;
        create_external(
            callback,
            TypeId::create(&PRINTER_ID),
            "IRPrinter",
            "ipu-print-ir",
            "prints IR",
            "",
            &[],
        )
    }
}

/// The folder of a dump under `--mlir-print-ir-tree-dir`: one level per enclosing op, named
/// `<op name with _>_<symbol>` (`builtin_module_no-symbol-name/func_func_f`), like MLIR's.
fn tree_path(op: OperationRef) -> std::path::PathBuf {
    let mut levels = Vec::new();
    let mut current = Some(op);
    while let Some(level) = current {
        let name = level
            .name()
            .as_string_ref()
            .as_str()
            .unwrap_or("op")
            .replace('.', "_");
        let symbol = level
            .attribute("sym_name")
            .ok()
            .map(|attribute| {
                attribute
                    .to_string()
                    .trim_matches('"')
                    .replace(['/', '\\'], "_")
            })
            .unwrap_or_else(|| "no-symbol-name".to_string());
        levels.push(format!("{name}_{symbol}"));
        current = level.parent_operation();
    }
    levels.iter().rev().collect()
}

/// The title suffix and the text of a dump, as MLIR's IR printer makes them: the op is printed
/// alone, or under --mlir-print-ir-module-scope the top-level op is printed and the title names
/// the op the pass ran on (`('func.func' operation: @f)`).
fn printed_scope(op: OperationRef, print: &PrintAround) -> (String, String) {
    if !print.module_scope {
        return (String::new(), print_operation(op, print));
    }
    let name = op
        .name()
        .as_string_ref()
        .as_str()
        .unwrap_or("?")
        .to_string();
    let symbol = op
        .attribute("sym_name")
        .ok()
        .map(|attribute| attribute.to_string().trim_matches('"').to_string());
    let scope = match symbol {
        Some(symbol) => format!(" ('{name}' operation: @{symbol})"),
        None => format!(" ('{name}' operation)"),
    };
    let mut top = op;
    while let Some(parent) = top.parent_operation() {
        top = parent;
    }
    (scope, print_operation(top, print))
}

/// Prints an operation with the driver's printing flags.
pub fn print_operation(op: OperationRef, print: &PrintAround) -> String {
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

/// Prints a resolved pipeline the way `--dump-pass-pipeline` shows it: our passes with every
/// option and its value, upstream passes as written.
pub fn print_resolved(root: &str, elements: &[Resolved]) -> String {
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
    items.join(", ")
}
