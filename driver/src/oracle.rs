//! The upstream oracle: runs a model written in upstream dialects (TOSA, linalg, arith, math,
//! tensor, ...) with MLIR itself on the CPU, through upstream passes to the LLVM dialect and
//! MLIR's ExecutionEngine (the JIT behind `mlir-runner`).
//!
//! It shares no code with our reference evaluator (`ipu_runtime::reference`) nor with our
//! passes: the context registers the upstream dialects only (no IRDL `ipu` dialect), every pass
//! in [`PIPELINE`] is MLIR's own, and results come from machine code LLVM generated from the
//! original model. That makes it an independent check of the import passes, the evaluator and,
//! later, the simulator ([`compare_with_oracle`] takes any candidate's outputs).
//!
//! # The pipeline
//! See [`PIPELINE`]. The choices that matter:
//! - TOSA goes to linalg/arith/tensor with the standard conversions, then everything is
//!   bufferized at once with function-boundary bufferization and identity layouts at the
//!   boundary (so the entry function takes plain row-major memrefs).
//! - `buffer-results-to-out-params` turns returned buffers into out-params the caller allocates,
//!   so no buffer allocated by the JIT code ever crosses to the host (nothing to free, no
//!   ownership question), and `buffer-deallocation-pipeline` frees every internal allocation.
//! - linalg becomes plain loops (`convert-linalg-to-loops`): no tiling, vectorization or
//!   reassociation, so each reduction runs in index order, in the element type.
//! - Math: `convert-math-to-llvm` first (exp, sqrt, rsqrt as LLVM intrinsics: `1/sqrt`), then
//!   `convert-math-to-libm` for what LLVM has no intrinsic for (erf, tanh, ...), which calls
//!   the C library (glibc's correctly rounded-or-close `erff`, `tanhf`) rather than a polynomial
//!   approximation, so the oracle's transcendental error is the C library's.
//! - The entry function gets `llvm.emit_c_interface` and is called through its packed
//!   `_mlir_ciface_` wrapper with one memref descriptor per argument and per result.

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::path::Path;

use melior::{
    dialect::DialectRegistry,
    ir::{
        attribute::{AttributeLike, TypeAttribute},
        block::BlockLike,
        operation::OperationLike,
        r#type::{FunctionType, RankedTensorType, ShapedTypeLike, TypeLike},
        Attribute, Module, OperationRef, RegionLike, Type,
    },
    pass::PassManager,
    utility::{register_all_dialects, register_all_llvm_translations},
    Context, StringRef,
};

use crate::diagnostics::Collector;

/// The upstream pipeline from tensors (TOSA, linalg, tensor, arith, math) to the LLVM dialect.
pub const PIPELINE: &str = "builtin.module(\
func.func(tosa-to-linalg-named, tosa-to-linalg, tosa-to-arith, tosa-to-tensor), \
one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map}, \
buffer-results-to-out-params{hoist-static-allocs modify-public-functions}, \
buffer-deallocation-pipeline, \
func.func(convert-linalg-to-loops), \
convert-bufferization-to-memref, lower-affine, convert-scf-to-cf, expand-strided-metadata, \
convert-math-to-llvm, convert-math-to-libm, \
finalize-memref-to-llvm, convert-arith-to-llvm, convert-index-to-llvm, convert-cf-to-llvm, \
convert-func-to-llvm, convert-ub-to-llvm, reconcile-unrealized-casts)";

/// LLVM optimization level of the JIT. O2 does not change floating-point results (MLIR emits
/// no fast-math flags here), and it keeps the run short.
const OPT_LEVEL: i32 = 2;

/// Element types the oracle moves across the host boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Element {
    F32,
    F64,
}

impl Element {
    fn bytes(self) -> usize {
        match self {
            Element::F32 => 4,
            Element::F64 => 8,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Element::F32 => "f32",
            Element::F64 => "f64",
        }
    }
}

/// A host tensor: row-major values (held as f64; exact for both element types).
#[derive(Debug, Clone, PartialEq)]
pub struct HostTensor {
    pub shape: Vec<usize>,
    pub element: Element,
    pub data: Vec<f64>,
}

