//! Safe wrappers over the C++ shim (cxx/mlir_driver_shim.cpp): MLIR's pass registry look-up, its
//! IR printing instrumentation with per-pass filters, its timing manager and crash reproducers,
//! none of which the MLIR C API exposes.

use std::ffi::c_void;

use melior::{pass::PassManager, StringRef};
use mlir_sys::{MlirOpPrintingFlags, MlirPassManager, MlirStringCallback, MlirStringRef};

#[repr(C)]
struct RawTiming {
    _private: [u8; 0],
}

extern "C" {
    fn ipuMlirParseSourceFile(
        context: mlir_sys::MlirContext,
        path: MlirStringRef,
        verify: bool,
        implicit_module: bool,
    ) -> mlir_sys::MlirOperation;
    fn ipuMlirLookupPass(
        argument: MlirStringRef,
        callback: MlirStringCallback,
        data: *mut c_void,
    ) -> i32;
    #[allow(clippy::too_many_arguments)]
    fn ipuMlirEnableIRPrinting(
        manager: MlirPassManager,
        before: MlirStringRef,
        after: MlirStringRef,
        before_all: bool,
        after_all: bool,
        module_scope: bool,
        after_only_on_change: bool,
        after_only_on_failure: bool,
        flags: MlirOpPrintingFlags,
        tree_dir: MlirStringRef,
    );
    fn ipuMlirPrintPipelineElement(
        text: MlirStringRef,
        callback: MlirStringCallback,
        data: *mut c_void,
    ) -> bool;
    fn ipuMlirPrintingFlagsExtra(
        flags: MlirOpPrintingFlags,
        value_users: bool,
        unique_ids: bool,
        hex_limit: i64,
    );
    fn ipuMlirContextDialects(
        context: mlir_sys::MlirContext,
        callback: MlirStringCallback,
        data: *mut c_void,
    );
    fn ipuMlirRegisterCommandLineOptions();
    fn ipuMlirPrintRegisteredPasses();
    fn ipuMlirEmitErrorWithNote(
        location: mlir_sys::MlirLocation,
        message: MlirStringRef,
        note: MlirStringRef,
    );
    fn ipuMlirCommandLineOption(name: MlirStringRef) -> i32;
    fn ipuMlirParseCommandLine(
        count: i32,
        arguments: *const *const std::ffi::c_char,
        callback: MlirStringCallback,
        data: *mut c_void,
    ) -> bool;
    fn ipuMlirInstallDebugHandler(context: mlir_sys::MlirContext) -> *mut c_void;
    fn ipuMlirRemoveDebugHandler(handler: *mut c_void);
    fn ipuMlirLlvmVersion(callback: MlirStringCallback, data: *mut c_void);
    fn ipuMlirParseAnchoredPipeline(
        text: MlirStringRef,
        callback: MlirStringCallback,
        data: *mut c_void,
    ) -> bool;
    fn ipuMlirEnableCrashReproducer(manager: MlirPassManager, path: MlirStringRef, local: bool);
    fn ipuMlirTimingCreate(tree: bool, json: bool) -> *mut RawTiming;
    fn ipuMlirTimingBegin(timing: *mut RawTiming, name: MlirStringRef);
    fn ipuMlirTimingEnd(timing: *mut RawTiming);
    fn ipuMlirTimingAttach(timing: *mut RawTiming, manager: MlirPassManager);
    fn ipuMlirTimingFinish(timing: *mut RawTiming);
    fn ipuLlvmRegexCreate(
        pattern: MlirStringRef,
        callback: MlirStringCallback,
        data: *mut c_void,
    ) -> *mut c_void;
    fn ipuLlvmRegexMatch(regex: *mut c_void, text: MlirStringRef) -> bool;
    fn ipuLlvmRegexDestroy(regex: *mut c_void);
    fn ipuLlvmRegexEscape(text: MlirStringRef, callback: MlirStringCallback, data: *mut c_void);
}

