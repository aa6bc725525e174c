//! Seeded mutation test of both file formats: truncations, bit flips, wrong versions and
//! hostile lengths must give clear errors, never a panic or a huge allocation.

use std::collections::BTreeMap;

use ipu_device::Precision;
use ipu_runtime::container::HEADER_BYTES;
use ipu_runtime::npy::Tensor;
use ipu_runtime::package::{
    PackageSource, SourcePrecision, OLDEST_PACKAGE_FORMAT_VERSION, PACKAGE_FORMAT_VERSION,
    SOURCE_SECTION_VERSION,
};
use ipu_runtime::profile::PROFILE_FORMAT_VERSION;
use ipu_runtime::BindingRole;
use ipu_runtime::{Package, PackageError, ProfileError, ProfileFile};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::alloc_probe::largest_allocation;
use crate::fixture;

/// Mutations per format: `default`, or `IPU_MUTATION_ITERATIONS` for a longer local soak.
fn iterations(default: usize) -> usize {
    std::env::var("IPU_MUTATION_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// No decode of a file of a few KiB may allocate more than this at once.
const ALLOCATION_LIMIT: usize = 1 << 20;

fn package_bytes() -> Vec<u8> {
    fixture::package()
        .to_bytes()
        .expect("fixture package encodes")
}

/// The fixture package with a `source` section (the compiler's packages carry one).
fn package_with_source() -> Package {
    let mut package = fixture::package();
    package.set_source(PackageSource::new(
        "func.func @add_roll(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {\n  return %x : tensor<4x8xf32>\n}\n",
        "add_roll",
        SourcePrecision::Fp8 { scale_exp: -3 },
    ));
    package
}

fn package_with_source_bytes() -> Vec<u8> {
    package_with_source()
        .to_bytes()
        .expect("package with source encodes")
}

fn profile_bytes() -> Vec<u8> {
    fixture::profile(&fixture::package())
        .to_bytes()
        .expect("profile encodes")
}

fn decode_package(bytes: &[u8]) -> (Result<Package, PackageError>, usize) {
    largest_allocation(|| Package::from_bytes(bytes))
}

fn decode_profile(bytes: &[u8]) -> (Result<ProfileFile, ProfileError>, usize) {
    largest_allocation(|| ProfileFile::from_bytes(bytes))
}

/// Recomputes the header checksum, as a hostile writer would, so that a mutation reaches the
/// layers behind the checksum.
fn reseal(bytes: &mut [u8]) {
    let mut hasher = Sha256::new();
    hasher.update(&bytes[..32]);
    hasher.update([0u8; 32]);
    hasher.update(&bytes[64..]);
    let sum: [u8; 32] = hasher.finalize().into();
    bytes[32..64].copy_from_slice(&sum);
}

/// Both formats behind one interface: decode and report (is_ok, message, largest allocation).
struct Format {
    name: &'static str,
    bytes: Vec<u8>,
    decode: fn(&[u8]) -> (bool, String, usize),
    /// Header versions this build reads.
    versions: &'static [u32],
}

fn decode_package_report(b: &[u8]) -> (bool, String, usize) {
    let (r, a) = decode_package(b);
    (
        r.is_ok(),
        r.err().map(|e| e.to_string()).unwrap_or_default(),
        a,
    )
}

const PACKAGE_VERSIONS: &[u32] = &[
    OLDEST_PACKAGE_FORMAT_VERSION,
    2,
    3,
    4,
    PACKAGE_FORMAT_VERSION,
];

fn formats() -> Vec<Format> {
    vec![
        Format {
            name: "package",
            bytes: package_bytes(),
            decode: decode_package_report,
            versions: PACKAGE_VERSIONS,
        },
        Format {
            name: "profile",
            bytes: profile_bytes(),
            decode: |b| {
                let (r, a) = decode_profile(b);
                (
                    r.is_ok(),
                    r.err().map(|e| e.to_string()).unwrap_or_default(),
                    a,
                )
            },
            versions: &[1, PROFILE_FORMAT_VERSION],
        },
        Format {
            name: "package with source",
            bytes: package_with_source_bytes(),
            decode: decode_package_report,
            versions: PACKAGE_VERSIONS,
        },
    ]
}

#[test]
fn intact_files_decode() {
    for format in formats() {
        let (ok, message, _) = (format.decode)(&format.bytes);
        assert!(ok, "{}: {message}", format.name);
    }
}

#[test]
fn every_truncation_is_an_error() {
    for format in formats() {
        for length in 0..format.bytes.len() {
            let (ok, message, largest) = (format.decode)(&format.bytes[..length]);
            assert!(!ok, "{} truncated to {length} bytes decoded", format.name);
            assert!(!message.is_empty());
            assert!(
                largest <= ALLOCATION_LIMIT,
                "{}: truncation to {length} allocated {largest} bytes",
                format.name
            );
        }
        let (_, message, _) = (format.decode)(&format.bytes[..format.bytes.len() - 1]);
        assert!(
            message.contains("too short") || message.contains("payload"),
            "{}: {message}",
            format.name
        );
    }
}

#[test]
fn every_single_bit_flip_is_caught() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x1b0e_5e19);
    for format in formats() {
        for _ in 0..iterations(3000) {
            let mut bytes = format.bytes.clone();
            let bit = rng.random_range(0..bytes.len() * 8);
            bytes[bit / 8] ^= 1 << (bit % 8);
            let (ok, message, largest) = (format.decode)(&bytes);
            assert!(!ok, "{}: flipping bit {bit} went unnoticed", format.name);
            // Past the header's first 32 bytes every flip is a checksum failure.
            if bit / 8 >= 32 {
                assert!(
                    message.contains("checksum"),
                    "{}: bit {bit}: {message}",
                    format.name
                );
            }
            assert!(largest <= ALLOCATION_LIMIT);
        }
    }
}

