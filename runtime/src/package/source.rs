//! The `source` section: what the host reference needs to check a run of the package.
//!
//! A package built by the compiler records the `ipu` graph module it was compiled from (its
//! MLIR text, as given to the compiler), the name of the function it lowered, and the
//! precision policy of the lowering (native element types, or FP8 E4M3 GEMM inputs at a
//! power-of-two scale). `ipu run` evaluates that function with `ipu_runtime::reference` on the
//! inputs the device received and compares (the numerical test); a package without a source
//! (hand-built, or read from a version 1 file) reports the numerical test as skipped.
//!
//! ## Encoding (section kind 9, `source`)
//! Empty content: the package has no source. Otherwise a postcard varint, the version of the
//! section's layout ([`SOURCE_SECTION_VERSION`]), followed by the postcard encoding of that
//! version's record:
//!
//! | version | record |
//! |---|---|
//! | 1 | `module: String, function: String, precision: SourcePrecision` |
//!
//! A reader refuses a version it does not know, text that is not UTF-8 and lengths beyond
//! the section (postcard checks every length against the bytes that remain before taking
//! them, so a hostile length allocates nothing), and [`PackageSource::validate`] checks the
//! decoded record.

use ipu_device::numerics::validate_scale;
use serde::{Deserialize, Serialize};

use super::PackageError;
use crate::container::{self, FormatSpec, Section};

/// Version of the `source` section's record.
pub const SOURCE_SECTION_VERSION: u32 = 1;

/// The precision policy the compiler lowered GEMM inputs with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SourcePrecision {
    /// The tensors' own element types.
    Native,
    /// GEMM inputs cast on the device to FP8 E4M3 (`value = code * 2^scale_exp`).
    Fp8 { scale_exp: i32 },
}

impl SourcePrecision {
    /// `native` or `fp8 scale=N`, for messages and `ipu inspect`.
    pub fn describe(&self) -> String {
        match self {
            SourcePrecision::Native => "native".to_string(),
            SourcePrecision::Fp8 { scale_exp } => format!("fp8 scale={scale_exp}"),
        }
    }
}

/// The source module of a package and how it was compiled (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageSource {
    /// The `ipu` graph module, MLIR text.
    pub module: String,
    /// Symbol name (without `@`) of the function the package runs.
    pub function: String,
    pub precision: SourcePrecision,
}

/// Version 1 of the section's record.
#[derive(Serialize, Deserialize)]
struct WireSourceV1 {
    module: String,
    function: String,
    precision: SourcePrecision,
}

impl PackageSource {
    pub fn new(
        module: impl Into<String>,
        function: impl Into<String>,
        precision: SourcePrecision,
    ) -> PackageSource {
        PackageSource {
            module: module.into(),
            function: function.into(),
            precision,
        }
    }

    /// Checks what a reader relies on: a non-empty module and function name, a function name
    /// that is a plain symbol, and an FP8 scale the numerics accept.
    pub fn validate(&self) -> Result<(), PackageError> {
        let fail = |detail: String| Err(PackageError::Source { detail });
        if self.module.trim().is_empty() {
            return fail("the module text is empty".into());
        }
        if self.function.is_empty() {
            return fail("the function name is empty".into());
        }
        if self.function.len() > 1024
            || self
                .function
                .chars()
                .any(|c| c.is_control() || c.is_whitespace() || c == '@')
        {
            return fail(format!(
                "function name {:?} is not a symbol name",
                self.function.chars().take(64).collect::<String>()
            ));
        }
        if let SourcePrecision::Fp8 { scale_exp } = self.precision {
            if let Err(error) = validate_scale(scale_exp) {
                return fail(format!("FP8 scale exponent {scale_exp}: {error}"));
            }
        }
        Ok(())
    }
}

/// The section content for `source` (empty for none).
pub(super) fn encode(
    spec: &FormatSpec,
    source: Option<&PackageSource>,
) -> Result<Vec<u8>, PackageError> {
    let Some(source) = source else {
        return Ok(Vec::new());
    };
    let mut bytes = container::to_section(spec, "source", &SOURCE_SECTION_VERSION)?;
    bytes.extend(container::to_section(
        spec,
        "source",
        &WireSourceV1 {
            module: source.module.clone(),
            function: source.function.clone(),
            precision: source.precision,
        },
    )?);
    Ok(bytes)
}

/// Decodes the `source` section (see the module docs).
pub(super) fn decode(
    spec: &FormatSpec,
    section: &Section,
) -> Result<Option<PackageSource>, PackageError> {
    if section.bytes.is_empty() {
        return Ok(None);
    }
    let (version, record): (u32, &[u8]) =
        postcard::take_from_bytes(section.bytes).map_err(|e| {
            PackageError::Format(container::FormatError::Decode {
                format: spec.name,
                section: section.name,
                detail: format!("section version: {e}"),
            })
        })?;
    if version != SOURCE_SECTION_VERSION {
        return Err(PackageError::SourceVersion {
            found: version,
            supported: SOURCE_SECTION_VERSION,
        });
    }
    let record_section = Section {
        bytes: record,
        file_offset: section.file_offset + (section.bytes.len() - record.len()) as u64,
        ..*section
    };
    let wire: WireSourceV1 = container::from_section(spec, &record_section)?;
    Ok(Some(PackageSource {
        module: wire.module,
        function: wire.function,
        precision: wire.precision,
    }))
}
