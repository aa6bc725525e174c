//! Validation of a [`Package`]: the image against its target (the device crate's structural
//! check, which refuses overlapping segments and anything outside SRAM), then everything the
//! package adds: kernel artifacts and objects, bindings against their streams, host calls
//! against programs, the profile plan and the device configuration. Run before writing and
//! after reading, so a package on disk is always one a session can load.

use std::collections::{BTreeMap, BTreeSet};

use ipu_device::image::{ImageError, Step, StreamDirection};
use ipu_device::numerics::validate_scale;

use super::{Binding, HostCall, HostPhase, Package};
use crate::config::ConfigError;
use crate::container::FormatError;

/// Why a package cannot be written, read or used.
#[derive(Debug, thiserror::Error)]
pub enum PackageError {
    #[error(transparent)]
    Format(FormatError),
    #[error("application package: target: {detail}")]
    Target { detail: String },
    #[error("application package: device image: {0}")]
    Image(#[from] ImageError),
    #[error("application package: device configuration: {0}")]
    Config(#[from] ConfigError),
    #[error("application package: internal error: {detail}")]
    Internal { detail: String },
    #[error("application package: program '{program}' nests repeats deeper than {max} levels")]
    Nesting { program: String, max: usize },
    #[error("application package: program '{program}': a repeat declares {children} body steps, {remaining} remain")]
    RepeatBody {
        program: String,
        children: u32,
        remaining: usize,
    },
    #[error(
        "application package: {what} needs {bytes} bytes of the data section, {remaining} remain"
    )]
    DataOverrun {
        what: String,
        bytes: u64,
        remaining: u64,
    },
    #[error("application package: {bytes} bytes of the data section belong to nothing")]
    DataUnused { bytes: u64 },
    #[error("application package: kernel object recorded as sha256 {recorded} hashes to {actual}")]
    ObjectHash { recorded: String, actual: String },
    #[error("application package: kernel object {sha256} is stored twice")]
    DuplicateObject { sha256: String },
    #[error("application package: {artifacts} kernel artifacts for a kernel table of {kernels}")]
    KernelArtifactCount { artifacts: usize, kernels: usize },
    #[error(
        "application package: kernel {index} is recorded as '{recorded}', its spec is '{expected}'"
    )]
    KernelName {
        index: usize,
        recorded: String,
        expected: String,
    },
    #[error("application package: kernel {kernel} refers to object {sha256}, which the package does not hold")]
    MissingObject { kernel: String, sha256: String },
    #[error("application package: kernel object {sha256} is used by no kernel")]
    UnreferencedObject { sha256: String },
    #[error("application package: binding '{name}' is declared more than once")]
    DuplicateBinding { name: String },
    #[error("application package: binding '{binding}' uses unknown stream '{stream}'")]
    BindingStream { binding: String, stream: String },
    #[error("application package: stream '{stream}' carries both '{first}' and '{second}'")]
    StreamBoundTwice {
        stream: String,
        first: String,
        second: String,
    },
    #[error("application package: binding '{binding}' is an {role} but stream '{stream}' is {direction:?}")]
    BindingDirection {
        binding: String,
        role: &'static str,
        stream: String,
        direction: StreamDirection,
    },
    #[error("application package: binding '{binding}': shape {shape:?} overflows")]
    BindingShape { binding: String, shape: Vec<u64> },
    #[error("application package: binding '{binding}' has {pieces} pieces, stream '{stream}' has {slices} slices")]
    BindingPieces {
        binding: String,
        stream: String,
        pieces: usize,
        slices: usize,
    },
    #[error("application package: binding '{binding}' piece {index} (tile {tile} {address:#x}, {bytes} bytes) differs from its stream slice (tile {slice_tile} {slice_address:#x}, {slice_bytes} bytes)")]
    BindingPieceMismatch {
        binding: String,
        index: usize,
        tile: u32,
        address: u32,
        bytes: u32,
        slice_tile: u32,
        slice_address: u32,
        slice_bytes: u32,
    },
    #[error("application package: binding '{binding}' piece {index} covers tensor bytes {offset}..{end}, the tensor has {tensor_bytes} bytes")]
    BindingPieceRange {
        binding: String,
        index: usize,
        offset: u64,
        end: u64,
        tensor_bytes: u64,
    },
    #[error("application package: binding '{binding}' piece {index} (tensor bytes {offset}, {bytes} long) splits {element_bytes}-byte elements")]
    BindingAlignment {
        binding: String,
        index: usize,
        offset: u64,
        bytes: u32,
        element_bytes: u32,
    },
    #[error("application package: binding '{binding}': {detail}")]
    BindingCoverage { binding: String, detail: String },
    #[error("application package: binding '{binding}' ({role}) holds {found} data bytes, expected {expected}")]
    BindingData {
        binding: String,
        role: &'static str,
        expected: u64,
        found: u64,
    },
    #[error("application package: binding '{binding}': scale exponent {scale_exp}: {detail}")]
    BindingScale {
        binding: String,
        scale_exp: i32,
        detail: String,
    },
    #[error("binding '{binding}': {found} bytes given, the tensor has {expected}")]
    TensorLength {
        binding: String,
        expected: u64,
        found: u64,
    },
    #[error("application package: host call '{name}' is declared more than once")]
    DuplicateCall { name: String },
    #[error("application package: host call '{call}' runs unknown program '{program}'")]
    CallProgram { call: String, program: String },
    #[error("application package: host call '{call}' step {step} streams '{stream}', which no binding describes")]
    UnboundStream {
        call: String,
        step: u32,
        stream: String,
    },
    #[error("application package: profile plan names unknown program '{program}'")]
    ProfileProgram { program: String },
    #[error("application package: profile plan lists op '{provenance}' twice")]
    DuplicatePlannedOp { provenance: String },
    #[error("application package: profile plan op '{provenance}' matches no compute step")]
    PlannedOpUnknown { provenance: String },
    #[error("application package: compiler version is empty")]
    NoCompiler,
    #[error("application package: source: {detail}")]
    Source { detail: String },
    #[error("application package: source section version {found} is not supported (this build reads version {supported})")]
    SourceVersion { found: u32, supported: u32 },
}