impl HostTensor {
    /// `tensor<1x16x64xf32>`, for messages.
    pub fn describe(&self) -> String {
        describe(&self.shape, self.element)
    }
}

fn describe(shape: &[usize], element: Element) -> String {
    let mut text = String::from("tensor<");
    for size in shape {
        text.push_str(&format!("{size}x"));
    }
    text.push_str(element.name());
    text.push('>');
    text
}

/// The type of an entry argument or result.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorSignature {
    pub shape: Vec<usize>,
    pub element: Element,
}

impl TensorSignature {
    pub fn describe(&self) -> String {
        describe(&self.shape, self.element)
    }

    pub fn elements(&self) -> usize {
        self.shape.iter().product()
    }
}

/// Why the oracle could not run a model. Messages name the file and, where MLIR gave one, the
/// op and its location.
#[derive(Debug, thiserror::Error)]
pub enum OracleError {
    #[error("{path}: {detail}")]
    Read { path: String, detail: String },
    #[error("{file}: does not parse:\n{diagnostics}")]
    Parse { file: String, diagnostics: String },
    #[error("{file}: {detail}")]
    Entry { file: String, detail: String },
    #[error("{file}: input {name}: {detail}")]
    Input {
        file: String,
        name: String,
        detail: String,
    },
    #[error("{file}: the upstream lowering to LLVM failed:\n{diagnostics}")]
    Lowering { file: String, diagnostics: String },
    #[error("{file}: {detail}")]
    Jit { file: String, detail: String },
    #[error("{detail}")]
    Compare { detail: String },
}

/// What to run.
#[derive(Debug, Clone, Default)]
pub struct OracleOptions {
    /// The entry function; the module's only public function with a body when `None`.
    pub function: Option<String>,
    /// Seed of the Gaussian inputs generated for arguments without a given tensor.
    pub seed: u64,
    /// Keep the lowered LLVM-dialect module's text in [`OracleRun::lowered`].
    pub keep_lowered: bool,
}

/// One run of the oracle: the inputs used (given or generated) and the outputs.
#[derive(Debug, Clone)]
pub struct OracleRun {
    pub function: String,
    pub arguments: Vec<TensorSignature>,
    pub inputs: Vec<HostTensor>,
    pub outputs: Vec<HostTensor>,
    /// The module after [`PIPELINE`] (when asked for).
    pub lowered: Option<String>,
}

/// The name under which argument `index` takes a given tensor and seeds its generator.
pub fn argument_name(index: usize) -> String {
    format!("arg{index}")
}

/// Resolves `"2"`, `"arg2"` or `"%arg2"` to an argument index below `count`.
pub fn argument_index(name: &str, count: usize) -> Option<usize> {
    let digits = name.trim_start_matches('%').trim_start_matches("arg");
    let index: usize = digits.parse().ok()?;
    (index < count).then_some(index)
}

/// Seeded standard-normal inputs for argument `index` (the runtime's generator, keyed by the
/// argument's name so each argument has its own stream).
pub fn seeded_input(signature: &TensorSignature, index: usize, seed: u64) -> HostTensor {
    let shape: Vec<u64> = signature.shape.iter().map(|&size| size as u64).collect();
    let tensor = ipu_runtime::Tensor::gaussian(
        shape,
        ipu_runtime::Sigma::INPUT,
        ipu_runtime::inputs::binding_seed(seed, &argument_name(index)),
    );
    HostTensor {
        shape: signature.shape.clone(),
        element: signature.element,
        data: tensor.data.iter().map(|&value| f64::from(value)).collect(),
    }
}

/// Runs the model in the file at `path`; `inputs` by argument name (see [`argument_index`]),
/// the others generated from `options.seed`.
pub fn run_file(
    path: &Path,
    options: &OracleOptions,
    inputs: &BTreeMap<String, HostTensor>,
) -> Result<OracleRun, OracleError> {
    let file = path.display().to_string();
    let source = std::fs::read_to_string(path).map_err(|error| OracleError::Read {
        path: file.clone(),
        detail: error.to_string(),
    })?;
    run_parsed(&source, &file, Some(&file), options, inputs)
}

