//! The `.ipuexe` application package: everything a session needs to load and run a compiled
//! program on a device.
//!
//! A [`Package`] holds
//! * the [`DeviceImage`] (tile segments and code ranges, programs, exchange schedules, the
//!   kernel table, host streams);
//! * one [`KernelArtifact`] per kernel table entry: the kernel by its spec, optionally with
//!   the compiled object embedded, objects deduplicated by their sha256 (two specs that
//!   compile to the same bytes share one copy). A kernel without an object is compiled on the
//!   loading host through the kernel cache (`ipu_device::kernels::KernelCache`), which is
//!   keyed by the spec and the host; an embedded object records the host it was built for;
//! * [`Binding`]s: the model's inputs, outputs and weights as typed tensors laid over a host
//!   stream's tile-memory slices, weights with their initial bytes;
//! * [`HostCall`]s (`initialize`, `run`): the programs the host invokes, with their command;
//! * the [`ProfilePlan`]: which programs to profile and the compiler's ideal cycles per op;
//! * the device configuration writes the compiler relied on ([`DeviceConfig`]);
//! * the compiler version;
//! * optionally, the [`PackageSource`]: the `ipu` graph module the package was compiled from,
//!   the compiled function and the precision policy, for the host reference (`ipu run`'s
//!   numerical test).
//!
//! Validation (before writing and after reading) is [`Package::validate`].
//!
//! ## Binary layout
//! A [`crate::container`] file (magic `89 49 50 55 45 58 45 0a`, "\x89IPUEXE\n") with these
//! sections, in this order:
//!
//! | kind | name | content |
//! |---|---|---|
//! | 1 | `meta` | postcard: the application name |
//! | 2 | `image` | postcard: the device image without segment bytes; programs flattened |
//! | 3 | `kernels` | postcard: one artifact per kernel table entry, the object table |
//! | 4 | `bindings` | postcard: bindings without their data bytes |
//! | 5 | `calls` | postcard: host exchange calls |
//! | 6 | `profile-plan` | postcard: the profile plan |
//! | 7 | `device-config` | postcard: register writes |
//! | 8 | `data` | raw bytes: every segment (image order), every weight (binding order), every object (hash order) |
//! | 9 | `source` | empty (no source), or a version varint and the source record ([`source`]) |
//! | 10 | `memory` | postcard: the memory plan ([`memory`]) |
//!
//! Version 1 files have sections 1 to 8 only; they are read as packages without a source.
//! Versions 1 to 3 have no `memory` section; they are read with an empty memory plan.
//! Version 1 and 2 binding pieces have no `runs` and `stride`; they are read as one
//! contiguous run.
//!
//! Structure is postcard (varint integers and length-prefixed sequences, so the small tile
//! ids, slots and counts that fill these tables take one or two bytes instead of four or
//! eight; a stable, documented wire format), and bulk bytes live once in the raw `data` section so they are not re-encoded
//! and their file offsets are known ([`FileLayout`], for `ipu inspect`). The structure records
//! only lengths; the data section is consumed in order and must be used exactly.
//!
//! Programs are stored flat, in pre-order, a repeat followed by its body and recording how
//! many direct children it has. Decoding a nested structure straight from untrusted bytes
//! would recurse once per nesting level (a few bytes each), so a hostile file could overflow
//! the stack; rebuilding the tree from the flat list refuses nesting deeper than
//! [`MAX_REPEAT_NESTING`].

pub mod memory;
pub mod source;
mod validate;
mod wire;

use std::collections::BTreeMap;
use std::path::Path;

use ipu_device::image::{DeviceImage, StreamDirection};
use ipu_device::kernels::CachedKernel;
use ipu_device::precision::Precision;
use ipu_device::Target;
use serde::{Deserialize, Serialize};
use tracing::info;

