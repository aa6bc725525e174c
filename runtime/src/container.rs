//! The binary container shared by `.ipuexe` and `.ipuprof`: a fixed header, then
//! length-prefixed sections, with one sha256 over everything.
//!
//! ```text
//! offset  size  field
//!      0     8  magic (format specific, e.g. 89 'I' 'P' 'U' 'E' 'X' 'E' 0a)
//!      8     4  format version, u32 little-endian
//!     12     4  header length = 96 (a reader refuses any other value)
//!     16     4  section count
//!     20     4  reserved, 0
//!     24     8  payload length in bytes (everything after the header)
//!     32    32  sha256 over the header with this field zeroed, then the payload
//!     64    32  compiler version, UTF-8, NUL padded
//!     96     -  payload: sections, each
//!                 kind u32 | reserved u32 (0) | length u64 | `length` bytes
//! ```
//! The magic starts with 0x89 and ends with `\n`, as PNG's does, so that a 7-bit or a
//! newline-translating transfer is caught by the magic rather than by a confusing checksum
//! error. The checksum covers the header too, so a flipped bit in the version string or a
//! section count is a checksum error, not a silently different file.
//!
//! Reading never allocates from a length in the file before checking it against the bytes
//! that remain: the section table is walked in place and sections are borrowed slices.

use sha2::{Digest, Sha256};

/// Bytes of the fixed header.
pub const HEADER_BYTES: usize = 96;
const CHECKSUM_AT: usize = 32;
const COMPILER_AT: usize = 64;
const COMPILER_BYTES: usize = 32;
const SECTION_HEADER_BYTES: usize = 16;

/// Identity of one file format built on the container.
#[derive(Debug, Clone, Copy)]
pub struct FormatSpec {
    /// Human name for messages (`application package`, `profile`).
    pub name: &'static str,
    pub magic: [u8; 8],
    pub version: u32,
    /// Section kinds in the order they must appear, each exactly once, with names for messages.
    pub sections: &'static [(u32, &'static str)],
}

/// Why a file is not a well-formed container of the expected format. Every message names the
/// format and carries the numbers needed to see what is wrong.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    #[error("{format}: file is {available} bytes, too short for {what} ({needed} bytes needed)")]
    Truncated {
        format: &'static str,
        what: String,
        needed: u64,
        available: u64,
    },
    #[error("{format}: bad magic {found} (expected {expected}): not a file of this format")]
    BadMagic {
        format: &'static str,
        found: String,
        expected: String,
    },
    #[error(
        "{format}: format version {found} is not supported (this build reads version {supported})"
    )]
    UnsupportedVersion {
        format: &'static str,
        found: u32,
        supported: u32,
    },
    #[error("{format}: header length {found} is not {expected}")]
    HeaderLength {
        format: &'static str,
        found: u32,
        expected: usize,
    },
    #[error("{format}: reserved header field is {found:#x}, expected 0")]
    Reserved { format: &'static str, found: u32 },
    #[error("{format}: header declares a {declared}-byte payload, the file holds {actual} bytes after the header")]
    PayloadLength {
        format: &'static str,
        declared: u64,
        actual: u64,
    },
    #[error("{format}: checksum mismatch: header records sha256 {recorded}, content hashes to {actual} (file is corrupt)")]
    Checksum {
        format: &'static str,
        recorded: String,
        actual: String,
    },
    #[error("{format}: compiler version field is not NUL-padded UTF-8")]
    CompilerVersion { format: &'static str },
    #[error("{format}: compiler version '{version}' is longer than {max} bytes")]
    CompilerVersionTooLong {
        format: &'static str,
        version: String,
        max: usize,
    },
    #[error(
        "{format}: section {index} (kind {kind}) declares {length} bytes, only {remaining} remain"
    )]
    SectionOverrun {
        format: &'static str,
        index: u32,
        kind: u32,
        length: u64,
        remaining: u64,
    },
    #[error("{format}: section {index} has kind {found}, expected kind {expected} ({name})")]
    SectionKind {
        format: &'static str,
        index: u32,
        found: u32,
        expected: u32,
        name: &'static str,
    },
    #[error("{format}: header declares {declared} sections, this version has {expected}")]
    SectionCount {
        format: &'static str,
        declared: u32,
        expected: usize,
    },
    #[error("{format}: section {name} has reserved field {found:#x}, expected 0")]
    SectionReserved {
        format: &'static str,
        name: &'static str,
        found: u32,
    },
    #[error("{format}: {trailing} bytes follow the last section")]
    TrailingBytes { format: &'static str, trailing: u64 },
    #[error("{format}: section {section} does not decode: {detail}")]
    Decode {
        format: &'static str,
        section: &'static str,
        detail: String,
    },
    #[error("{format}: section {section} has {trailing} unused bytes after its content")]
    SectionTrailing {
        format: &'static str,
        section: &'static str,
        trailing: usize,
    },
    #[error("{format}: section {section} could not be encoded: {detail}")]
    Encode {
        format: &'static str,
        section: &'static str,
        detail: String,
    },
    #[error("{format}: {path} is {size} bytes, more than the {max} bytes any valid file can have")]
    TooLarge {
        format: &'static str,
        path: String,
        size: u64,
        max: u64,
    },
    #[error("{format}: {action} {path}: {source}")]
    Io {
        format: &'static str,
        action: &'static str,
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{format}: {source}")]
    Output {
        format: &'static str,
        #[source]
        source: crate::output::OutputError,
    },
}

/// A decoded container: the compiler version and the sections in [`FormatSpec::sections`]
/// order, borrowed from the file bytes, with their file offsets.
#[derive(Debug)]
pub struct Container<'a> {
    pub version: u32,
    pub compiler: String,
    pub sections: Vec<Section<'a>>,
}