/// Runs the model `source`; `file` names it in messages and locations.
pub fn run_source(
    source: &str,
    file: &str,
    options: &OracleOptions,
    inputs: &BTreeMap<String, HostTensor>,
) -> Result<OracleRun, OracleError> {
    run_parsed(source, file, None, options, inputs)
}

fn run_parsed(
    source: &str,
    file: &str,
    path: Option<&str>,
    options: &OracleOptions,
    inputs: &BTreeMap<String, HostTensor>,
) -> Result<OracleRun, OracleError> {
    let _span = tracing::info_span!("ipu.oracle", file).entered();
    let context = upstream_context();
    let collector = Collector::attach(&context);
    if path.is_none() {
        // Parsed from text, the module's locations name MLIR's buffer `-`: they are `file`'s.
        collector.set_file_name(file);
        collector.map_file("-");
    }
    if let Some((line, column)) = ipu_dialects::context::nul_byte(source) {
        return Err(OracleError::Entry {
            file: file.to_string(),
            detail: format!("contains a NUL byte at line {line}, column {column}"),
        });
    }
    let mut module = parse(&context, source, path).ok_or_else(|| OracleError::Parse {
        file: file.to_string(),
        diagnostics: render(&collector, file),
    })?;
    if !module.as_operation().verify() {
        return Err(OracleError::Parse {
            file: file.to_string(),
            diagnostics: render(&collector, file),
        });
    }
    let entry =
        find_entry(&module, options.function.as_deref()).map_err(|detail| OracleError::Entry {
            file: file.to_string(),
            detail,
        })?;
    let name = entry.name.clone();
    let host_inputs = gather_inputs(file, &entry, options.seed, inputs)?;
    set_c_interface(&context, &module, &name);

    let started = std::time::Instant::now();
    let manager = PassManager::new(&context);
    manager.enable_verifier(true);
    ipu_passes::register_upstream_passes();
    melior::utility::parse_pass_pipeline(manager.as_operation_pass_manager(), PIPELINE).map_err(
        |error| OracleError::Lowering {
            file: file.to_string(),
            diagnostics: format!("internal: the oracle pipeline does not parse: {error}"),
        },
    )?;
    if manager.run(&mut module).is_err() {
        return Err(OracleError::Lowering {
            file: file.to_string(),
            diagnostics: render(&collector, file),
        });
    }
    tracing::info!(
        elapsed_ms = started.elapsed().as_millis() as u64,
        "lowered to the LLVM dialect"
    );
    let lowered = options
        .keep_lowered
        .then(|| module.as_operation().to_string());

    let started = std::time::Instant::now();
    let engine = Engine::new(&module).ok_or_else(|| OracleError::Jit {
        file: file.to_string(),
        detail: format!(
            "MLIR's ExecutionEngine could not translate and compile the lowered module{}",
            tail(&render(&collector, file))
        ),
    })?;
    let outputs = engine
        .call(&name, &entry, &host_inputs)
        .map_err(|detail| OracleError::Jit {
            file: file.to_string(),
            detail,
        })?;
    tracing::info!(
        elapsed_ms = started.elapsed().as_millis() as u64,
        function = %name,
        "compiled and ran"
    );
    Ok(OracleRun {
        function: name,
        arguments: entry.arguments,
        inputs: host_inputs,
        outputs,
        lowered,
    })
}

fn tail(diagnostics: &str) -> String {
    if diagnostics.trim().is_empty() {
        String::new()
    } else {
        format!(":\n{diagnostics}")
    }
}

/// A context with every upstream dialect and the LLVM translations, and nothing of ours.
fn upstream_context() -> Context {
    let registry = DialectRegistry::new();
    register_all_dialects(&registry);
    let context = Context::new_with_registry(&registry, false);
    context.load_all_available_dialects();
    register_all_llvm_translations(&context);
    context
}

