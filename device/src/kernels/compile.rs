//! The kernel compiler: specialized MLIR -> LLVM dialect (upstream passes) -> LLVM IR ->
//! optimized native object for the host, which is what the simulator executes.

use std::cell::RefCell;
use std::ffi::c_void;
use std::rc::Rc;
use std::sync::OnceLock;

use inkwell::context::Context as LlvmContext;
use inkwell::module::Module as LlvmModule;
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::{
    CodeModel, FileType, InitializationConfig, RelocMode, Target, TargetMachine,
};
use inkwell::OptimizationLevel;
use melior::dialect::DialectRegistry;
use melior::ir::Module;
use melior::utility::{register_all_dialects, register_all_llvm_translations, register_all_passes};
use melior::Context;
use mlir_sys::{
    mlirAttributeGetType, mlirAttributeIsAString, mlirIdentifierStr, mlirIntegerAttrGet,
    mlirOpPassManagerAddPipeline, mlirOperationGetAttributeByName, mlirOperationGetName,
    mlirOperationRemoveAttributeByName, mlirOperationSetAttributeByName, mlirOperationWalk,
    mlirPassManagerCreateOnOperation, mlirPassManagerDestroy, mlirPassManagerGetAsOpPassManager,
    mlirPassManagerRunOnOp, mlirStringAttrGetValue, mlirTranslateModuleToLLVMIR, MlirOperation,
    MlirStringRef, MlirWalkOrder_MlirWalkPreOrder, MlirWalkResult,
    MlirWalkResult_MlirWalkResultAdvance,
};

use super::error::KernelError;
use super::source::module_text;
use super::spec::KernelSpec;

/// Upstream lowering to the LLVM dialect. `inline` + `canonicalize` first so the specialized
/// constants fold the precision switches and loop bounds away; math ops LLVM knows become
/// intrinsics, the rest (erf, tanh) libm calls; `convert-cf-to-llvm` is required (TOOLCHAIN.md).
pub const PIPELINE: &str = "inline,canonicalize,cse,convert-math-to-llvm,convert-math-to-libm,\
convert-vector-to-llvm,convert-scf-to-cf,convert-cf-to-llvm,convert-arith-to-llvm,\
finalize-memref-to-llvm,convert-func-to-llvm,reconcile-unrealized-casts";

/// LLVM optimization pipeline run on the translated module.
pub const LLVM_PIPELINE: &str = "default<O3>";

/// Bumped whenever code generation changes in a way the sources and pipeline strings do not
/// show (it is part of the cache key).
pub const COMPILER_REVISION: u32 = 1;

/// The machine kernels are compiled for. Objects run natively in the simulator, so they target
/// the host CPU (F16C/AVX-512 conversions instead of libcalls); the CPU is in the cache key.
#[derive(Debug, Clone)]
pub struct HostTarget {
    pub triple: String,
    pub cpu: String,
    pub features: String,
    pub llvm_version: String,
}

/// The host target, initializing LLVM's native target once per process.
pub fn host_target() -> Result<&'static HostTarget, KernelError> {
    static HOST: OnceLock<Result<HostTarget, String>> = OnceLock::new();
    HOST.get_or_init(|| {
        Target::initialize_native(&InitializationConfig::default())?;
        let (major, minor, patch) = inkwell::support::get_llvm_version();
        Ok(HostTarget {
            triple: TargetMachine::get_default_triple()
                .as_str()
                .to_string_lossy()
                .into_owned(),
            cpu: TargetMachine::get_host_cpu_name().to_string(),
            features: TargetMachine::get_host_cpu_features().to_string(),
            llvm_version: format!("{major}.{minor}.{patch}"),
        })
    })
    .as_ref()
    .map_err(|detail| KernelError::Llvm {
        kernel: "(target)".into(),
        detail: detail.clone(),
    })
}