impl HostCall {
    /// The host exchange phases of this call: its program's host steps in pre-order.
    pub fn phases(&self, image: &ipu_device::image::DeviceImage) -> Vec<HostPhase> {
        fn walk(steps: &[Step], next: &mut u32, out: &mut Vec<HostPhase>) {
            for step in steps {
                let id = *next;
                *next += 1;
                match step {
                    Step::Repeat { body, .. } => walk(body, next, out),
                    Step::HostWrite { stream } => out.push(HostPhase {
                        step: id,
                        direction: StreamDirection::HostToDevice,
                        stream: stream.clone(),
                    }),
                    Step::HostRead { stream } => out.push(HostPhase {
                        step: id,
                        direction: StreamDirection::DeviceToHost,
                        stream: stream.clone(),
                    }),
                    Step::Compute(_) | Step::Exchange(_) | Step::Sync => {}
                }
            }
        }
        let mut phases = Vec::new();
        if let Some(program) = image.program(&self.program) {
            walk(&program.steps, &mut 0, &mut phases);
        }
        phases
    }
}

/// Deepest repeat nesting of `steps` (0 without repeats).
fn repeat_depth(steps: &[Step]) -> usize {
    steps
        .iter()
        .map(|step| match step {
            Step::Repeat { body, .. } => 1 + repeat_depth(body),
            _ => 0,
        })
        .max()
        .unwrap_or(0)
}

fn compute_provenances<'a>(steps: &'a [Step], out: &mut BTreeSet<&'a str>) {
    for step in steps {
        match step {
            Step::Compute(compute) => {
                out.insert(compute.provenance.as_str());
            }
            Step::Repeat { body, .. } => compute_provenances(body, out),
            _ => {}
        }
    }
}