#[test]
fn wrong_versions_and_magic_are_named() {
    for format in formats() {
        let current = *format.versions.last().unwrap();
        for version in [0u32, current + 1, 7, u32::MAX] {
            if format.versions.contains(&version) {
                continue;
            }
            let mut bytes = format.bytes.clone();
            bytes[8..12].copy_from_slice(&version.to_le_bytes());
            let (ok, message, _) = (format.decode)(&bytes);
            assert!(!ok);
            assert!(
                message.contains(&format!("format version {version} is not supported")),
                "{}: {message}",
                format.name
            );
        }
        let mut bytes = format.bytes.clone();
        bytes[1] = b'X';
        let (ok, message, _) = (format.decode)(&bytes);
        assert!(!ok && message.contains("bad magic"), "{message}");
    }
    // Each format refuses the other's files by magic.
    let all = formats();
    let (_, message, _) = (all[0].decode)(&all[1].bytes);
    assert!(message.contains("bad magic"), "{message}");
}

/// The section table of a file: (kind, content offset, content length).
fn section_table(bytes: &[u8]) -> Vec<(u32, usize, usize)> {
    let count = u32::from_le_bytes(bytes[16..20].try_into().unwrap()) as usize;
    let mut at = HEADER_BYTES;
    let mut table = Vec::new();
    for _ in 0..count {
        let kind = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
        let length = u64::from_le_bytes(bytes[at + 8..at + 16].try_into().unwrap()) as usize;
        table.push((kind, at + 16, length));
        at += 16 + length;
    }
    table
}

/// The bindings section as versions 1 and 2 wrote it: pieces without runs and stride.
#[derive(Serialize)]
struct LegacyBinding<P> {
    name: String,
    role: BindingRole,
    stream: String,
    precision: Precision,
    scale_exp: i32,
    shape: Vec<u64>,
    pieces: Vec<P>,
    data_bytes: u64,
}

/// A piece of versions 1 and 2: one contiguous range.
#[derive(Serialize)]
struct LegacyPiece {
    tile: u32,
    address: u32,
    offset: u64,
    bytes: u32,
}

/// A piece of versions 3 and 4: runs without padding.
#[derive(Serialize)]
struct UnpaddedPiece {
    tile: u32,
    address: u32,
    offset: u64,
    bytes: u32,
    runs: u32,
    stride: u64,
}