pub use memory::{MemoryCategory, MemoryPlan, PlacedBuffer, SupportItem};
pub use source::{PackageSource, SourcePrecision, SOURCE_SECTION_VERSION};
pub use validate::PackageError;
pub use wire::{
    FileLayout, MAX_REPEAT_NESTING, OLDEST_PACKAGE_FORMAT_VERSION, PACKAGE_FORMAT_VERSION,
    PACKAGE_SPEC,
};

use crate::config::DeviceConfig;
use crate::container::FormatError;

/// Largest package file a reader accepts. Everything a package holds ends up in tile SRAM
/// (C600: 1,472 tiles x 624 KiB = 919 MB) or is a small table or kernel object, so a larger
/// file is not an application; refusing it by size keeps a huge or sparse file from being
/// read into memory at all.
pub const MAX_PACKAGE_BYTES: u64 = 4 << 30;

/// The version of this compiler, recorded in every package and profile.
pub const COMPILER_VERSION: &str = env!("CARGO_PKG_VERSION");

/// A loadable application (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct Package {
    /// Version of the compiler that built the package.
    pub compiler: String,
    /// Name of the application (the model), for reports.
    pub name: String,
    pub image: DeviceImage,
    /// One per `image.kernels` entry, in the same order.
    pub kernels: Vec<KernelArtifact>,
    /// Compiled objects by lowercase hex sha256 of their bytes.
    pub objects: BTreeMap<String, KernelObject>,
    pub bindings: Vec<Binding>,
    pub calls: Vec<HostCall>,
    pub profile_plan: ProfilePlan,
    pub device_config: DeviceConfig,
    /// The source module and compile settings, for the host reference (`None`: no reference).
    pub source: Option<PackageSource>,
    /// The storage placement's buffers and support memory, for reports (empty in packages
    /// of format versions before 4).
    pub memory: MemoryPlan,
}

/// How a package provides one kernel of the image's kernel table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelArtifact {
    /// The specialization name (`KernelSpec::name`), checked against the spec on read.
    pub name: String,
    /// The sha256 of the embedded object in [`Package::objects`], or `None` when the kernel is
    /// referenced by its spec only.
    pub object: Option<String>,
}

/// A compiled kernel object and the identity of the host code it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelObject {
    /// The relocatable object the kernel compiler emitted (`kernel.o` of a cache entry).
    pub bytes: Vec<u8>,
    /// The kernel cache key it was built under.
    pub cache_key: String,
    /// The kernel compiler, LLVM version and host it was built for: native code only runs on
    /// a host that matches.
    pub kernel_compiler: String,
    pub llvm: String,
    pub triple: String,
    pub cpu: String,
}

impl KernelObject {
    /// Reads the object of a kernel cache entry.
    pub fn from_cache_entry(entry: &CachedKernel) -> std::io::Result<KernelObject> {
        Ok(KernelObject {
            bytes: std::fs::read(&entry.object)?,
            cache_key: entry.metadata.key.clone(),
            kernel_compiler: entry.metadata.compiler.clone(),
            llvm: entry.metadata.llvm.clone(),
            triple: entry.metadata.triple.clone(),
            cpu: entry.metadata.cpu.clone(),
        })
    }
}

/// What a binding is to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum BindingRole {
    /// Supplied by the caller for each `run`.
    Input,
    /// Read back after `run`.
    Output,
    /// Initial values shipped in the package, streamed in by `initialize`.
    Weight,
    /// A parameter: a weight the caller supplies once, streamed in by `initialize` (not
    /// per `run`) and resident from then on; the package holds no data for it.
    Parameter,
}

impl BindingRole {
    pub const fn name(self) -> &'static str {
        match self {
            BindingRole::Input => "input",
            BindingRole::Output => "output",
            BindingRole::Weight => "weight",
            BindingRole::Parameter => "parameter",
        }
    }

    /// The stream direction a binding of this role travels.
    pub const fn direction(self) -> StreamDirection {
        match self {
            BindingRole::Input | BindingRole::Weight | BindingRole::Parameter => {
                StreamDirection::HostToDevice
            }
            BindingRole::Output => StreamDirection::DeviceToHost,
        }
    }
}