/// Compiles `spec` to a relocatable (PIC) host object. Returns the object bytes.
pub fn compile_object(spec: &KernelSpec) -> Result<Vec<u8>, KernelError> {
    spec.validate()?;
    let kernel = spec.name();
    let text = module_text(spec)?;
    let target = host_target()?;

    let registry = DialectRegistry::new();
    register_all_dialects(&registry);
    // Kernels are small; MLIR's thread pool would only compete with the simulator's threads.
    let context = Context::new_with_registry(&registry, false);
    // Dialects load on demand while parsing and when passes need them: loading all of the
    // ~100 registered dialects up front would dominate a kernel's compile time.
    register_all_llvm_translations(&context);
    register_all_passes();
    let diagnostics = Rc::new(RefCell::new(Vec::<String>::new()));
    let sink = Rc::clone(&diagnostics);
    let handler = context.attach_diagnostic_handler(move |diagnostic| {
        sink.borrow_mut()
            .push(format!("{} {}", diagnostic.location(), diagnostic));
        true
    });
    let take =
        |d: &Rc<RefCell<Vec<String>>>| d.borrow_mut().drain(..).collect::<Vec<_>>().join("; ");

    let result = (|| {
        let module = Module::parse(&context, &text).ok_or_else(|| KernelError::Parse {
            kernel: kernel.clone(),
            diagnostics: take(&diagnostics),
        })?;
        let module_op = module.as_operation().to_raw();
        specialize(module_op, spec, &kernel)?;
        run_pipeline(&context, module_op).map_err(|detail| KernelError::Lowering {
            kernel: kernel.clone(),
            diagnostics: format!("{detail}: {}", take(&diagnostics)),
        })?;
        translate_and_emit(module_op, target, &kernel)
    })();
    context.detach_diagnostic_handler(handler);
    result
}

/// Replaces the value of every `arith.constant {ipu.param = "<name>"}` with the spec's value.
/// Every marked constant must have a value and every value must be used, so a renamed
/// parameter cannot silently keep its default.
fn specialize(
    module_op: MlirOperation,
    spec: &KernelSpec,
    kernel: &str,
) -> Result<(), KernelError> {
    unsafe extern "C" fn collect(op: MlirOperation, user: *mut c_void) -> MlirWalkResult {
        // SAFETY: `user` is the `Vec<MlirOperation>` passed to `mlirOperationWalk` below.
        let found = unsafe { &mut *(user as *mut Vec<MlirOperation>) };
        let name = unsafe { string_ref(mlirIdentifierStr(mlirOperationGetName(op))) };
        if name == "arith.constant" {
            let attr = unsafe { mlirOperationGetAttributeByName(op, str_ref(PARAM_ATTR)) };
            if !attr.ptr.is_null() {
                found.push(op);
            }
        }
        MlirWalkResult_MlirWalkResultAdvance
    }
    const PARAM_ATTR: &str = "ipu.param";

    let mut marked: Vec<MlirOperation> = Vec::new();
    // SAFETY: the module outlives the walk; the callback only reads the operations.
    unsafe {
        mlirOperationWalk(
            module_op,
            Some(collect),
            &mut marked as *mut _ as *mut c_void,
            MlirWalkOrder_MlirWalkPreOrder,
        )
    };
    let params = spec.params();
    let mut used = vec![false; params.len()];
    for op in marked {
        // SAFETY: `op` is a live arith.constant of the module; attributes are uniqued in the
        // module's context, which is alive.
        unsafe {
            let tag = mlirOperationGetAttributeByName(op, str_ref(PARAM_ATTR));
            if !mlirAttributeIsAString(tag) {
                return Err(source_error(
                    spec,
                    "an ipu.param attribute is not a string".into(),
                ));
            }
            let name = string_ref(mlirStringAttrGetValue(tag));
            let index = params.iter().position(|(p, _)| *p == name).ok_or_else(|| {
                source_error(
                    spec,
                    format!("marked constant {name:?} has no value in {kernel}'s parameters"),
                )
            })?;
            used[index] = true;
            let old = mlirOperationGetAttributeByName(op, str_ref("value"));
            let value = mlirIntegerAttrGet(mlirAttributeGetType(old), params[index].1);
            mlirOperationSetAttributeByName(op, str_ref("value"), value);
            mlirOperationRemoveAttributeByName(op, str_ref(PARAM_ATTR));
        }
    }
    if let Some((name, _)) = params
        .iter()
        .zip(&used)
        .find(|(_, used)| !**used)
        .map(|(p, _)| p)
    {
        return Err(source_error(
            spec,
            format!("parameter {name:?} of {kernel} is not marked in the source"),
        ));
    }
    Ok(())
}