/// The bindings section of `package` with each piece encoded by `piece`.
fn bindings_section<P: Serialize>(
    package: &Package,
    piece: impl Fn(&ipu_runtime::package::BindingPiece) -> P,
) -> Vec<u8> {
    let bindings: Vec<LegacyBinding<P>> = package
        .bindings
        .iter()
        .map(|b| LegacyBinding {
            name: b.name.clone(),
            role: b.role,
            stream: b.stream.clone(),
            precision: b.precision,
            scale_exp: b.scale_exp,
            shape: b.shape.clone(),
            pieces: b.pieces.iter().map(&piece).collect(),
            data_bytes: b.data.len() as u64,
        })
        .collect();
    postcard::to_stdvec(&bindings).expect("older bindings encode")
}

/// `package` written as an older version's file (every binding one slice): versions 1 and 2
/// with contiguous pieces only, without the `memory` section and, for version 1, without the
/// `source` section; version 3 with unpadded pieces, without `memory`; version 4 with
/// unpadded pieces; version 5 with bindings without their slice count.
fn legacy_package_bytes(package: &Package, version: u32) -> Vec<u8> {
    let bytes = package.to_bytes().expect("encodes");
    let bindings = if version == 5 {
        assert!(
            package.bindings.iter().all(|b| b.iterations == 1),
            "a version 5 binding is one slice"
        );
        bindings_section(package, |p| *p)
    } else if version < 3 {
        bindings_section(package, |p| {
            assert_eq!(
                (p.runs, p.stride, p.pad),
                (1, 0, 0),
                "a legacy piece is contiguous"
            );
            LegacyPiece {
                tile: p.tile,
                address: p.address,
                offset: p.offset,
                bytes: p.bytes,
            }
        })
    } else {
        bindings_section(package, |p| {
            assert_eq!(p.pad, 0, "an older piece has no padding");
            UnpaddedPiece {
                tile: p.tile,
                address: p.address,
                offset: p.offset,
                bytes: p.bytes,
                runs: p.runs,
                stride: p.stride,
            }
        })
    };
    let mut out = bytes[..HEADER_BYTES].to_vec();
    let mut sections = 0u32;
    for (kind, at, length) in section_table(&bytes) {
        if version == 1 && kind == 9 {
            assert_eq!(length, 0, "a version 1 package has no source");
            continue;
        }
        if kind == 10 && version < 4 {
            continue;
        }
        let content = if kind == 4 {
            bindings.as_slice()
        } else {
            &bytes[at..at + length]
        };
        out.extend_from_slice(&bytes[at - 16..at - 8]);
        out.extend_from_slice(&(content.len() as u64).to_le_bytes());
        out.extend_from_slice(content);
        sections += 1;
    }
    out[8..12].copy_from_slice(&version.to_le_bytes());
    out[16..20].copy_from_slice(&sections.to_le_bytes());
    let payload = (out.len() - HEADER_BYTES) as u64;
    out[24..32].copy_from_slice(&payload.to_le_bytes());
    reseal(&mut out);
    out
}

/// A version 1 file (sections 1 to 8, no `source`, pieces without runs) is read as a
/// package without a source, every piece one contiguous run.
#[test]
fn version_1_packages_are_still_read() {
    let bytes = legacy_package_bytes(&fixture::package(), 1);
    let package = Package::from_bytes(&bytes).expect("a version 1 package reads");
    assert_eq!(package, fixture::package());
    assert!(package.source.is_none());
    // A version 1 header over version 2 sections is refused by its section count.
    let mut bytes = legacy_package_bytes(&package_with_source(), 2);
    bytes[8..12].copy_from_slice(&1u32.to_le_bytes());
    reseal(&mut bytes);
    let (ok, message, _) = decode_package_report(&bytes);
    assert!(!ok && message.contains("sections"), "{message}");
}