/// A model tensor laid over tile memory through one host stream.
///
/// The tensor's device bytes are its elements in C order, each encoded in `precision` (FP8
/// with the power-of-two `scale_exp`). The stream's bytes are the concatenation of its
/// slices; piece `i` says which bytes of the tensor fill stream slice `i`. A host-to-device
/// tensor may be replicated (pieces of several tiles cover the same bytes); a
/// device-to-host tensor is read from exactly one place per byte.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Binding {
    pub name: String,
    pub role: BindingRole,
    /// The image stream carrying the tensor.
    pub stream: String,
    pub precision: Precision,
    /// FP8 scale exponent (value = code * 2^scale_exp); 0 for other precisions.
    pub scale_exp: i32,
    pub shape: Vec<u64>,
    /// A repeat's per-iteration stack has `shape[0]` slices, one per iteration; 1 otherwise.
    /// An input stack is streamed one slice per execution of its write in a run: the pieces
    /// place one slice, and the stream is the slices' gathers one after the other, slice e's
    /// tensor offsets moved by e slices. A parameter or weight stack is resident: written
    /// whole at `initialize`, its pieces placing every slice.
    pub iterations: u32,
    /// In stream slice order, one per slice.
    pub pieces: Vec<BindingPiece>,
    /// Weights: the initial device bytes (C order, `tensor_bytes` long). Empty otherwise.
    pub data: Vec<u8>,
}

/// One slice of tile memory holding `bytes` bytes of a tensor: `runs` equal runs of
/// `bytes / runs` device bytes, run r from tensor byte `offset + r * stride` (the host gathers and
/// scatters strided runs, so a tile can receive an operand straight in its AMP order).
/// `runs == 1` (the default) is one contiguous range from `offset`. The last `pad` bytes of
/// every run are zero padding, not tensor bytes: the host writes zeros there (an AMP order's
/// padded 16-element group) and drops them when reading; a run of only padding reads no
/// tensor bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BindingPiece {
    pub tile: u32,
    pub address: u32,
    pub offset: u64,
    pub bytes: u32,
    pub runs: u32,
    pub stride: u64,
    pub pad: u32,
}

impl BindingPiece {
    /// `bytes` contiguous tensor bytes from `offset`.
    pub fn contiguous(tile: u32, address: u32, offset: u64, bytes: u32) -> BindingPiece {
        BindingPiece {
            tile,
            address,
            offset,
            bytes,
            runs: 1,
            stride: 0,
            pad: 0,
        }
    }

    /// Device bytes of one run (0 for a piece of no runs, which validation refuses).
    pub fn run_bytes(&self) -> u32 {
        self.bytes.checked_div(self.runs).unwrap_or(0)
    }

    /// Tensor bytes of one run: its device bytes without the padding (0 when the padding is
    /// longer, which validation refuses).
    pub fn tensor_run_bytes(&self) -> u32 {
        self.run_bytes().saturating_sub(self.pad)
    }

    /// The tensor byte range `start..end` of run `run`, saturating instead of overflowing (a
    /// saturated end lies outside every tensor).
    pub fn run_range(&self, run: u32) -> (u64, u64) {
        let step = if self.runs == 1 { 0 } else { self.stride };
        let start = self
            .offset
            .saturating_add(u64::from(run).saturating_mul(step));
        (
            start,
            start.saturating_add(u64::from(self.tensor_run_bytes())),
        )
    }
}

/// The checked runs of one piece, in tensor byte offsets that fit the tensor.
struct PieceRuns {
    first: usize,
    /// Tensor bytes of a run, then `pad` zero bytes on the device.
    run_bytes: usize,
    pad: usize,
    stride: usize,
    runs: usize,
}

impl PieceRuns {
    fn starts(&self) -> impl Iterator<Item = usize> {
        let (first, stride) = (self.first, self.stride);
        (0..self.runs).map(move |r| first + r * stride)
    }
}