fn source_error(spec: &KernelSpec, detail: String) -> KernelError {
    KernelError::Source {
        file: spec.source_file().to_string(),
        detail,
    }
}

fn run_pipeline(context: &Context, module_op: MlirOperation) -> Result<(), String> {
    // SAFETY: plain C API calls on live objects; the pass manager is destroyed on every path.
    unsafe {
        let pm = mlirPassManagerCreateOnOperation(context.to_raw(), str_ref("builtin.module"));
        struct Guard(mlir_sys::MlirPassManager);
        impl Drop for Guard {
            fn drop(&mut self) {
                unsafe { mlirPassManagerDestroy(self.0) }
            }
        }
        let guard = Guard(pm);
        let mut error = String::new();
        unsafe extern "C" fn append(text: MlirStringRef, user: *mut c_void) {
            let out = unsafe { &mut *(user as *mut String) };
            out.push_str(&unsafe { string_ref(text) });
        }
        let parsed = mlirOpPassManagerAddPipeline(
            mlirPassManagerGetAsOpPassManager(guard.0),
            str_ref(PIPELINE),
            Some(append),
            &mut error as *mut String as *mut c_void,
        );
        if parsed.value == 0 {
            return Err(format!("pipeline {PIPELINE:?} does not parse: {error}"));
        }
        let ran = mlirPassManagerRunOnOp(guard.0, module_op);
        if ran.value == 0 {
            return Err("a pass failed".into());
        }
    }
    Ok(())
}

fn translate_and_emit(
    module_op: MlirOperation,
    target: &HostTarget,
    kernel: &str,
) -> Result<Vec<u8>, KernelError> {
    let llvm_error = |detail: String| KernelError::Llvm {
        kernel: kernel.to_string(),
        detail,
    };
    let llvm_context = LlvmContext::create();
    // SAFETY: the translation creates a module owned by `llvm_context`; wrapping it hands
    // ownership to inkwell, which disposes it before the context (declared after it).
    let raw = unsafe { mlirTranslateModuleToLLVMIR(module_op, llvm_context.raw() as *mut _) };
    if raw.is_null() {
        return Err(llvm_error(
            "translation of the LLVM dialect module to LLVM IR failed".into(),
        ));
    }
    let module: LlvmModule = unsafe { LlvmModule::new(raw as *mut _) };
    let triple = TargetMachine::get_default_triple();
    let llvm_target = Target::from_triple(&triple).map_err(|e| llvm_error(e.to_string()))?;
    let machine = llvm_target
        .create_target_machine(
            &triple,
            &target.cpu,
            &target.features,
            OptimizationLevel::Aggressive,
            RelocMode::PIC,
            CodeModel::Default,
        )
        .ok_or_else(|| {
            llvm_error(format!(
                "no target machine for {} cpu {}",
                target.triple, target.cpu
            ))
        })?;
    module.set_triple(&triple);
    module.set_data_layout(&machine.get_target_data().get_data_layout());
    module
        .verify()
        .map_err(|e| llvm_error(format!("translated module does not verify: {e}")))?;
    module
        .run_passes(LLVM_PIPELINE, &machine, PassBuilderOptions::create())
        .map_err(|e| llvm_error(format!("{LLVM_PIPELINE}: {e}")))?;
    let buffer = machine
        .write_to_memory_buffer(&module, FileType::Object)
        .map_err(|e| llvm_error(format!("object emission: {e}")))?;
    Ok(buffer.as_slice().to_vec())
}

fn str_ref(text: &str) -> MlirStringRef {
    MlirStringRef {
        data: text.as_ptr() as *const _,
        length: text.len(),
    }
}

/// # Safety
/// `text` must point to `length` valid bytes.
unsafe fn string_ref(text: MlirStringRef) -> String {
    if text.data.is_null() {
        return String::new();
    }
    let bytes = unsafe { std::slice::from_raw_parts(text.data as *const u8, text.length) };
    String::from_utf8_lossy(bytes).into_owned()
}