/// A version 2 file (pieces without runs) is read with its source, every piece one
/// contiguous run; a version 2 header over version 3 pieces is refused.
#[test]
fn version_2_packages_are_still_read() {
    let bytes = legacy_package_bytes(&package_with_source(), 2);
    assert_eq!(&bytes[8..12], 2u32.to_le_bytes());
    let package = Package::from_bytes(&bytes).expect("a version 2 package reads");
    assert_eq!(package, package_with_source());
    assert!(package
        .bindings
        .iter()
        .flat_map(|b| &b.pieces)
        .all(|p| (p.runs, p.stride) == (1, 0)));
    // The legacy pieces are shorter: the same package is smaller as version 2.
    assert!(bytes.len() < package_with_source_bytes().len());
    let mut bytes = legacy_package_bytes(&package_with_source(), 3);
    bytes[8..12].copy_from_slice(&2u32.to_le_bytes());
    reseal(&mut bytes);
    let (ok, message, _) = decode_package_report(&bytes);
    assert!(!ok && message.contains("bindings"), "{message}");
}

/// A version 3 file (no `memory` section) is read with an empty memory plan; a package with
/// a memory plan round-trips it, and a plan naming a tile outside the target is refused.
#[test]
fn version_3_packages_read_without_a_memory_plan() {
    use ipu_runtime::package::{MemoryCategory, MemoryPlan, PlacedBuffer};
    let mut package = fixture::package();
    package.memory = MemoryPlan {
        buffers: vec![PlacedBuffer {
            name: "x".into(),
            category: MemoryCategory::Activations,
            class: ipu_device::MemoryClass::Standard,
            bytes: 32,
            address: 0x5c000,
            tiles: vec![(0, 3)],
            live: (0, 2),
        }],
        ..MemoryPlan::default()
    };
    let bytes = package.to_bytes().expect("encodes");
    assert_eq!(Package::from_bytes(&bytes).expect("reads"), package);
    let old = legacy_package_bytes(&package, 3);
    let read = Package::from_bytes(&old).expect("a version 3 package reads");
    assert!(read.memory.is_empty());
    package.memory.buffers[0].tiles = vec![(0, 5000)];
    let error = package.to_bytes().unwrap_err().to_string();
    assert!(error.contains("memory plan: buffer 'x'"), "{error}");
}

/// A version 4 file (pieces without padding) is read with every piece unpadded, its
/// strided runs and memory plan intact; a version 4 header over version 5 pieces is refused
/// by the bindings section.
#[test]
fn version_4_packages_read_without_padding() {
    let package = fixture::transposed_package();
    assert!(package
        .bindings
        .iter()
        .flat_map(|b| &b.pieces)
        .any(|p| p.runs > 1));
    let old = legacy_package_bytes(&package, 4);
    assert_eq!(&old[8..12], 4u32.to_le_bytes());
    assert_eq!(
        Package::from_bytes(&old).expect("a version 4 package reads"),
        package
    );
    let mut bytes = package.to_bytes().expect("encodes");
    bytes[8..12].copy_from_slice(&4u32.to_le_bytes());
    reseal(&mut bytes);
    let (ok, message, _) = decode_package_report(&bytes);
    assert!(!ok && message.contains("bindings"), "{message}");
}

/// A version 5 file (bindings without a slice count) is read with every binding one slice;
/// a version 5 header over version 6 bindings is refused by the bindings section.
#[test]
fn version_5_packages_read_as_one_slice() {
    let package = fixture::transposed_package();
    let old = legacy_package_bytes(&package, 5);
    assert_eq!(&old[8..12], 5u32.to_le_bytes());
    let read = Package::from_bytes(&old).expect("a version 5 package reads");
    assert_eq!(read, package);
    assert!(read.bindings.iter().all(|b| b.iterations == 1));
    let mut bytes = package.to_bytes().expect("encodes");
    bytes[8..12].copy_from_slice(&5u32.to_le_bytes());
    reseal(&mut bytes);
    let (ok, message, _) = decode_package_report(&bytes);
    assert!(!ok && message.contains("bindings"), "{message}");
}

/// The runs of a version 1 profile: ops with `ideal_cycles` and no roofline.
#[derive(Serialize)]
struct LegacyRun<'a> {
    program: &'a str,
    total_cycles: u64,
    steps: &'a [ipu_runtime::profile::StepInfo],
    executed: &'a [ipu_runtime::profile::ExecutedStep],
    kernel_samples: &'a [ipu_runtime::profile::KernelSample],
    tile_totals: &'a [ipu_runtime::profile::TileTotals],
    ops: Vec<LegacyOp<'a>>,
}