/// Parses the model: from its file (so diagnostics carry `file:line:col`) when `path` is given,
/// else from `source` (locations then show `-`, which the collector renames to the file).
fn parse<'c>(context: &'c Context, source: &str, path: Option<&str>) -> Option<Module<'c>> {
    match path {
        Some(path) => {
            let name = StringRef::new(path);
            // SAFETY: the path outlives the call; a null module means the parse failed.
            let raw =
                unsafe { mlir_sys::mlirModuleCreateParseFromFile(context.to_raw(), name.to_raw()) };
            // SAFETY: `raw` is a freshly parsed, owned module.
            (!raw.ptr.is_null()).then(|| unsafe { Module::from_raw(raw) })
        }
        None => Module::parse(context, source),
    }
}

fn render(collector: &Collector, file: &str) -> String {
    let diagnostics = collector.take();
    if diagnostics.is_empty() {
        return format!("{file}: (MLIR reported no diagnostic)");
    }
    diagnostics
        .iter()
        .map(
            |diagnostic| match (&diagnostic.file, diagnostic.line, diagnostic.column) {
                (Some(name), Some(line), Some(column)) => format!(
                    "{name}:{line}:{column}: {}: {}",
                    diagnostic.severity, diagnostic.message
                ),
                _ => format!("{file}: {}: {}", diagnostic.severity, diagnostic.message),
            },
        )
        .collect::<Vec<_>>()
        .join("\n")
}

/// The entry function's name and tensor signature.
#[derive(Debug, Clone)]
struct Entry {
    name: String,
    arguments: Vec<TensorSignature>,
    results: Vec<TensorSignature>,
}

fn functions<'c, 'a>(module: &'a Module<'c>) -> Vec<(String, OperationRef<'c, 'a>, bool, bool)> {
    let mut found = Vec::new();
    let mut next = module.body().first_operation();
    while let Some(op) = next {
        next = op.next_in_block();
        if op.name().as_string_ref().as_str() != Ok("func.func") {
            continue;
        }
        let name = op
            .attribute("sym_name")
            .ok()
            .and_then(ipu_dialects::ipu::string_value)
            .unwrap_or_default();
        let private = op
            .attribute("sym_visibility")
            .ok()
            .and_then(ipu_dialects::ipu::string_value)
            .is_some_and(|visibility| visibility != "public");
        let has_body = op
            .region(0)
            .ok()
            .and_then(|region| region.first_block())
            .is_some();
        found.push((name, op, private, has_body));
    }
    found
}