#[derive(Debug, Clone, Copy)]
pub struct Section<'a> {
    pub kind: u32,
    pub name: &'static str,
    /// Offset of the section's first content byte in the file.
    pub file_offset: u64,
    pub bytes: &'a [u8],
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn checksum(header: &[u8], payload: &[u8]) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(&header[..CHECKSUM_AT]);
    hasher.update([0u8; 32]);
    hasher.update(&header[COMPILER_AT..HEADER_BYTES]);
    hasher.update(payload);
    hasher.finalize().into()
}

/// Encodes sections (in the spec's order, one per kind) into a complete file.
pub fn encode(
    spec: &FormatSpec,
    compiler: &str,
    sections: &[Vec<u8>],
) -> Result<Vec<u8>, FormatError> {
    if compiler.len() > COMPILER_BYTES || compiler.contains('\0') {
        return Err(FormatError::CompilerVersionTooLong {
            format: spec.name,
            version: compiler.to_string(),
            max: COMPILER_BYTES,
        });
    }
    if sections.len() != spec.sections.len() {
        return Err(FormatError::Encode {
            format: spec.name,
            section: "(table)",
            detail: format!(
                "{} sections given, the format has {}",
                sections.len(),
                spec.sections.len()
            ),
        });
    }
    let payload_bytes: usize = sections
        .iter()
        .map(|s| SECTION_HEADER_BYTES + s.len())
        .sum();
    let mut out = Vec::with_capacity(HEADER_BYTES + payload_bytes);
    out.extend_from_slice(&spec.magic);
    out.extend_from_slice(&spec.version.to_le_bytes());
    out.extend_from_slice(&(HEADER_BYTES as u32).to_le_bytes());
    out.extend_from_slice(&(spec.sections.len() as u32).to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&(payload_bytes as u64).to_le_bytes());
    out.extend_from_slice(&[0u8; 32]);
    let mut compiler_field = [0u8; COMPILER_BYTES];
    compiler_field[..compiler.len()].copy_from_slice(compiler.as_bytes());
    out.extend_from_slice(&compiler_field);
    debug_assert_eq!(out.len(), HEADER_BYTES);
    for (&(kind, _), bytes) in spec.sections.iter().zip(sections) {
        out.extend_from_slice(&kind.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        out.extend_from_slice(bytes);
    }
    let sum = checksum(&out[..HEADER_BYTES], &out[HEADER_BYTES..]);
    out[CHECKSUM_AT..CHECKSUM_AT + 32].copy_from_slice(&sum);
    Ok(out)
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    let mut word = [0u8; 4];
    word.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(word)
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(word)
}

/// Checks `file` starts with the format's magic.
fn check_magic(spec: &FormatSpec, file: &[u8]) -> Result<(), FormatError> {
    let format = spec.name;
    if file.len() < 8 && spec.magic.starts_with(file) {
        return Err(FormatError::Truncated {
            format,
            what: "the magic".into(),
            needed: 8,
            available: file.len() as u64,
        });
    }
    if file.len() < 8 || file[..8] != spec.magic {
        let found = &file[..file.len().min(8)];
        return Err(FormatError::BadMagic {
            format,
            found: hex(found),
            expected: hex(&spec.magic),
        });
    }
    Ok(())
}

/// Checks the header's version and length, the payload length it declares and the
/// checksum; returns the version.
fn check_framing(spec: &FormatSpec, file: &[u8]) -> Result<u32, FormatError> {
    let format = spec.name;
    let available = file.len() as u64;
    if file.len() < HEADER_BYTES {
        return Err(FormatError::Truncated {
            format,
            what: "the header".into(),
            needed: HEADER_BYTES as u64,
            available,
        });
    }
    let header = &file[..HEADER_BYTES];
    let version = u32_at(header, 8);
    if version != spec.version {
        return Err(FormatError::UnsupportedVersion {
            format,
            found: version,
            supported: spec.version,
        });
    }
    let header_length = u32_at(header, 12);
    if header_length as usize != HEADER_BYTES {
        return Err(FormatError::HeaderLength {
            format,
            found: header_length,
            expected: HEADER_BYTES,
        });
    }
    let payload = &file[HEADER_BYTES..];
    let declared = u64_at(header, 24);
    if declared != payload.len() as u64 {
        return Err(if declared > payload.len() as u64 {
            FormatError::Truncated {
                format,
                what: format!("the {declared}-byte payload the header declares"),
                needed: declared.saturating_add(HEADER_BYTES as u64),
                available,
            }
        } else {
            FormatError::PayloadLength {
                format,
                declared,
                actual: payload.len() as u64,
            }
        });
    }
    let recorded = &header[CHECKSUM_AT..CHECKSUM_AT + 32];
    let actual = checksum(header, payload);
    if recorded != actual {
        return Err(FormatError::Checksum {
            format,
            recorded: hex(recorded),
            actual: hex(&actual),
        });
    }
    Ok(version)
}

/// The compiler version recorded in the header: UTF-8, NUL-padded with nothing after the
/// first NUL.
fn read_compiler(format: &'static str, header: &[u8]) -> Result<String, FormatError> {
    let compiler_field = &header[COMPILER_AT..COMPILER_AT + COMPILER_BYTES];
    let used = compiler_field
        .iter()
        .position(|&b| b == 0)
        .unwrap_or(COMPILER_BYTES);
    if compiler_field[used..].iter().any(|&b| b != 0) {
        return Err(FormatError::CompilerVersion { format });
    }
    Ok(std::str::from_utf8(&compiler_field[..used])
        .map_err(|_| FormatError::CompilerVersion { format })?
        .to_string())
}

/// Reads the section table of `payload`: the declared count, each section's header and
/// extent in the spec's order, and no bytes after the last. `available` is the file's size.
fn read_sections<'a>(
    spec: &FormatSpec,
    section_count: u32,
    payload: &'a [u8],
    available: u64,
) -> Result<Vec<Section<'a>>, FormatError> {
    let format = spec.name;
    if section_count as usize != spec.sections.len() {
        return Err(FormatError::SectionCount {
            format,
            declared: section_count,
            expected: spec.sections.len(),
        });
    }
    let mut sections = Vec::with_capacity(spec.sections.len());
    let mut at = 0usize;
    for (index, &(expected, name)) in spec.sections.iter().enumerate() {
        let index = index as u32;
        let remaining = payload.len() - at;
        if remaining < SECTION_HEADER_BYTES {
            return Err(FormatError::Truncated {
                format,
                what: format!("the header of section {index} ({name})"),
                needed: (HEADER_BYTES + at + SECTION_HEADER_BYTES) as u64,
                available,
            });
        }
        let kind = u32_at(payload, at);
        if kind != expected {
            return Err(FormatError::SectionKind {
                format,
                index,
                found: kind,
                expected,
                name,
            });
        }
        let section_reserved = u32_at(payload, at + 4);
        if section_reserved != 0 {
            return Err(FormatError::SectionReserved {
                format,
                name,
                found: section_reserved,
            });
        }
        let length = u64_at(payload, at + 8);
        at += SECTION_HEADER_BYTES;
        let remaining = (payload.len() - at) as u64;
        if length > remaining {
            return Err(FormatError::SectionOverrun {
                format,
                index,
                kind,
                length,
                remaining,
            });
        }
        // length <= remaining <= usize::MAX, so the cast is exact.
        let length = length as usize;
        sections.push(Section {
            kind,
            name,
            file_offset: (HEADER_BYTES + at) as u64,
            bytes: &payload[at..at + length],
        });
        at += length;
    }
    if at != payload.len() {
        return Err(FormatError::TrailingBytes {
            format,
            trailing: (payload.len() - at) as u64,
        });
    }
    Ok(sections)
}