#[derive(Serialize)]
struct LegacyOp<'a> {
    provenance: &'a str,
    op: Option<&'a str>,
    kernel_runs: u64,
    ideal_cycles: u64,
    estimated_cycles: Option<u64>,
    achieved_cycles: u64,
}

/// A version 1 profile (no `memory` section, ops without rooflines) is still read: its
/// ideal cycles become the kernel-model figure, the rooflines and memory plan are empty.
#[test]
fn version_1_profiles_are_still_read() {
    let profile = fixture::profile(&fixture::package());
    let bytes = profile.to_bytes().expect("encodes");
    let runs: Vec<LegacyRun> = profile
        .runs
        .iter()
        .map(|r| LegacyRun {
            program: &r.program,
            total_cycles: r.total_cycles,
            steps: &r.steps,
            executed: &r.executed,
            kernel_samples: &r.kernel_samples,
            tile_totals: &r.tile_totals,
            ops: r
                .ops
                .iter()
                .map(|o| LegacyOp {
                    provenance: &o.provenance,
                    op: o.op.as_deref(),
                    kernel_runs: o.kernel_runs,
                    ideal_cycles: o.kernel_model_cycles,
                    estimated_cycles: o.estimated_cycles,
                    achieved_cycles: o.achieved_cycles,
                })
                .collect(),
        })
        .collect();
    let runs = postcard::to_stdvec(&runs).expect("legacy runs encode");
    let mut old = bytes[..HEADER_BYTES].to_vec();
    for (kind, at, length) in section_table(&bytes) {
        match kind {
            1 => old.extend_from_slice(&bytes[at - 16..at + length]),
            2 => {
                old.extend_from_slice(&bytes[at - 16..at - 8]);
                old.extend_from_slice(&(runs.len() as u64).to_le_bytes());
                old.extend_from_slice(&runs);
            }
            _ => {}
        }
    }
    old[8..12].copy_from_slice(&1u32.to_le_bytes());
    old[16..20].copy_from_slice(&2u32.to_le_bytes());
    let payload = (old.len() - HEADER_BYTES) as u64;
    old[24..32].copy_from_slice(&payload.to_le_bytes());
    reseal(&mut old);
    let read = ProfileFile::from_bytes(&old).expect("a version 1 profile reads");
    assert!(read.memory.is_empty());
    let (op, original) = (&read.runs[0].ops[0], &profile.runs[0].ops[0]);
    assert_eq!(op.kernel_model_cycles, original.kernel_model_cycles);
    assert_eq!(op.achieved_cycles, original.achieved_cycles);
    assert_eq!(op.roofline, ipu_runtime::profile::Roofline::default());
    assert_eq!(read.runs[0].executed, profile.runs[0].executed);
}

/// Rewrites the `source` section's content of a package file (and its lengths), reseals it.
fn with_source_content(bytes: &[u8], content: &[u8]) -> Vec<u8> {
    let (kind, at, length) = *section_table(bytes).iter().find(|s| s.0 == 9).unwrap();
    assert_eq!(kind, 9);
    let mut out = bytes[..at].to_vec();
    out[at - 8..at].copy_from_slice(&(content.len() as u64).to_le_bytes());
    out.extend_from_slice(content);
    out.extend_from_slice(&bytes[at + length..]);
    let payload = (out.len() - HEADER_BYTES) as u64;
    out[24..32].copy_from_slice(&payload.to_le_bytes());
    reseal(&mut out);
    out
}