impl Package {
    /// Checks everything a session relies on (see the module docs).
    pub fn validate(&self) -> Result<(), PackageError> {
        if self.compiler.is_empty() {
            return Err(PackageError::NoCompiler);
        }
        if let Some(source) = &self.source {
            source.validate()?;
        }
        let target = self.target()?;
        self.image.validate(&target)?;
        for program in &self.image.programs {
            if repeat_depth(&program.steps) > super::wire::MAX_REPEAT_NESTING {
                return Err(PackageError::Nesting {
                    program: program.name.clone(),
                    max: super::wire::MAX_REPEAT_NESTING,
                });
            }
        }
        self.validate_kernels()?;
        for binding in &self.bindings {
            self.validate_binding(binding)?;
        }
        let mut names = BTreeSet::new();
        let mut streams: BTreeMap<&str, &str> = BTreeMap::new();
        for binding in &self.bindings {
            if !names.insert(binding.name.as_str()) {
                return Err(PackageError::DuplicateBinding {
                    name: binding.name.clone(),
                });
            }
            if let Some(first) = streams.insert(binding.stream.as_str(), binding.name.as_str()) {
                return Err(PackageError::StreamBoundTwice {
                    stream: binding.stream.clone(),
                    first: first.to_string(),
                    second: binding.name.clone(),
                });
            }
        }
        let mut names = BTreeSet::new();
        for call in &self.calls {
            if !names.insert(call.name.as_str()) {
                return Err(PackageError::DuplicateCall {
                    name: call.name.clone(),
                });
            }
            if self.image.program(&call.program).is_none() {
                return Err(PackageError::CallProgram {
                    call: call.name.clone(),
                    program: call.program.clone(),
                });
            }
            for phase in call.phases(&self.image) {
                if !streams.contains_key(phase.stream.as_str()) {
                    return Err(PackageError::UnboundStream {
                        call: call.name.clone(),
                        step: phase.step,
                        stream: phase.stream,
                    });
                }
            }
        }
        for program in &self.profile_plan.programs {
            if self.image.program(program).is_none() {
                return Err(PackageError::ProfileProgram {
                    program: program.clone(),
                });
            }
        }
        let mut provenances = BTreeSet::new();
        for program in &self.image.programs {
            compute_provenances(&program.steps, &mut provenances);
        }
        let mut planned = BTreeSet::new();
        for op in &self.profile_plan.ops {
            if !planned.insert(op.provenance.as_str()) {
                return Err(PackageError::DuplicatePlannedOp {
                    provenance: op.provenance.clone(),
                });
            }
            if !provenances.contains(op.provenance.as_str()) {
                return Err(PackageError::PlannedOpUnknown {
                    provenance: op.provenance.clone(),
                });
            }
        }
        self.device_config.validate("application package")?;
        Ok(())
    }

    fn validate_kernels(&self) -> Result<(), PackageError> {
        if self.kernels.len() != self.image.kernels.len() {
            return Err(PackageError::KernelArtifactCount {
                artifacts: self.kernels.len(),
                kernels: self.image.kernels.len(),
            });
        }
        let mut used = BTreeSet::new();
        for (index, (artifact, spec)) in self.kernels.iter().zip(&self.image.kernels).enumerate() {
            let expected = spec.name();
            if artifact.name != expected {
                return Err(PackageError::KernelName {
                    index,
                    recorded: artifact.name.clone(),
                    expected,
                });
            }
            if let Some(hash) = &artifact.object {
                if !self.objects.contains_key(hash) {
                    return Err(PackageError::MissingObject {
                        kernel: artifact.name.clone(),
                        sha256: hash.clone(),
                    });
                }
                used.insert(hash.as_str());
            }
        }
        for (hash, object) in &self.objects {
            if !used.contains(hash.as_str()) {
                return Err(PackageError::UnreferencedObject {
                    sha256: hash.clone(),
                });
            }
            let actual = crate::sha256_hex(&object.bytes);
            if &actual != hash {
                return Err(PackageError::ObjectHash {
                    recorded: hash.clone(),
                    actual,
                });
            }
        }
        Ok(())
    }