/// A regex in LLVM's dialect (POSIX extended, `llvm::Regex`), the one mlir-opt's
/// `-verify-diagnostics` matches `expected-*-re` messages with.
#[derive(Debug)]
pub struct LlvmRegex(std::ptr::NonNull<c_void>);

impl LlvmRegex {
    /// Compiles `pattern`, or returns LLVM's error text (`parentheses not balanced`, ...).
    pub fn new(pattern: &str) -> Result<LlvmRegex, String> {
        let (raw, errors) = collecting(|callback, data| {
            // SAFETY: the pattern is valid for the call; the callback only appends to `errors`.
            unsafe { ipuLlvmRegexCreate(StringRef::new(pattern).to_raw(), callback, data) }
        });
        std::ptr::NonNull::new(raw)
            .map(LlvmRegex)
            .ok_or_else(|| errors.concat())
    }

    /// Whether the regex matches anywhere in `text`.
    pub fn is_match(&self, text: &str) -> bool {
        // SAFETY: the regex is live (owned by self); matching only reads it.
        unsafe { ipuLlvmRegexMatch(self.0.as_ptr(), StringRef::new(text).to_raw()) }
    }

    /// `text` with LLVM's regex metacharacters escaped.
    pub fn escape(text: &str) -> String {
        let (_, pieces) = collecting(|callback, data| {
            // SAFETY: the text is valid for the call; the callback only appends to `pieces`.
            unsafe { ipuLlvmRegexEscape(StringRef::new(text).to_raw(), callback, data) }
        });
        pieces.concat()
    }
}

impl Drop for LlvmRegex {
    fn drop(&mut self) {
        // SAFETY: created by ipuLlvmRegexCreate and dropped once.
        unsafe { ipuLlvmRegexDestroy(self.0.as_ptr()) }
    }
}

// SAFETY: an llvm::Regex is immutable after construction and its `match` is reentrant.
unsafe impl Send for LlvmRegex {}
unsafe impl Sync for LlvmRegex {}

/// What MLIR's registry holds under a pass argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Registered {
    /// A pass: its display name (`CSE` for `cse`) and the op it is restricted to, if any.
    Pass {
        name: String,
        anchor: Option<String>,
    },
    /// A registered pass pipeline.
    Pipeline,
}

/// Calls a shim function that reports text through a string callback (`callback`, `data`);
/// returns its result and the strings it reported, in order.
fn collecting<R>(call: impl FnOnce(MlirStringCallback, *mut c_void) -> R) -> (R, Vec<String>) {
    let mut strings: Vec<String> = Vec::new();
    let result = call(
        Some(collect_strings),
        &mut strings as *mut Vec<String> as *mut c_void,
    );
    (result, strings)
}

unsafe extern "C" fn collect_strings(text: MlirStringRef, data: *mut c_void) {
    // SAFETY: `data` is the `Vec<String>` passed by `lookup`; `text` is valid for the call.
    let sink = unsafe { &mut *(data as *mut Vec<String>) };
    let bytes = unsafe { std::slice::from_raw_parts(text.data as *const u8, text.length) };
    sink.push(String::from_utf8_lossy(bytes).into_owned());
}

/// Parses a file as mlir-opt does: text or bytecode, in an implicit module unless
/// `implicit_module` is false (then exactly one top-level op), verified unless `verify` is false.
/// None when parsing failed (the diagnostics went to the context's handlers).
pub fn parse_source_file<'c>(
    context: &'c melior::Context,
    path: &str,
    verify: bool,
    implicit_module: bool,
) -> Option<melior::ir::operation::Operation<'c>> {
    let path = StringRef::new(path);
    // SAFETY: the context is live; a non-null result is a freshly parsed op we now own.
    unsafe {
        let raw = ipuMlirParseSourceFile(context.to_raw(), path.to_raw(), verify, implicit_module);
        melior::ir::operation::Operation::from_option_raw(raw)
    }
}