#[test]
fn the_source_section_round_trips_and_refuses_bad_content() {
    let package = package_with_source();
    let bytes = package_with_source_bytes();
    assert_eq!(Package::from_bytes(&bytes).unwrap(), package);
    let (_, at, length) = *section_table(&bytes).iter().find(|s| s.0 == 9).unwrap();
    let content = bytes[at..at + length].to_vec();
    assert_eq!(content[0] as u32, SOURCE_SECTION_VERSION);
    let module_text = package.source.as_ref().unwrap().module.as_bytes();
    // Version varint, then the module's length varint, then its bytes.
    assert_eq!(content[1] as usize, module_text.len());
    assert_eq!(&content[2..2 + module_text.len()], module_text);

    let refused = |content: &[u8]| {
        let (ok, message, largest) = decode_package_report(&with_source_content(&bytes, content));
        assert!(!ok, "{content:02x?} decoded");
        assert!(largest <= ALLOCATION_LIMIT, "{largest}: {message}");
        assert!(message.contains("source"), "{message}");
        message
    };
    // Bad UTF-8 in the module text.
    let mut bad = content.clone();
    bad[2] = 0xff;
    refused(&bad);
    // A module claiming 2^35 bytes, and one longer than the section.
    let mut huge = vec![content[0], 0xff, 0xff, 0xff, 0xff, 0x7f];
    huge.extend_from_slice(&content[2..]);
    refused(&huge);
    let mut long = content.clone();
    long[1] = 0x7f;
    refused(&long);
    // An unknown section version, an empty version varint, trailing bytes.
    let mut version = content.clone();
    version[0] = 2;
    assert!(refused(&version).contains("source section version 2 is not supported"));
    refused(&[0x80]);
    let mut trailing = content.clone();
    trailing.push(0);
    refused(&trailing);
    // Decodable but invalid: an FP8 scale the numerics refuse, an empty function name.
    let mut bad_scale = package.clone();
    bad_scale.source.as_mut().unwrap().precision = SourcePrecision::Fp8 { scale_exp: 1000 };
    let error = Package::from_bytes(&bad_scale.to_bytes_unvalidated().unwrap())
        .unwrap_err()
        .to_string();
    assert!(error.contains("source: FP8 scale exponent 1000"), "{error}");
    let mut no_function = package.clone();
    no_function.source.as_mut().unwrap().function.clear();
    let error = no_function.to_bytes().unwrap_err().to_string();
    assert!(
        error.contains("source: the function name is empty"),
        "{error}"
    );
    // Seeded rewrites of the source section alone: errors or packages, never a panic.
    let mut rng = ChaCha8Rng::seed_from_u64(0x5042);
    let mut decoded = 0;
    for _ in 0..iterations(2000) {
        let mut mutated = content.clone();
        for _ in 0..rng.random_range(1..4) {
            let at = rng.random_range(0..mutated.len());
            mutated[at] = rng.random();
        }
        let (ok, message, largest) = decode_package_report(&with_source_content(&bytes, &mutated));
        assert!(largest <= ALLOCATION_LIMIT, "{largest}: {message}");
        decoded += usize::from(ok);
    }
    assert!(
        decoded > 0,
        "some rewrites (of the module text) still decode"
    );
}

/// Seeded rewrites of the runs, stride and offset of the transposed package's pieces: the
/// writer and the reader agree, a refusal names the binding, and what validates gathers and
/// scatters without a panic (an output exactly: each byte has one place).
#[test]
fn strided_piece_mutations_are_refused_or_consistent() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x57_21de);
    let tensor: Vec<u8> = (0..128u8).collect();
    let (mut valid, mut refused) = (0, 0);
    for _ in 0..iterations(3000) {
        let mut package = fixture::transposed_package();
        for _ in 0..rng.random_range(1..3) {
            let binding = rng.random_range(0..package.bindings.len());
            let count = package.bindings[binding].pieces.len();
            let piece = &mut package.bindings[binding].pieces[rng.random_range(0..count)];
            match rng.random_range(0..4) {
                0 => piece.runs = [0, 1, 2, 3, 4, 8, 16, 32, u32::MAX][rng.random_range(0..9)],
                1 => piece.stride = [0, 4, 8, 12, 16, 18, 32, u64::MAX][rng.random_range(0..8)],
                2 => piece.offset = [0, 2, 4, 8, 12, 16, 96, u64::MAX][rng.random_range(0..8)],
                _ => {
                    // A consistent contiguous piece: one run of stride 0.
                    piece.runs = 1;
                    piece.stride = 0;
                }
            }
        }
        let written = package.validate().map_err(|e| e.to_string());
        let bytes = package.to_bytes_unvalidated().unwrap();
        let read = Package::from_bytes(&bytes).map_err(|e| e.to_string());
        match (&written, &read) {
            (Ok(()), Ok(read)) => assert_eq!(read, &package),
            (Err(written), Err(read)) => assert_eq!(written, read),
            _ => panic!("writer {written:?}, reader {read:?}"),
        }
        let Err(message) = written else {
            valid += 1;
            for binding in &package.bindings {
                let length = binding.tensor_bytes().unwrap() as usize;
                let stream = binding.to_stream(&tensor[..length]).unwrap();
                let back = binding.from_stream(&stream).unwrap();
                if binding.role == BindingRole::Output {
                    assert_eq!(back, &tensor[..length], "{}", binding.name);
                }
            }
            continue;
        };
        refused += 1;
        assert!(
            package
                .bindings
                .iter()
                .any(|b| message.contains(&format!("binding '{}'", b.name))),
            "{message}"
        );
        // Gathering and scattering the refused package errors or works, never panics.
        for binding in &package.bindings {
            let length = binding.tensor_bytes().unwrap() as usize;
            if let Ok(stream) = binding.to_stream(&tensor[..length]) {
                let _ = binding.from_stream(&stream);
            }
        }
    }
    assert!(valid > 0 && refused > 0, "valid {valid}, refused {refused}");
}