fn find_entry(module: &Module, requested: Option<&str>) -> Result<Entry, String> {
    let all = functions(module);
    let (name, op) = match requested {
        Some(requested) => {
            let (name, op, _, has_body) = all
                .iter()
                .find(|(name, ..)| name == requested)
                .ok_or_else(|| {
                    format!(
                        "no function @{requested} (functions: {})",
                        list(all.iter().map(|(name, ..)| name.as_str()))
                    )
                })?;
            if !has_body {
                return Err(format!("function @{name} is a declaration without a body"));
            }
            (name.clone(), *op)
        }
        None => {
            let candidates: Vec<_> = all
                .iter()
                .filter(|(_, _, private, has_body)| !private && *has_body)
                .collect();
            match candidates.as_slice() {
                [(name, op, ..)] => (name.clone(), *op),
                [] => return Err("no public function with a body to run".to_string()),
                many => {
                    return Err(format!(
                        "{} public functions ({}); choose one with --function",
                        many.len(),
                        list(many.iter().map(|(name, ..)| name.as_str()))
                    ))
                }
            }
        }
    };
    let function_type = op
        .attribute("function_type")
        .ok()
        .and_then(|attribute| TypeAttribute::try_from(attribute).ok())
        .and_then(|attribute| FunctionType::try_from(attribute.value()).ok())
        .ok_or_else(|| format!("function @{name} has no function type"))?;
    let signature = |r#type: Type, what: String| -> Result<TensorSignature, String> {
        tensor_signature(r#type).map_err(|detail| format!("function @{name}: {what}: {detail}"))
    };
    let arguments = (0..function_type.input_count())
        .map(|index| {
            let r#type = function_type
                .input(index)
                .map_err(|error| error.to_string())?;
            signature(r#type, format!("argument {index}"))
        })
        .collect::<Result<Vec<_>, String>>()?;
    let results = (0..function_type.result_count())
        .map(|index| {
            let r#type = function_type
                .result(index)
                .map_err(|error| error.to_string())?;
            signature(r#type, format!("result {index}"))
        })
        .collect::<Result<Vec<_>, String>>()?;
    if results.is_empty() {
        return Err(format!("function @{name} returns nothing to compare"));
    }
    Ok(Entry {
        name,
        arguments,
        results,
    })
}

fn list<'s>(names: impl Iterator<Item = &'s str>) -> String {
    let names: Vec<String> = names.map(|name| format!("@{name}")).collect();
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}

fn tensor_signature(r#type: Type) -> Result<TensorSignature, String> {
    let tensor = RankedTensorType::try_from(r#type)
        .map_err(|_| format!("type {type} is not a ranked tensor (the oracle passes tensors)"))?;
    let mut shape = Vec::new();
    for axis in 0..tensor.rank() {
        match tensor.dim_size(axis) {
            Ok(melior::ir::r#type::DimSize::Static(size)) => shape.push(size as usize),
            _ => return Err(format!("type {type} has a dynamic dimension")),
        }
    }
    let element = tensor.element();
    let element = if element.is_f32() {
        Element::F32
    } else if element.is_f64() {
        Element::F64
    } else {
        return Err(format!(
            "element type {element} is not supported (f32 or f64)"
        ));
    };
    Ok(TensorSignature { shape, element })
}

fn gather_inputs(
    file: &str,
    entry: &Entry,
    seed: u64,
    given: &BTreeMap<String, HostTensor>,
) -> Result<Vec<HostTensor>, OracleError> {
    let error = |name: &str, detail: String| OracleError::Input {
        file: file.to_string(),
        name: name.to_string(),
        detail,
    };
    let mut chosen: Vec<Option<HostTensor>> = vec![None; entry.arguments.len()];
    for (name, tensor) in given {
        let index = argument_index(name, entry.arguments.len()).ok_or_else(|| {
            error(
                name,
                format!(
                    "@{} has no such argument (it has {}: arg0..arg{})",
                    entry.name,
                    entry.arguments.len(),
                    entry.arguments.len().saturating_sub(1)
                ),
            )
        })?;
        let expected = &entry.arguments[index];
        if tensor.shape != expected.shape {
            return Err(error(
                name,
                format!(
                    "shape {:?} differs from argument {index}'s type {}",
                    tensor.shape,
                    expected.describe()
                ),
            ));
        }
        if tensor.data.len() != expected.elements() {
            return Err(error(
                name,
                format!(
                    "holds {} values for {}",
                    tensor.data.len(),
                    expected.describe()
                ),
            ));
        }
        if chosen[index].is_some() {
            return Err(error(name, format!("argument {index} is given twice")));
        }
        let mut tensor = tensor.clone();
        tensor.element = expected.element;
        if expected.element == Element::F32 {
            // The JIT receives f32: what it computes with is the rounded value.
            tensor
                .data
                .iter_mut()
                .for_each(|value| *value = f64::from(*value as f32));
        }
        chosen[index] = Some(tensor);
    }
    Ok(chosen
        .into_iter()
        .enumerate()
        .map(|(index, tensor)| {
            tensor.unwrap_or_else(|| seeded_input(&entry.arguments[index], index, seed))
        })
        .collect())
}

fn set_c_interface(context: &Context, module: &Module, name: &str) {
    for (function, op, ..) in functions(module) {
        if function == name {
            let name = StringRef::new("llvm.emit_c_interface");
            // SAFETY: `op` is a live func.func of `module`; MLIR copies the name.
            unsafe {
                mlir_sys::mlirOperationSetDiscardableAttributeByName(
                    op.to_raw(),
                    name.to_raw(),
                    Attribute::unit(context).to_raw(),
                )
            };
        }
    }
}

/// MLIR's ExecutionEngine over a lowered module.
struct Engine {
    raw: mlir_sys::MlirExecutionEngine,
}

impl Engine {
    fn new(module: &Module) -> Option<Engine> {
        // SAFETY: the module is a verified LLVM-dialect module; MLIR translates it to LLVM IR
        // and JIT-compiles it, returning null on failure.
        let raw = unsafe {
            mlir_sys::mlirExecutionEngineCreate(
                module.to_raw(),
                OPT_LEVEL,
                0,
                std::ptr::null(),
                false,
                false,
            )
        };
        if raw.ptr.is_null() {
            return None;
        }
        let engine = Engine { raw };
        engine.register_libm();
        Some(engine)
    }

    /// Makes the C library's math functions that `convert-math-to-libm` calls resolvable even
    /// where the process image does not export them.
    fn register_libm(&self) {
        let symbols: [(&str, *mut c_void); 12] = [
            ("erff", libm::erff as *mut c_void),
            ("erf", libm::erf as *mut c_void),
            ("tanhf", libm::tanhf as *mut c_void),
            ("tanh", libm::tanh as *mut c_void),
            ("expf", libm::expf as *mut c_void),
            ("exp", libm::exp as *mut c_void),
            ("logf", libm::logf as *mut c_void),
            ("log", libm::log as *mut c_void),
            ("powf", libm::powf as *mut c_void),
            ("pow", libm::pow as *mut c_void),
            ("erfcf", libm::erfcf as *mut c_void),
            ("erfc", libm::erfc as *mut c_void),
        ];
        for (name, address) in symbols {
            // SAFETY: each address is a C-ABI function of the signature libm gives the name.
            unsafe {
                mlir_sys::mlirExecutionEngineRegisterSymbol(
                    self.raw,
                    StringRef::new(name).to_raw(),
                    address,
                )
            };
        }
    }

    /// Calls `_mlir_ciface_<name>` with one descriptor per input, then one per output (the
    /// out-params `buffer-results-to-out-params` made of the results).
    fn call(
        &self,
        name: &str,
        entry: &Entry,
        inputs: &[HostTensor],
    ) -> Result<Vec<HostTensor>, String> {
        let mut buffers: Vec<Buffer> = inputs.iter().map(Buffer::from_tensor).collect();
        buffers.extend(entry.results.iter().map(Buffer::zeroed));
        let mut descriptors: Vec<Vec<i64>> = buffers.iter_mut().map(Buffer::descriptor).collect();
        let mut descriptor_pointers: Vec<*mut i64> = descriptors
            .iter_mut()
            .map(|descriptor| descriptor.as_mut_ptr())
            .collect();
        let mut arguments: Vec<*mut c_void> = descriptor_pointers
            .iter_mut()
            .map(|pointer| pointer as *mut *mut i64 as *mut c_void)
            .collect();
        let wrapper = format!("_mlir_ciface_{name}");
        // SAFETY: the wrapper exists (checked by lookup below first); every argument points to a
        // pointer to a live descriptor whose buffer has the size and layout the lowered
        // signature declares (identity-layout static memrefs of the entry's types).
        unsafe {
            let found = mlir_sys::mlirExecutionEngineLookupPacked(
                self.raw,
                StringRef::new(&wrapper).to_raw(),
            );
            if found.is_null() {
                return Err(format!(
                    "the JIT has no packed wrapper for {wrapper} (was llvm.emit_c_interface lost?)"
                ));
            }
            // The C API prepends `_mlir_ciface_` itself (and `_mlir_` for the packed form).
            let result = mlir_sys::mlirExecutionEngineInvokePacked(
                self.raw,
                StringRef::new(name).to_raw(),
                arguments.as_mut_ptr(),
            );
            if result.value == 0 {
                return Err(format!("invoking {wrapper} failed"));
            }
        }
        drop(descriptors);
        Ok(buffers
            .split_off(inputs.len())
            .into_iter()
            .zip(&entry.results)
            .map(|(buffer, signature)| buffer.into_tensor(signature))
            .collect())
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        // SAFETY: `raw` is a live engine owned by this value.
        unsafe { mlir_sys::mlirExecutionEngineDestroy(self.raw) }
    }
}

/// A host buffer in the element type, with its memref descriptor.
struct Buffer {
    shape: Vec<usize>,
    element: Element,
    /// 8-byte words so both element types are aligned.
    words: Vec<u64>,
}

impl Buffer {
    fn from_tensor(tensor: &HostTensor) -> Buffer {
        let mut buffer = Buffer::zeroed(&TensorSignature {
            shape: tensor.shape.clone(),
            element: tensor.element,
        });
        let bytes = buffer.bytes_mut();
        match tensor.element {
            Element::F32 => {
                for (chunk, value) in bytes.chunks_exact_mut(4).zip(&tensor.data) {
                    chunk.copy_from_slice(&(*value as f32).to_ne_bytes());
                }
            }
            Element::F64 => {
                for (chunk, value) in bytes.chunks_exact_mut(8).zip(&tensor.data) {
                    chunk.copy_from_slice(&value.to_ne_bytes());
                }
            }
        }
        buffer
    }

    fn zeroed(signature: &TensorSignature) -> Buffer {
        let bytes = signature.elements() * signature.element.bytes();
        Buffer {
            shape: signature.shape.clone(),
            element: signature.element,
            words: vec![0; bytes.div_ceil(8).max(1)],
        }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        let length = self.shape.iter().product::<usize>() * self.element.bytes();
        // SAFETY: `words` holds at least `length` bytes; u8 has no alignment requirement.
        unsafe { std::slice::from_raw_parts_mut(self.words.as_mut_ptr() as *mut u8, length) }
    }

    /// `{allocated, aligned, offset, sizes[rank], strides[rank]}` (row-major strides).
    fn descriptor(&mut self) -> Vec<i64> {
        let pointer = self.words.as_mut_ptr() as i64;
        let mut descriptor = vec![pointer, pointer, 0];
        descriptor.extend(self.shape.iter().map(|&size| size as i64));
        let mut strides = vec![1i64; self.shape.len()];
        for axis in (0..self.shape.len().saturating_sub(1)).rev() {
            strides[axis] = strides[axis + 1] * self.shape[axis + 1] as i64;
        }
        descriptor.extend(strides);
        descriptor
    }

    fn into_tensor(mut self, signature: &TensorSignature) -> HostTensor {
        let element = self.element;
        let bytes = self.bytes_mut();
        let data = match element {
            Element::F32 => bytes
                .chunks_exact(4)
                .map(|chunk| {
                    f64::from(f32::from_ne_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]))
                })
                .collect(),
            Element::F64 => bytes
                .chunks_exact(8)
                .map(|chunk| {
                    let mut word = [0u8; 8];
                    word.copy_from_slice(chunk);
                    f64::from_ne_bytes(word)
                })
                .collect(),
        };
        HostTensor {
            shape: signature.shape.clone(),
            element,
            data,
        }
    }
}

/// The C library's math functions (declared here so the process links them; see
/// [`Engine::register_libm`]).
mod libm {
    extern "C" {
        pub fn erff(x: f32) -> f32;
        pub fn erf(x: f64) -> f64;
        pub fn erfcf(x: f32) -> f32;
        pub fn erfc(x: f64) -> f64;
        pub fn tanhf(x: f32) -> f32;
        pub fn tanh(x: f64) -> f64;
        pub fn expf(x: f32) -> f32;
        pub fn exp(x: f64) -> f64;
        pub fn logf(x: f32) -> f32;
        pub fn log(x: f64) -> f64;
        pub fn powf(x: f32, y: f32) -> f32;
        pub fn pow(x: f64, y: f64) -> f64;
    }
}

/// Tolerance of a comparison with the oracle: an element passes when
/// `|candidate - oracle| <= absolute + relative * |oracle|`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OracleTolerance {
    pub absolute: f64,
    pub relative: f64,
}