/// Looks a pass argument up in MLIR's own registry (upstream passes; call
/// [`crate::register_upstream_passes`] first).
pub fn lookup(argument: &str) -> Option<Registered> {
    let text = StringRef::new(argument);
    let (kind, strings) = collecting(|callback, data| {
        // SAFETY: the callback only appends to `strings` during the call.
        unsafe { ipuMlirLookupPass(text.to_raw(), callback, data) }
    });
    match (kind, strings.as_slice()) {
        (1, [name, anchor]) => Some(Registered::Pass {
            name: name.clone(),
            anchor: (!anchor.is_empty()).then(|| anchor.clone()),
        }),
        (2, _) => Some(Registered::Pipeline),
        _ => None,
    }
}

/// An upstream pipeline element as MLIR prints it (every option with its value:
/// `canonicalize{ max-iterations=3 max-num-rewrites=-1 ...}`), or MLIR's error for it.
pub fn print_pipeline_element(text: &str) -> Result<String, String> {
    let source = StringRef::new(text);
    let (ok, strings) = collecting(|callback, data| {
        // SAFETY: the callback only appends to `strings` during the call.
        unsafe { ipuMlirPrintPipelineElement(source.to_raw(), callback, data) }
    });
    let printed = strings.concat();
    if ok {
        Ok(printed)
    } else {
        Err(printed.trim().to_string())
    }
}

/// The namespaces of every dialect `context` can load or has loaded, sorted.
pub fn dialect_names(context: &melior::Context) -> Vec<String> {
    let (_, strings) = collecting(|callback, data| {
        // SAFETY: the context is live; the callback only appends to `strings` during the call.
        unsafe { ipuMlirContextDialects(context.to_raw(), callback, data) }
    });
    strings
}

/// Emits an error with a note at the same location through MLIR's diagnostic engine.
pub fn emit_error_with_note(location: melior::ir::Location, message: &str, note: &str) {
    let (message, note) = (StringRef::new(message), StringRef::new(note));
    // SAFETY: the location is live; MLIR copies the strings.
    unsafe { ipuMlirEmitErrorWithNote(location.to_raw(), message.to_raw(), note.to_raw()) }
}

/// Prints MLIR's listing of its registered passes and pipelines on stdout, as mlir-opt
/// --list-passes does (flush Rust's stdout first).
pub fn print_registered_passes() {
    // SAFETY: prints from MLIR's registry; no state is changed.
    unsafe { ipuMlirPrintRegisteredPasses() }
}

/// Registers MLIR's own command-line options in LLVM's registry (idempotent).
pub fn register_command_line_options() {
    // SAFETY: registration only adds options to LLVM's global registry, once.
    unsafe { ipuMlirRegisterCommandLineOptions() }
}

/// How an option of MLIR's (or LLVM's) own registry takes a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LlvmOption {
    /// A flag, or a value given with `=`.
    FlagOrOptionalValue,
    /// A value, with `=` or as the next argument.
    Value,
}

/// Whether LLVM's registry has the option `name` (after [`register_command_line_options`]).
pub fn command_line_option(name: &str) -> Option<LlvmOption> {
    let text = StringRef::new(name);
    // SAFETY: a read-only look-up in LLVM's registry.
    match unsafe { ipuMlirCommandLineOption(text.to_raw()) } {
        1 => Some(LlvmOption::FlagOrOptionalValue),
        2 => Some(LlvmOption::Value),
        _ => None,
    }
}

/// Hands options to LLVM's parser (`arguments` without the program name).
pub fn parse_command_line(arguments: &[String]) -> Result<(), String> {
    let owned: Vec<std::ffi::CString> = std::iter::once("ipu-opt".to_string())
        .chain(arguments.iter().cloned())
        .map(|argument| std::ffi::CString::new(argument).unwrap_or_default())
        .collect();
    let pointers: Vec<*const std::ffi::c_char> = owned.iter().map(|text| text.as_ptr()).collect();
    let (ok, strings) = collecting(|callback, data| {
        // SAFETY: the strings outlive the call; the callback only appends to `strings`.
        unsafe { ipuMlirParseCommandLine(pointers.len() as i32, pointers.as_ptr(), callback, data) }
    });
    if ok {
        Ok(())
    } else {
        Err(strings.concat().trim().to_string())
    }
}