    fn validate_binding(&self, binding: &Binding) -> Result<(), PackageError> {
        let name = &binding.name;
        let stream =
            self.image
                .stream(&binding.stream)
                .ok_or_else(|| PackageError::BindingStream {
                    binding: name.clone(),
                    stream: binding.stream.clone(),
                })?;
        if stream.direction != binding.role.direction() {
            return Err(PackageError::BindingDirection {
                binding: name.clone(),
                role: binding.role.name(),
                stream: stream.name.clone(),
                direction: stream.direction,
            });
        }
        if binding.precision.is_fp8() {
            validate_scale(binding.scale_exp).map_err(|e| PackageError::BindingScale {
                binding: name.clone(),
                scale_exp: binding.scale_exp,
                detail: e.to_string(),
            })?;
        } else if binding.scale_exp != 0 {
            return Err(PackageError::BindingScale {
                binding: name.clone(),
                scale_exp: binding.scale_exp,
                detail: format!("{:?} tensors carry no scale", binding.precision),
            });
        }
        let tensor_bytes = binding
            .tensor_bytes()
            .ok_or_else(|| PackageError::BindingShape {
                binding: name.clone(),
                shape: binding.shape.clone(),
            })?;
        if binding.pieces.len() != stream.slices.len() {
            return Err(PackageError::BindingPieces {
                binding: name.clone(),
                stream: stream.name.clone(),
                pieces: binding.pieces.len(),
                slices: stream.slices.len(),
            });
        }
        let element_bytes = binding.precision.bytes();
        let mut ranges = Vec::with_capacity(binding.pieces.len());
        for (index, (piece, slice)) in binding.pieces.iter().zip(&stream.slices).enumerate() {
            if (piece.tile, piece.address, piece.bytes) != (slice.tile, slice.address, slice.bytes)
            {
                return Err(PackageError::BindingPieceMismatch {
                    binding: name.clone(),
                    index,
                    tile: piece.tile,
                    address: piece.address,
                    bytes: piece.bytes,
                    slice_tile: slice.tile,
                    slice_address: slice.address,
                    slice_bytes: slice.bytes,
                });
            }
            let end = piece.offset.saturating_add(u64::from(piece.bytes));
            if end > tensor_bytes {
                return Err(PackageError::BindingPieceRange {
                    binding: name.clone(),
                    index,
                    offset: piece.offset,
                    end,
                    tensor_bytes,
                });
            }
            if piece.offset % u64::from(element_bytes) != 0 || piece.bytes % element_bytes != 0 {
                return Err(PackageError::BindingAlignment {
                    binding: name.clone(),
                    index,
                    offset: piece.offset,
                    bytes: piece.bytes,
                    element_bytes,
                });
            }
            if piece.bytes > 0 {
                ranges.push((piece.offset, end));
            }
        }
        // Every tensor byte must come from (or go to) somewhere; a device-to-host tensor must
        // be read from exactly one place per byte, or the result depends on slice order.
        ranges.sort_unstable();
        let mut covered = 0u64;
        for &(start, end) in &ranges {
            if start > covered {
                return Err(PackageError::BindingCoverage {
                    binding: name.clone(),
                    detail: format!("tensor bytes {covered}..{start} are in no piece"),
                });
            }
            if start < covered && stream.direction == StreamDirection::DeviceToHost {
                return Err(PackageError::BindingCoverage {
                    binding: name.clone(),
                    detail: format!(
                        "output bytes {start}..{} are read from more than one tile slice",
                        covered.min(end)
                    ),
                });
            }
            covered = covered.max(end);
        }
        if covered != tensor_bytes {
            return Err(PackageError::BindingCoverage {
                binding: name.clone(),
                detail: format!("tensor bytes {covered}..{tensor_bytes} are in no piece"),
            });
        }
        let expected_data = match binding.role {
            super::BindingRole::Weight => tensor_bytes,
            _ => 0,
        };
        if binding.data.len() as u64 != expected_data {
            return Err(PackageError::BindingData {
                binding: name.clone(),
                role: binding.role.name(),
                expected: expected_data,
                found: binding.data.len() as u64,
            });
        }
        Ok(())
    }
}
