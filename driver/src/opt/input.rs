//! Reading ipu-opt's input: text or bytecode, from a file or standard input, parsed by MLIR's
//! tool parser with locations pointing at the file the user wrote, after the checks MLIR's
//! recursive parser needs (nesting depth).

use std::io::Read;
use std::path::PathBuf;

use melior::{ir::operation::OperationLike, Context};

use super::{error, Failed};
use crate::diagnostics::Collector;

/// How deeply brackets (`{ ( [ <`) may nest in the input: a region nests two (`({`), so this
/// allows about 500 nested regions. MLIR parses, verifies and prints nested IR recursively; far
/// deeper input overflows the stack and crashes mlir-opt.
pub(super) const MAX_NESTING: usize = 1000;

/// The position (line, column) of the first bracket nested deeper than [`MAX_NESTING`], outside
/// strings and `//` comments. Scans bytes: brackets, quotes and newlines are ASCII and never
/// part of a multi-byte UTF-8 character.
pub(super) fn too_deep(source: &str) -> Option<(usize, usize)> {
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

/// `--irdl-file`: loads a dialect declared in IRDL. MLIR aborts the process when a dialect is
/// registered twice, so a file declaring a dialect the context already has is refused, except
/// our own ipu declaration (which mlir-opt needs, and a user may pass out of habit): it is
/// built in, so loading it again is a no-op.
pub(super) fn load_extra_irdl(context: &Context, path: &str) -> Result<(), Failed> {
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
pub(super) fn parse_module<'c>(
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
pub(super) fn op_ref<'c, 'a>(
    op: &'a melior::ir::operation::Operation<'c>,
) -> melior::ir::OperationRef<'c, 'a> {
    // SAFETY: the op is owned by the caller and outlives the reference.
    unsafe { melior::ir::OperationRef::from_raw(op.to_raw()) }
}

/// How the input is parsed (mlir-opt's --no-implicit-module and
/// --mlir-very-unsafe-disable-verifier-on-parsing).
#[derive(Clone, Copy)]
pub(super) struct Parsing {
    pub(super) verify: bool,
    pub(super) implicit_module: bool,
}

/// Points the locations the parser gave a temporary chunk file back at the input file, so printed
/// `loc(...)`, later diagnostics and reproducers name the file the user wrote (as mlir-opt does).
pub(super) fn relocate(
    context: &Context,
    root: melior::ir::OperationRef,
    temporary: &str,
    file_name: &str,
) {
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

pub(super) static TEMP_COUNTER: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(0);

/// The magic number that starts MLIR bytecode.
pub(super) const BYTECODE_MAGIC: &[u8] = b"ML\xefR";

/// Reads the input: its name for diagnostics, its text, and its bytes instead when it is MLIR
/// bytecode (which mlir-opt accepts wherever it accepts text).
pub(super) fn read_input(path: &str) -> Result<(String, String, Option<Vec<u8>>), Failed> {
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
pub(super) struct TemporaryFile(PathBuf);

impl TemporaryFile {
    pub(super) fn write(bytes: &[u8]) -> Result<TemporaryFile, Failed> {
        let path =
            std::env::temp_dir().join(format!("ipu-opt-{}-stdin.mlirbc", std::process::id()));
        std::fs::write(&path, bytes)
            .map_err(|e| error(format!("cannot write '{}': {e}", path.display())))?;
        Ok(TemporaryFile(path))
    }

    pub(super) fn path_text(&self) -> String {
        self.0.display().to_string()
    }
}

impl Drop for TemporaryFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}