impl Binding {
    /// Elements of the tensor, `None` on overflow.
    pub fn elements(&self) -> Option<u64> {
        self.shape.iter().try_fold(1u64, |n, &d| n.checked_mul(d))
    }

    /// Bytes of the tensor on the device, `None` on overflow.
    pub fn tensor_bytes(&self) -> Option<u64> {
        self.elements()?
            .checked_mul(u64::from(self.precision.bytes()))
    }

    /// Slices one write of the binding streams the tensor in: an input stack's slices (one
    /// per write), 1 for everything else (a resident stack is written whole).
    pub fn slices_per_write(&self) -> u32 {
        if self.role == BindingRole::Input {
            self.iterations
        } else {
            1
        }
    }

    /// Bytes of what one write streams ([`Binding::slices_per_write`]), `None` when the
    /// slices do not split the tensor evenly.
    pub fn slice_bytes(&self) -> Option<u64> {
        let tensor = self.tensor_bytes()?;
        let slices = u64::from(self.slices_per_write());
        (slices >= 1 && tensor.is_multiple_of(slices)).then(|| tensor / slices)
    }

    /// Gathers the stream's bytes from the tensor's device bytes (host to device), run by
    /// run, slice after slice.
    pub fn to_stream(&self, tensor: &[u8]) -> Result<Vec<u8>, PackageError> {
        self.check_tensor_len(tensor.len())?;
        let slice = self
            .slice_bytes()
            .ok_or_else(|| PackageError::BindingIterations {
                binding: self.name.clone(),
                iterations: self.iterations,
                shape: self.shape.clone(),
            })? as usize;
        let total: u64 = self.pieces.iter().map(|p| u64::from(p.bytes)).sum();
        // One slice's worth up front (the pieces' bytes, bounded by the file); the stream
        // grows with the slices it really gathers.
        let mut stream = Vec::with_capacity(usize::try_from(total).unwrap_or(0));
        for tensor in tensor.chunks(slice.max(1)) {
            for (index, piece) in self.pieces.iter().enumerate() {
                let runs = self.piece_runs(index, piece, tensor.len())?;
                for start in runs.starts() {
                    stream.extend_from_slice(&tensor[start..start + runs.run_bytes]);
                    stream.resize(stream.len() + runs.pad, 0);
                }
            }
        }
        Ok(stream)
    }

    /// Scatters a stream's bytes into the tensor's device bytes (device to host), run by run.
    pub fn from_stream(&self, stream: &[u8]) -> Result<Vec<u8>, PackageError> {
        let tensor_bytes = self.tensor_bytes().unwrap_or(u64::MAX);
        let total: u64 = self.pieces.iter().map(|p| u64::from(p.bytes)).sum();
        if stream.len() as u64 != total {
            return Err(PackageError::TensorLength {
                binding: self.name.clone(),
                expected: total,
                found: stream.len() as u64,
            });
        }
        // The length was checked against the pieces, which come from the (bounded) file.
        let tensor_len = usize::try_from(tensor_bytes).map_err(|_| PackageError::BindingShape {
            binding: self.name.clone(),
            shape: self.shape.clone(),
        })?;
        let mut tensor = vec![0u8; tensor_len];
        let mut at = 0usize;
        for (index, piece) in self.pieces.iter().enumerate() {
            let runs = self.piece_runs(index, piece, tensor_len)?;
            for start in runs.starts() {
                tensor[start..start + runs.run_bytes]
                    .copy_from_slice(&stream[at..at + runs.run_bytes]);
                at += runs.run_bytes + runs.pad;
            }
        }
        Ok(tensor)
    }