/// Checks the header, the checksum and the section table of `file`.
pub fn decode<'a>(spec: &FormatSpec, file: &'a [u8]) -> Result<Container<'a>, FormatError> {
    let format = spec.name;
    check_magic(spec, file)?;
    let version = check_framing(spec, file)?;
    let header = &file[..HEADER_BYTES];
    let payload = &file[HEADER_BYTES..];
    // Past the checksum, the file is what some writer produced; still check everything,
    // because a hostile writer can compute a checksum too.
    let reserved = u32_at(header, 20);
    if reserved != 0 {
        return Err(FormatError::Reserved {
            format,
            found: reserved,
        });
    }
    let compiler = read_compiler(format, header)?;
    let sections = read_sections(spec, u32_at(header, 16), payload, file.len() as u64)?;
    Ok(Container {
        version,
        compiler,
        sections,
    })
}

/// Serializes one section's structure with postcard.
pub fn to_section<T: serde::Serialize>(
    spec: &FormatSpec,
    section: &'static str,
    value: &T,
) -> Result<Vec<u8>, FormatError> {
    postcard::to_stdvec(value).map_err(|e| FormatError::Encode {
        format: spec.name,
        section,
        detail: e.to_string(),
    })
}

/// Deserializes one section's structure; the whole section must be used.
pub fn from_section<'a, T: serde::Deserialize<'a>>(
    spec: &FormatSpec,
    section: &Section<'a>,
) -> Result<T, FormatError> {
    let (value, rest) =
        postcard::take_from_bytes(section.bytes).map_err(|e| FormatError::Decode {
            format: spec.name,
            section: section.name,
            detail: e.to_string(),
        })?;
    if !rest.is_empty() {
        return Err(FormatError::SectionTrailing {
            format: spec.name,
            section: section.name,
            trailing: rest.len(),
        });
    }
    Ok(value)
}