impl OracleTolerance {
    /// For an f32 model evaluated by two f32-or-better implementations that differ in
    /// reduction order and transcendental functions: a few hundred f32 ulps of an O(1)
    /// activation (f32 epsilon is 1.2e-7; sums of 64-128 products and the layer norms'
    /// division by a standard deviation amplify each rounding by up to ~10-100).
    pub const F32: OracleTolerance = OracleTolerance {
        absolute: 1e-4,
        relative: 1e-4,
    };
}

/// How one output of a candidate compares with the oracle's.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputComparison {
    pub index: usize,
    pub max_abs_error: f64,
    /// Largest `|error| / max(|oracle|, 1e-6)`.
    pub max_rel_error: f64,
    /// Row-major index of the worst element (largest excess over the tolerance, else the
    /// largest absolute error).
    pub worst: usize,
    pub oracle_value: f64,
    pub candidate_value: f64,
    /// Elements outside the tolerance.
    pub failures: usize,
    pub elements: usize,
}

/// The comparison of a candidate's outputs with the oracle's.
#[derive(Debug, Clone, PartialEq)]
pub struct OracleComparison {
    pub outputs: Vec<OutputComparison>,
    pub tolerance: OracleTolerance,
}

impl OracleComparison {
    pub fn passed(&self) -> bool {
        self.outputs.iter().all(|output| output.failures == 0)
    }

