//! Context setup: every upstream dialect registered, our IRDL dialects loaded.

use melior::{
    dialect::DialectRegistry,
    ir::{Location, Module},
    utility::{register_all_dialects, register_all_llvm_translations},
    Context,
};

/// The IRDL declaration of the `ipu` graph dialect.
pub const IRDL_IPU: &str = include_str!("../irdl/ipu.irdl.mlir");

/// The IRDL declaration of the `ipu_tile` tile-level dialect.
pub const IRDL_IPU_TILE: &str = include_str!("../irdl/ipu_tile.irdl.mlir");

/// Errors setting up a context.
#[derive(Debug, thiserror::Error)]
pub enum ContextError {
    #[error("the built-in IRDL declaration of dialect '{dialect}' does not parse")]
    IrdlParse { dialect: &'static str },
    #[error("the IRDL declaration of dialect '{dialect}' could not be loaded")]
    IrdlLoad { dialect: &'static str },
    #[error("IRDL file {path}: {detail}")]
    IrdlFile { path: String, detail: String },
}

/// Creates a context with every upstream dialect registered and our dialects loaded.
pub fn create_context(threading: bool) -> Result<Context, ContextError> {
    let registry = DialectRegistry::new();
    register_all_dialects(&registry);
    let context = Context::new_with_registry(&registry, threading);
    context.load_all_available_dialects();
    register_all_llvm_translations(&context);
    load_dialects(&context)?;
    Ok(context)
}

/// Loads our IRDL dialects into `context`.
pub fn load_dialects(context: &Context) -> Result<(), ContextError> {
    load_irdl_source(context, IRDL_IPU, "ipu")?;
    load_irdl_source(context, IRDL_IPU_TILE, "ipu_tile")
}

fn load_irdl_source(
    context: &Context,
    source: &str,
    dialect: &'static str,
) -> Result<(), ContextError> {
    let module = Module::parse(context, source).ok_or(ContextError::IrdlParse { dialect })?;
    if melior::utility::load_irdl_dialects(&module) {
        Ok(())
    } else {
        Err(ContextError::IrdlLoad { dialect })
    }
}

/// Loads an extra IRDL file given by the user (`ipu-opt --irdl-file=`).
pub fn load_irdl_file(context: &Context, path: &str) -> Result<(), ContextError> {
    let source = std::fs::read_to_string(path).map_err(|error| ContextError::IrdlFile {
        path: path.to_string(),
        detail: error.to_string(),
    })?;
    let module = Module::parse(context, &source).ok_or_else(|| ContextError::IrdlFile {
        path: path.to_string(),
        detail: "not a valid IRDL module (see the diagnostics above)".to_string(),
    })?;
    if melior::utility::load_irdl_dialects(&module) {
        Ok(())
    } else {
        Err(ContextError::IrdlFile {
            path: path.to_string(),
            detail: "IRDL loading failed".to_string(),
        })
    }
}

/// An unknown location, for ops built without a source position.
pub fn unknown_location(context: &Context) -> Location<'_> {
    Location::unknown(context)
}