    /// The tensor runs of piece `index`, checked against a tensor of `tensor_len` bytes
    /// (validation guarantees them; this keeps unvalidated bindings from panicking). Runs
    /// start at non-decreasing offsets, so the last run bounds them all.
    fn piece_runs(
        &self,
        index: usize,
        piece: &BindingPiece,
        tensor_len: usize,
    ) -> Result<PieceRuns, PackageError> {
        if piece.runs == 0 || !piece.bytes.is_multiple_of(piece.runs) {
            return Err(PackageError::BindingPieceRuns {
                binding: self.name.clone(),
                index,
                bytes: piece.bytes,
                runs: piece.runs,
            });
        }
        if piece.pad > piece.run_bytes() {
            return Err(PackageError::BindingPiecePad {
                binding: self.name.clone(),
                index,
                run_bytes: piece.run_bytes(),
                pad: piece.pad,
            });
        }
        let last = piece.runs - 1;
        let (start, end) = piece.run_range(last);
        if end > tensor_len as u64 {
            return Err(PackageError::BindingPieceRange {
                binding: self.name.clone(),
                index,
                run: last,
                offset: start,
                end,
                tensor_bytes: tensor_len as u64,
            });
        }
        // Every run ends inside the tensor, so these fit in usize.
        Ok(PieceRuns {
            first: piece.offset as usize,
            run_bytes: piece.tensor_run_bytes() as usize,
            pad: piece.pad as usize,
            stride: if piece.runs == 1 {
                0
            } else {
                piece.stride as usize
            },
            runs: piece.runs as usize,
        })
    }

    fn check_tensor_len(&self, found: usize) -> Result<(), PackageError> {
        let expected = self.tensor_bytes().unwrap_or(u64::MAX);
        if found as u64 != expected {
            return Err(PackageError::TensorLength {
                binding: self.name.clone(),
                expected,
                found: found as u64,
            });
        }
        Ok(())
    }
}

/// A host exchange call: the host sends `command` and the device runs `program`, streaming
/// the bindings of the program's host steps. Its phases are the program's host exchange
/// steps ([`HostCall::phases`]), derived from the program so they cannot disagree with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostCall {
    /// `initialize` (weights) or `run` (inputs and outputs), or any other name.
    pub name: String,
    /// The command word the device's host exchange dispatcher receives (0: streaming call).
    pub command: u32,
    /// The image program the call runs.
    pub program: String,
}

/// One host exchange phase of a call: a host step of its program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPhase {
    /// Pre-order step number in the program.
    pub step: u32,
    pub direction: StreamDirection,
    pub stream: String,
}

/// What the runtime profiles, and the compiler's view of each op.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProfilePlan {
    /// Programs whose runs are profiled (normally `run`).
    pub programs: Vec<String>,
    pub ops: Vec<PlannedOp>,
}

/// The compiler's numbers for one op (identified by its MLIR location, the provenance of the
/// compute steps implementing it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedOp {
    pub provenance: String,
    /// The op name (`ipu.matmul`).
    pub op: String,
    /// The kernel models' cycles of the op's work spread evenly over every tile of the
    /// target: a model figure, not the op's roofline (the profile computes that from the
    /// kernels it ran, see `crate::profile::Roofline`).
    pub ideal_cycles: u64,
    /// The planner's estimate for the chosen plan.
    pub estimated_cycles: u64,
}

impl Package {
    /// A package around `image` that references every kernel by spec, with no bindings,
    /// calls, profile plan or configuration yet.
    pub fn new(name: impl Into<String>, image: DeviceImage) -> Package {
        let kernels = image
            .kernels
            .iter()
            .map(|spec| KernelArtifact {
                name: spec.name(),
                object: None,
            })
            .collect();
        Package {
            compiler: COMPILER_VERSION.to_string(),
            name: name.into(),
            image,
            kernels,
            objects: BTreeMap::new(),
            bindings: Vec::new(),
            calls: Vec::new(),
            profile_plan: ProfilePlan::default(),
            device_config: DeviceConfig::default(),
            source: None,
            memory: MemoryPlan::default(),
        }
    }