    pub fn max_abs_error(&self) -> f64 {
        self.outputs
            .iter()
            .map(|output| output.max_abs_error)
            .fold(0.0, f64::max)
    }

    /// One line per output: `result0: max_abs_error=... max_rel_error=... failures=0/1024 PASS`.
    pub fn report(&self) -> String {
        self.outputs
            .iter()
            .map(|output| {
                format!(
                    "result{}: max_abs_error={:.3e} max_rel_error={:.3e} worst=[{}] oracle={} candidate={} failures={}/{} tolerance=abs {:e} + rel {:e} {}",
                    output.index,
                    output.max_abs_error,
                    output.max_rel_error,
                    output.worst,
                    output.oracle_value,
                    output.candidate_value,
                    output.failures,
                    output.elements,
                    self.tolerance.absolute,
                    self.tolerance.relative,
                    if output.failures == 0 { "PASS" } else { "FAIL" }
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Compares a candidate's outputs (our reference evaluator today, the simulator's outputs once
/// `ipu-compile` exists) with the oracle's outputs of the same run, element by element.
/// Shapes and counts must agree exactly; a NaN anywhere on either side fails the element.
pub fn compare_with_oracle(
    oracle: &OracleRun,
    candidate: &[HostTensor],
    tolerance: OracleTolerance,
) -> Result<OracleComparison, OracleError> {
    if candidate.len() != oracle.outputs.len() {
        return Err(OracleError::Compare {
            detail: format!(
                "the candidate has {} outputs, the oracle's @{} {}",
                candidate.len(),
                oracle.function,
                oracle.outputs.len()
            ),
        });
    }
    let mut outputs = Vec::new();
    for (index, (expected, actual)) in oracle.outputs.iter().zip(candidate).enumerate() {
        if expected.shape != actual.shape || expected.data.len() != actual.data.len() {
            return Err(OracleError::Compare {
                detail: format!(
                    "output {index}: the candidate's shape {:?} differs from the oracle's {:?}",
                    actual.shape, expected.shape
                ),
            });
        }
        let mut comparison = OutputComparison {
            index,
            max_abs_error: 0.0,
            max_rel_error: 0.0,
            worst: 0,
            oracle_value: expected.data.first().copied().unwrap_or(0.0),
            candidate_value: actual.data.first().copied().unwrap_or(0.0),
            failures: 0,
            elements: expected.data.len(),
        };
        let mut worst_excess = f64::NEG_INFINITY;
        for (position, (&want, &got)) in expected.data.iter().zip(&actual.data).enumerate() {
            let error = (got - want).abs();
            let allowed = tolerance.absolute + tolerance.relative * want.abs();
            let error_for_max = if error.is_nan() { f64::INFINITY } else { error };
            let excess = error_for_max - allowed;
            if error.is_nan() || error > allowed {
                comparison.failures += 1;
            }
            comparison.max_abs_error = comparison.max_abs_error.max(error_for_max);
            comparison.max_rel_error = comparison
                .max_rel_error
                .max(error_for_max / want.abs().max(1e-6));
            if excess > worst_excess {
                worst_excess = excess;
                comparison.worst = position;
                comparison.oracle_value = want;
                comparison.candidate_value = got;
            }
        }
        outputs.push(comparison);
    }
    Ok(OracleComparison { outputs, tolerance })
}