#[test]
fn hostile_lengths_are_refused_without_allocating() {
    for format in formats() {
        // The payload length in the header.
        for declared in [u64::MAX, 1 << 40, format.bytes.len() as u64] {
            let mut bytes = format.bytes.clone();
            bytes[24..32].copy_from_slice(&declared.to_le_bytes());
            reseal(&mut bytes);
            let (ok, message, largest) = (format.decode)(&bytes);
            assert!(!ok, "{}: payload length {declared}", format.name);
            assert!(largest <= ALLOCATION_LIMIT, "{message}");
        }
        // The first section's length.
        for length in [u64::MAX, 1 << 40, u64::from(u32::MAX)] {
            let mut bytes = format.bytes.clone();
            let at = HEADER_BYTES + 8;
            bytes[at..at + 8].copy_from_slice(&length.to_le_bytes());
            reseal(&mut bytes);
            let (ok, message, largest) = (format.decode)(&bytes);
            assert!(!ok);
            assert!(message.contains("only"), "{}: {message}", format.name);
            assert!(largest <= ALLOCATION_LIMIT, "{message}");
        }
        // A section count that disagrees with the format.
        let mut bytes = format.bytes.clone();
        bytes[16..20].copy_from_slice(&u32::MAX.to_le_bytes());
        reseal(&mut bytes);
        let (ok, message, _) = (format.decode)(&bytes);
        assert!(!ok && message.contains("sections"), "{message}");
    }
}

/// Postcard varints claiming huge sequences and strings inside a resealed section.
#[test]
fn hostile_varints_inside_sections() {
    let bytes = package_bytes();
    // The meta section is `{ name: String }`: claim a 2^35-byte name.
    let meta_content = HEADER_BYTES + 16;
    let mut hostile = bytes.clone();
    hostile[meta_content..meta_content + 5].copy_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x7f]);
    reseal(&mut hostile);
    let (result, largest) = decode_package(&hostile);
    assert!(result.is_err());
    assert!(largest <= ALLOCATION_LIMIT, "{largest}");

    // Random byte rewrites of every section behind a valid checksum: anything may come out
    // (a rewritten data byte is still a valid package) but nothing may panic or balloon.
    let mut rng = ChaCha8Rng::seed_from_u64(0x1472);
    for format in formats() {
        let mut errors = BTreeMap::<String, usize>::new();
        for _ in 0..iterations(4000) {
            let mut bytes = format.bytes.clone();
            let edits = rng.random_range(1..4);
            for _ in 0..edits {
                let at = rng.random_range(HEADER_BYTES..bytes.len());
                bytes[at] = match rng.random_range(0..3) {
                    0 => 0xff,
                    1 => 0x00,
                    _ => rng.random(),
                };
            }
            reseal(&mut bytes);
            let (ok, message, largest) = (format.decode)(&bytes);
            assert!(
                largest <= ALLOCATION_LIMIT,
                "{}: {largest} bytes: {message}",
                format.name
            );
            if !ok {
                let kind = message.split(':').take(2).collect::<Vec<_>>().join(":");
                *errors.entry(kind).or_default() += 1;
            }
        }
        assert!(errors.len() > 3, "{}: {errors:?}", format.name);
    }
}

