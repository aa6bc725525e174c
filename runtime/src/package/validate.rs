//! Validation of a [`Package`]: the image against its target (the device crate's structural
//! check, which refuses overlapping segments and anything outside SRAM), then everything the
//! package adds: kernel artifacts and objects, bindings against their streams, host calls
//! against programs, the profile plan and the device configuration. Run before writing and
//! after reading, so a package on disk is always one a session can load.

use std::collections::{BTreeMap, BTreeSet};

use ipu_device::image::{ImageError, Step, StreamDirection};
use ipu_device::numerics::validate_scale;

use super::{Binding, BindingPiece, HostCall, HostPhase, Package};
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
    #[error("application package: memory plan: {detail}")]
    MemoryPlan { detail: String },
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
    #[error("application package: binding '{binding}' piece {index} has {runs} runs of {bytes} bytes: runs must be at least 1 and divide the bytes")]
    BindingPieceRuns {
        binding: String,
        index: usize,
        bytes: u32,
        runs: u32,
    },
    #[error("application package: binding '{binding}' is streamed in {iterations} slices but its shape is {shape:?}: a stack's slices are its leading axis (outputs are never stacks)")]
    BindingIterations {
        binding: String,
        iterations: u32,
        shape: Vec<u64>,
    },
    #[error("application package: binding '{binding}' piece {index} pads each of its {run_bytes}-byte runs with {pad} zero bytes: the padding must be whole elements and at most a run")]
    BindingPiecePad {
        binding: String,
        index: usize,
        run_bytes: u32,
        pad: u32,
    },
    #[error("application package: binding '{binding}' piece {index} is one run but records stride {stride} (a one-run piece records stride 0)")]
    BindingPieceStride {
        binding: String,
        index: usize,
        stride: u64,
    },
    #[error("application package: binding '{binding}' piece {index} run {run} covers tensor bytes {offset}..{end}, the tensor has {tensor_bytes} bytes")]
    BindingPieceRange {
        binding: String,
        index: usize,
        run: u32,
        offset: u64,
        end: u64,
        tensor_bytes: u64,
    },
    #[error("application package: binding '{binding}' piece {index} run {run} (tensor bytes {start}..{end}) splits {element_bytes}-byte elements")]
    BindingAlignment {
        binding: String,
        index: usize,
        run: u32,
        start: u64,
        end: u64,
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
        self.memory
            .validate(target.geometry.tiles.value)
            .map_err(|detail| PackageError::MemoryPlan { detail })?;
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
        // Pieces place one slice of a stack streamed per write (the whole tensor otherwise).
        // A stack's slices are its leading axis (a resident stack's pieces place them all).
        let sliced = binding.iterations == 1
            || (binding.role != super::BindingRole::Output
                && binding.shape.first() == Some(&u64::from(binding.iterations)));
        let slice_bytes = binding.slice_bytes().filter(|_| sliced).ok_or_else(|| {
            PackageError::BindingIterations {
                binding: name.clone(),
                iterations: binding.iterations,
                shape: binding.shape.clone(),
            }
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
        let mut runs = Vec::with_capacity(binding.pieces.len());
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
            check_piece_runs(name, index, piece, element_bytes, slice_bytes)?;
            // Runs of only padding read no tensor bytes.
            if piece.tensor_run_bytes() > 0 {
                runs.extend((0..piece.runs).map(|run| TensorRun::key(piece, index, run)));
            }
        }
        check_coverage(name, &binding.pieces, runs, stream.direction, slice_bytes)?;
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

/// One run of a binding piece. Runs are sorted packed into one `u128` (start, piece, run):
/// single-integer compares validate two bindings of 2^20 runs in 150 ms instead of the
/// 240 ms of sorting (start, end, piece, run) structs (dev profile, two cores).
struct TensorRun {
    start: u64,
    piece: usize,
    run: u32,
}

impl TensorRun {
    /// The key of `run` of piece `index`. Piece indices fit in 32 bits: each is a stream
    /// slice of a file of at most 4 GiB.
    fn key(piece: &BindingPiece, index: usize, run: u32) -> u128 {
        let (start, _) = piece.run_range(run);
        (u128::from(start) << 64) | (u128::from(index as u32) << 32) | u128::from(run)
    }

    fn of(key: u128) -> TensorRun {
        TensorRun {
            start: (key >> 64) as u64,
            piece: (key >> 32) as u32 as usize,
            run: key as u32,
        }
    }
}

/// The run structure of one piece: at least one run, equal runs of whole elements from
/// element-aligned offsets, the last (and so every) run inside the tensor, and stride 0
/// for a one-run piece (so that a piece has one encoding).
fn check_piece_runs(
    name: &str,
    index: usize,
    piece: &BindingPiece,
    element_bytes: u32,
    tensor_bytes: u64,
) -> Result<(), PackageError> {
    if piece.runs == 0 || !piece.bytes.is_multiple_of(piece.runs) {
        return Err(PackageError::BindingPieceRuns {
            binding: name.to_string(),
            index,
            bytes: piece.bytes,
            runs: piece.runs,
        });
    }
    if piece.pad > piece.run_bytes() || !piece.pad.is_multiple_of(element_bytes) {
        return Err(PackageError::BindingPiecePad {
            binding: name.to_string(),
            index,
            run_bytes: piece.run_bytes(),
            pad: piece.pad,
        });
    }
    if piece.runs == 1 && piece.stride != 0 {
        return Err(PackageError::BindingPieceStride {
            binding: name.to_string(),
            index,
            stride: piece.stride,
        });
    }
    let element = u64::from(element_bytes);
    // Run 0 starts at the offset and every run is as long; run 1 is the first the stride
    // moves.
    let misaligned_run = if !piece.offset.is_multiple_of(element)
        || !piece.tensor_run_bytes().is_multiple_of(element_bytes)
    {
        Some(0)
    } else if !piece.stride.is_multiple_of(element) {
        Some(1)
    } else {
        None
    };
    if let Some(run) = misaligned_run {
        let (start, end) = piece.run_range(run);
        return Err(PackageError::BindingAlignment {
            binding: name.to_string(),
            index,
            run,
            start,
            end,
            element_bytes,
        });
    }
    // Runs start at non-decreasing offsets, so the last one bounds them all.
    let last = piece.runs - 1;
    let (start, end) = piece.run_range(last);
    if end > tensor_bytes {
        return Err(PackageError::BindingPieceRange {
            binding: name.to_string(),
            index,
            run: last,
            offset: start,
            end,
            tensor_bytes,
        });
    }
    Ok(())
}

/// Every tensor byte must come from (or go to) some run; a device-to-host tensor must be
/// read from exactly one place per byte, or the result depends on slice order. Sorting the
/// runs makes this O(n log n) in the number of runs (a strided operand of a large model has
/// about a million).
fn check_coverage(
    name: &str,
    pieces: &[BindingPiece],
    mut runs: Vec<u128>,
    direction: StreamDirection,
    tensor_bytes: u64,
) -> Result<(), PackageError> {
    let coverage = |detail: String| PackageError::BindingCoverage {
        binding: name.to_string(),
        detail,
    };
    runs.sort_unstable();
    let mut covered = 0u64;
    // The run that reaches furthest so far: the one a later run overlaps first.
    let mut furthest: Option<TensorRun> = None;
    for &key in &runs {
        let next = TensorRun::of(key);
        let (_, end) = pieces[next.piece].run_range(next.run);
        if next.start > covered {
            return Err(coverage(format!(
                "tensor bytes {covered}..{} are in no piece (the next run is piece {} run {})",
                next.start, next.piece, next.run
            )));
        }
        if let Some(previous) = furthest.as_ref().filter(|_| next.start < covered) {
            if direction == StreamDirection::DeviceToHost {
                return Err(coverage(format!(
                    "output bytes {}..{} are read from more than one tile slice (piece {} run {} and piece {} run {})",
                    next.start,
                    covered.min(end),
                    previous.piece,
                    previous.run,
                    next.piece,
                    next.run
                )));
            }
        }
        if end > covered {
            covered = end;
            furthest = Some(next);
        }
    }
    if covered != tensor_bytes {
        return Err(coverage(format!(
            "tensor bytes {covered}..{tensor_bytes} are in no piece"
        )));
    }
    Ok(())
}
