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

/// Where `source` holds a NUL byte, as (line, column), 1-based. MLIR's parser stops at one
/// (silently dropping the rest) and melior's `Module::parse` panics on one, so every tool
/// refuses such text with this position.
pub fn nul_byte(source: &str) -> Option<(usize, usize)> {
    let offset = source.find('\0')?;
    let before = &source[..offset];
    let line = before.matches('\n').count() + 1;
    let column = offset - before.rfind('\n').map_or(0, |newline| newline + 1) + 1;
    Some((line, column))
}

/// Parses `source` as a module; text with a NUL byte is refused with its position.
pub fn parse_module<'c>(context: &'c Context, source: &str) -> Result<Module<'c>, String> {
    if let Some((line, column)) = nul_byte(source) {
        return Err(format!(
            "contains a NUL byte at line {line}, column {column}"
        ));
    }
    Module::parse(context, source)
        .ok_or_else(|| "does not parse (see the diagnostics above)".to_string())
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
    let module = parse_module(context, &source).map_err(|detail| ContextError::IrdlFile {
        path: path.to_string(),
        detail: format!("not a valid IRDL module: {detail}"),
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