/// Writes `bytes` to `path` by the tools' one output rule ([`crate::output`]): atomically
/// (a temporary file in the same directory, flushed to disk, then renamed over `path`, so a
/// reader or a crash sees the old file or the new one, never a prefix), and into a device node
/// or FIFO in place instead of replacing it.
pub fn write_atomic(
    format: &'static str,
    path: &std::path::Path,
    bytes: &[u8],
) -> Result<(), FormatError> {
    crate::output::write_output(path, &[], bytes)
        .map_err(|source| FormatError::Output { format, source })
}

/// Reads a whole file after checking its size (from the file system) against `max_bytes`,
/// so that a huge (or sparse) file is refused before anything is allocated for it.
pub fn read_file(
    format: &'static str,
    path: &std::path::Path,
    max_bytes: u64,
) -> Result<Vec<u8>, FormatError> {
    use std::io::Read;
    let io = |action: &'static str| {
        move |source| FormatError::Io {
            format,
            action,
            path: path.display().to_string(),
            source,
        }
    };
    let file = std::fs::File::open(path).map_err(io("opening"))?;
    let size = file.metadata().map_err(io("inspecting"))?.len();
    if size > max_bytes {
        return Err(FormatError::TooLarge {
            format,
            path: path.display().to_string(),
            size,
            max: max_bytes,
        });
    }
    let mut bytes = Vec::with_capacity(size as usize);
    // `take`: a file that grows while being read cannot push past the limit either.
    file.take(max_bytes)
        .read_to_end(&mut bytes)
        .map_err(io("reading"))?;
    Ok(bytes)
}