/// MLIR's action logging and profiling installed on a context while this lives.
pub struct DebugHandler(*mut c_void);

impl DebugHandler {
    pub fn install(context: &melior::Context) -> DebugHandler {
        // SAFETY: the context outlives the handler (the driver drops it first).
        DebugHandler(unsafe { ipuMlirInstallDebugHandler(context.to_raw()) })
    }
}

impl Drop for DebugHandler {
    fn drop(&mut self) {
        // SAFETY: frees the handler made by `install`, once.
        unsafe { ipuMlirRemoveDebugHandler(self.0) }
    }
}

/// The LLVM and MLIR release linked in, for `--version`.
pub fn llvm_version_text() -> String {
    let (_, strings) = collecting(|callback, data| {
        // SAFETY: the callback only appends to `strings` during the call.
        unsafe { ipuMlirLlvmVersion(callback, data) }
    });
    format!(
        "LLVM version {} (MLIR {}, linked statically)",
        strings.concat(),
        strings.concat().split('.').next().unwrap_or("")
    )
}

/// Printing flags the C API cannot set: `--mlir-print-value-users`,
/// `--mlir-print-unique-ssa-ids`, `--mlir-print-elementsattrs-with-hex-if-larger` (None: off).
pub fn set_extra_printing_flags(
    flags: &melior::ir::operation::OperationPrintingFlags,
    value_users: bool,
    unique_ids: bool,
    hex_limit: Option<i64>,
) {
    // SAFETY: the flags are live; the shim only sets fields on them.
    unsafe {
        ipuMlirPrintingFlagsExtra(
            flags.to_raw(),
            value_users,
            unique_ids,
            hex_limit.unwrap_or(-1),
        )
    }
}

/// MLIR's own verdict on a `--pass-pipeline` text: None when its parser accepts it, else its
/// error message (mlir-opt's wording for the same mistake).
pub fn mlir_pipeline_error(text: &str) -> Option<String> {
    let source = StringRef::new(text);
    let (ok, strings) = collecting(|callback, data| {
        // SAFETY: the callback only appends to `strings` during the call.
        unsafe { ipuMlirParseAnchoredPipeline(source.to_raw(), callback, data) }
    });
    // As MLIR prints it: a message with a source line and caret ends in a blank line.
    (!ok).then(|| {
        let text = strings.concat();
        match text.strip_suffix('\n') {
            Some(lines) => format!("{lines}\n"),
            None => text,
        }
    })
}

/// How MLIR's IR printing instrumentation is configured (mlir-opt's `--mlir-print-ir-*` flags).
#[derive(Clone, Debug, Default)]
pub struct IrPrinting {
    /// Pass arguments to print before / after.
    pub before: Vec<String>,
    pub after: Vec<String>,
    pub before_all: bool,
    pub after_all: bool,
    pub module_scope: bool,
    pub after_only_on_change: bool,
    pub after_only_on_failure: bool,
    /// Write each dump into a file under this folder instead of stderr.
    pub tree_dir: Option<std::path::PathBuf>,
}

impl IrPrinting {
    /// Whether any printing was asked for.
    pub fn is_enabled(&self) -> bool {
        self.before_all
            || self.after_all
            || self.after_only_on_failure
            || !self.before.is_empty()
            || !self.after.is_empty()
    }
}