    /// Records the source module the package was compiled from, the compiled function and the
    /// precision policy, so that a run can be checked against the host reference.
    pub fn set_source(&mut self, source: PackageSource) -> &mut Package {
        self.source = Some(source);
        self
    }

    /// Embeds `object` as the compiled code of kernel `index`; equal objects are stored once.
    pub fn embed_object(&mut self, index: usize, object: KernelObject) -> Result<(), PackageError> {
        let kernels = self.kernels.len();
        let artifact = self
            .kernels
            .get_mut(index)
            .ok_or(PackageError::KernelArtifactCount {
                artifacts: kernels,
                kernels: index + 1,
            })?;
        let hash = crate::sha256_hex(&object.bytes);
        artifact.object = Some(hash.clone());
        self.objects.entry(hash).or_insert(object);
        Ok(())
    }

    pub fn binding(&self, name: &str) -> Option<&Binding> {
        self.bindings.iter().find(|b| b.name == name)
    }

    /// The binding carried by `stream`.
    pub fn binding_of_stream(&self, stream: &str) -> Option<&Binding> {
        self.bindings.iter().find(|b| b.stream == stream)
    }

    pub fn call(&self, name: &str) -> Option<&HostCall> {
        self.calls.iter().find(|c| c.name == name)
    }

    /// The target the image was built for.
    pub fn target(&self) -> Result<Target, PackageError> {
        Target::by_name(&self.image.target).map_err(|e| PackageError::Target {
            detail: e.to_string(),
        })
    }

    /// Tiles of the package's target (what the logs call `tiles`).
    pub fn tile_count(&self) -> u32 {
        self.target()
            .map(|t| t.geometry.tiles.value)
            .unwrap_or(self.image.tiles.len() as u32)
    }

    /// Encodes the package (after validating it).
    pub fn to_bytes(&self) -> Result<Vec<u8>, PackageError> {
        self.validate()?;
        wire::encode(self)
    }

    /// Encodes without validating: only for tests of the reader's own checks, which must
    /// hold against files no validating writer would produce.
    #[doc(hidden)]
    pub fn to_bytes_unvalidated(&self) -> Result<Vec<u8>, PackageError> {
        wire::encode(self)
    }

    /// Decodes and validates a package.
    pub fn from_bytes(bytes: &[u8]) -> Result<Package, PackageError> {
        Ok(Self::from_bytes_with_layout(bytes)?.0)
    }

    /// Decodes and validates a package and returns where each part lies in the file.
    pub fn from_bytes_with_layout(bytes: &[u8]) -> Result<(Package, FileLayout), PackageError> {
        let (package, layout) = wire::decode(bytes)?;
        package.validate()?;
        Ok((package, layout))
    }

    /// Validates, encodes and writes the package atomically (temporary file, then rename).
    pub fn write(&self, path: &Path) -> Result<(), PackageError> {
        info!(tiles = self.tile_count(), "writing application package");
        let bytes = self.to_bytes()?;
        crate::container::write_atomic(PACKAGE_SPEC.name, path, &bytes)?;
        info!(path = %path.display(), bytes = bytes.len(), "application package written");
        Ok(())
    }

    /// Reads and validates a package.
    pub fn read(path: &Path) -> Result<Package, PackageError> {
        Ok(Self::read_with_layout(path)?.0)
    }

    /// Reads and validates a package and returns its file layout.
    pub fn read_with_layout(path: &Path) -> Result<(Package, FileLayout), PackageError> {
        info!(path = %path.display(), "reading application package");
        let bytes = crate::container::read_file(PACKAGE_SPEC.name, path, MAX_PACKAGE_BYTES)?;
        let (package, layout) = Self::from_bytes_with_layout(&bytes)?;
        info!(
            tiles = package.tile_count(),
            compiler = %package.compiler,
            "application package read"
        );
        Ok((package, layout))
    }
}

impl From<FormatError> for PackageError {
    fn from(error: FormatError) -> Self {
        PackageError::Format(error)
    }
}