#[test]
fn deep_repeat_nesting_is_refused() {
    use ipu_device::image::Step;
    let mut package = fixture::package();
    let mut step = Step::Sync;
    for _ in 0..200 {
        step = Step::Repeat {
            count: 1,
            body: vec![step],
        };
    }
    package.image.programs[0].steps.push(step);
    let error = package.to_bytes().expect_err("the writer refuses it");
    assert!(
        error.to_string().contains("nests repeats deeper"),
        "{error}"
    );
    // The reader refuses it on its own, before building the tree.
    let bytes = package.to_bytes_unvalidated().expect("encodes");
    let error = Package::from_bytes(&bytes).expect_err("nesting over the limit");
    assert!(
        error.to_string().contains("nests repeats deeper"),
        "{error}"
    );
}

#[test]
fn npy_mutations_are_errors() {
    let tensor = Tensor::new(vec![3, 5], (0..15).map(|v| v as f32).collect()).unwrap();
    let bytes = tensor.to_npy(ipu_runtime::NpyDtype::F16);
    for length in 0..bytes.len() {
        let (result, largest) = largest_allocation(|| Tensor::from_npy(&bytes[..length], "t.npy"));
        assert!(result.is_err(), "truncation to {length}");
        assert!(largest <= ALLOCATION_LIMIT);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for _ in 0..2000 {
        let mut mutated = bytes.clone();
        let at = rng.random_range(0..mutated.len());
        mutated[at] = rng.random();
        let (_, largest) = largest_allocation(|| Tensor::from_npy(&mutated, "t.npy"));
        assert!(largest <= ALLOCATION_LIMIT);
    }
}

#[test]
fn huge_files_are_refused_by_size_before_reading() {
    let dir = crate::lock::scratch("huge");
    let path = dir.join("huge.ipuexe");
    let file = std::fs::File::create(&path).unwrap();
    // Sparse: no disk space is used.
    file.set_len(ipu_runtime::package::MAX_PACKAGE_BYTES + 1)
        .unwrap();
    drop(file);
    let (result, largest) = largest_allocation(|| Package::read(&path));
    let error = result.unwrap_err().to_string();
    assert!(error.contains("more than the 4294967296 bytes"), "{error}");
    assert!(largest <= ALLOCATION_LIMIT);
    let path = dir.join("huge.ipuprof");
    std::fs::File::create(&path)
        .unwrap()
        .set_len(ipu_runtime::profile::MAX_PROFILE_BYTES + 1)
        .unwrap();
    let error = ProfileFile::read(&path).unwrap_err().to_string();
    assert!(error.contains("more than the"), "{error}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Packages that still decode after random rewrites behind a valid checksum go through the
/// whole run path (load, stream bindings, both calls): errors are fine, panics are not.
#[test]
fn decodable_mutants_run_or_fail_cleanly() {
    use ipu_runtime::session::{run_package, SessionOptions};
    let bytes = package_bytes();
    let dir = crate::lock::scratch("mutants");
    let options = SessionOptions::new(&dir);
    let x = Tensor::new(
        vec![u64::from(fixture::TILES), u64::from(fixture::COLS)],
        fixture::input(),
    )
    .unwrap();
    let inputs = BTreeMap::from([("x".to_string(), x)]);
    let mut rng = ChaCha8Rng::seed_from_u64(0xa11);
    let (mut ran, mut failed) = (0, 0);
    for _ in 0..iterations(1500) {
        let mut mutated = bytes.clone();
        let at = rng.random_range(HEADER_BYTES..mutated.len());
        mutated[at] = rng.random();
        reseal(&mut mutated);
        let Ok(package) = Package::from_bytes(&mutated) else {
            continue;
        };
        match run_package(package, &options, fixture::runner(), &inputs) {
            Ok(_) => ran += 1,
            Err(_) => failed += 1,
        }
    }
    assert!(ran > 0 && failed > 0, "ran {ran}, failed {failed}");
}