/// Installs MLIR's IR printing instrumentation on `manager`.
pub fn enable_ir_printing(
    manager: &PassManager,
    printing: &IrPrinting,
    flags: &melior::ir::operation::OperationPrintingFlags,
) {
    if !printing.is_enabled() {
        return;
    }
    let before = printing.before.join(",");
    let after = printing.after.join(",");
    let tree = printing
        .tree_dir
        .as_ref()
        .map(|path| path.display().to_string())
        .unwrap_or_default();
    let (before, after, tree) = (
        StringRef::new(&before),
        StringRef::new(&after),
        StringRef::new(&tree),
    );
    // SAFETY: the manager and flags are live; MLIR copies the strings and flags it keeps.
    unsafe {
        ipuMlirEnableIRPrinting(
            manager.to_raw(),
            before.to_raw(),
            after.to_raw(),
            printing.before_all,
            printing.after_all,
            printing.module_scope,
            printing.after_only_on_change,
            printing.after_only_on_failure,
            flags.to_raw(),
            tree.to_raw(),
        )
    }
}

/// `--mlir-pass-pipeline-crash-reproducer`: MLIR writes the reproducer when a pass fails.
pub fn enable_crash_reproducer(manager: &PassManager, path: &std::path::Path, local: bool) {
    let text = path.display().to_string();
    let text = StringRef::new(&text);
    // SAFETY: the manager is live; MLIR copies the path.
    unsafe { ipuMlirEnableCrashReproducer(manager.to_raw(), text.to_raw(), local) }
}

/// A timing session with MLIR's default timing manager (`--mlir-timing`): scopes the driver
/// opens (Parser, Output), the pass timing of every pass manager attached, and the report on
/// stderr when the session ends.
pub struct Timing {
    raw: *mut RawTiming,
}

impl Timing {
    pub fn new(tree: bool, json: bool) -> Timing {
        // SAFETY: returns a fresh session owned by this value.
        Timing {
            raw: unsafe { ipuMlirTimingCreate(tree, json) },
        }
    }

    /// Times what runs until the returned guard is dropped, as a row named `name`.
    pub fn scope(&self, name: &str) -> TimingScope<'_> {
        let text = StringRef::new(name);
        // SAFETY: the session is live; MLIR uniques the name.
        unsafe { ipuMlirTimingBegin(self.raw, text.to_raw()) };
        TimingScope { timing: self }
    }

    /// Times the passes `manager` runs.
    pub fn attach(&self, manager: &PassManager) {
        // SAFETY: the session outlives the run (the driver ends it after every manager ran).
        unsafe { ipuMlirTimingAttach(self.raw, manager.to_raw()) }
    }
}

impl Drop for Timing {
    fn drop(&mut self) {
        // SAFETY: prints the report and frees the session; `raw` is not used again.
        unsafe { ipuMlirTimingFinish(self.raw) }
    }
}

/// An open timing row; it stops when dropped.
pub struct TimingScope<'t> {
    timing: &'t Timing,
}

impl Drop for TimingScope<'_> {
    fn drop(&mut self) {
        // SAFETY: closes the scope opened by `Timing::scope`.
        unsafe { ipuMlirTimingEnd(self.timing.raw) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_passes_have_their_names_and_anchors() {
        crate::register_upstream_passes();
        assert_eq!(
            lookup("cse"),
            Some(Registered::Pass {
                name: "CSE".into(),
                anchor: None
            })
        );
        assert_eq!(
            lookup("canonicalize"),
            Some(Registered::Pass {
                name: "Canonicalizer".into(),
                anchor: None
            })
        );
        assert_eq!(
            lookup("symbol-dce"),
            Some(Registered::Pass {
                name: "SymbolDCE".into(),
                anchor: None
            })
        );
        match lookup("affine-scalrep") {
            Some(Registered::Pass { anchor, .. }) => {
                assert_eq!(anchor.as_deref(), Some("func.func"))
            }
            other => panic!("affine-scalrep: {other:?}"),
        }
        assert_eq!(lookup("sparsifier"), Some(Registered::Pipeline));
        assert_eq!(lookup("no-such-pass-anywhere"), None);
        assert_eq!(
            print_pipeline_element("canonicalize{max-iterations=3}").unwrap(),
            "canonicalize{  max-iterations=3 max-num-rewrites=-1 region-simplify=normal test-convergence=false top-down=true}"
        );
        assert!(print_pipeline_element("canonicalize{no-such=1}")
            .unwrap_err()
            .contains("no-such"));
    }
}
