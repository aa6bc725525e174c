//! Encoding and decoding of the `.ipuexe` layout documented in [`super`].

use std::collections::BTreeMap;

use ipu_device::image::{
    AddressRange, ComputeStep, DeviceImage, ExchangePhase, Program, Segment, Step, StreamBinding,
    TileImage,
};
use ipu_device::precision::Precision;
use ipu_device::KernelSpec;
use serde::{Deserialize, Serialize};

use super::{
    Binding, BindingPiece, BindingRole, HostCall, KernelArtifact, KernelObject, MemoryPlan,
    Package, PackageError, PackageSource, ProfilePlan,
};
use crate::config::{DeviceConfig, RegisterWrite};
use crate::container::{self, FormatSpec};

/// Version of the `.ipuexe` layout; bumped on any incompatible change. Version 2 added the
/// `source` section; version 1 files (without it) are still read, as packages without a
/// source. Version 3 added `runs` and `stride` to binding pieces; version 1 and 2 pieces
/// are read as one contiguous run. Version 4 added the `memory` section; older files are read
/// with an empty memory plan. Version 5 added `pad` (zero bytes ending each run) to binding
/// pieces; older pieces are read without padding. Version 6 added `iterations` (slices
/// streamed one per write) to bindings; older bindings are read as one slice.
pub const PACKAGE_FORMAT_VERSION: u32 = 6;

/// The oldest layout this build reads.
pub const OLDEST_PACKAGE_FORMAT_VERSION: u32 = 1;

/// Deepest nesting of repeats a package may hold.
pub const MAX_REPEAT_NESTING: usize = 64;

pub const PACKAGE_SPEC: FormatSpec = FormatSpec {
    name: "application package",
    magic: *b"\x89IPUEXE\n",
    version: PACKAGE_FORMAT_VERSION,
    sections: &[
        (1, "meta"),
        (2, "image"),
        (3, "kernels"),
        (4, "bindings"),
        (5, "calls"),
        (6, "profile-plan"),
        (7, "device-config"),
        (8, "data"),
        (9, "source"),
        (10, "memory"),
    ],
};

/// Version 1: the sections of version 2 without `source`, pieces without runs.
const PACKAGE_SPEC_V1: FormatSpec = FormatSpec {
    version: 1,
    sections: PACKAGE_SPEC.sections.split_at(8).0,
    ..PACKAGE_SPEC
};

/// Version 2: the sections of version 3, pieces without runs.
const PACKAGE_SPEC_V2: FormatSpec = FormatSpec {
    version: 2,
    ..PACKAGE_SPEC_V3
};

/// Version 5: the sections of version 6, bindings without iterations.
const PACKAGE_SPEC_V5: FormatSpec = FormatSpec {
    version: 5,
    ..PACKAGE_SPEC
};

/// Version 4: the sections of version 5, pieces without padding.
const PACKAGE_SPEC_V4: FormatSpec = FormatSpec {
    version: 4,
    ..PACKAGE_SPEC
};

/// Version 3: the sections of version 4 without `memory`.
const PACKAGE_SPEC_V3: FormatSpec = FormatSpec {
    version: 3,
    sections: PACKAGE_SPEC.sections.split_at(9).0,
    ..PACKAGE_SPEC
};

/// The spec of the layout version a file declares: versions 1 to 3 are read with their own
/// spec; every other version (the current one, or one this build refuses with a message
/// naming the version) goes to the current spec.
fn spec_for(bytes: &[u8]) -> &'static FormatSpec {
    let declared = bytes
        .get(8..12)
        .filter(|_| bytes.starts_with(&PACKAGE_SPEC.magic))
        .map(|word| u32::from_le_bytes([word[0], word[1], word[2], word[3]]));
    match declared {
        Some(1) => &PACKAGE_SPEC_V1,
        Some(2) => &PACKAGE_SPEC_V2,
        Some(3) => &PACKAGE_SPEC_V3,
        Some(4) => &PACKAGE_SPEC_V4,
        Some(5) => &PACKAGE_SPEC_V5,
        _ => &PACKAGE_SPEC,
    }
}

/// Where things are in a package file (byte offsets from the file start).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileLayout {
    pub file_bytes: u64,
    /// Name, offset and length of each section's content.
    pub sections: Vec<(&'static str, u64, u64)>,
    /// Tile, address, file offset and length of each segment.
    pub segments: Vec<(u32, u32, u64, u64)>,
    /// Binding name, file offset and length of each weight's data.
    pub weights: Vec<(String, u64, u64)>,
    /// Hash, file offset and length of each embedded object.
    pub objects: Vec<(String, u64, u64)>,
}

#[derive(Serialize, Deserialize)]
struct WireMeta {
    name: String,
}

#[derive(Serialize, Deserialize)]
struct WireImage {
    format_version: u32,
    target: String,
    kernels: Vec<KernelSpec>,
    tiles: Vec<WireTile>,
    streams: Vec<StreamBinding>,
    programs: Vec<WireProgram>,
}

#[derive(Serialize, Deserialize)]
struct WireTile {
    tile: u32,
    /// Address and length of each segment; the bytes are in the data section.
    segments: Vec<(u32, u64)>,
    code: Vec<AddressRange>,
}

#[derive(Serialize, Deserialize)]
struct WireProgram {
    name: String,
    steps: Vec<WireStep>,
}

#[derive(Serialize, Deserialize)]
enum WireStep {
    Compute(ComputeStep),
    Exchange(ExchangePhase),
    Sync,
    /// Followed (in pre-order) by the steps of its body; `children` counts the direct ones.
    Repeat {
        count: u32,
        children: u32,
    },
    HostWrite {
        stream: String,
    },
    HostRead {
        stream: String,
    },
}

#[derive(Serialize, Deserialize)]
struct WireKernels {
    artifacts: Vec<KernelArtifact>,
    /// In hash order; the bytes are in the data section.
    objects: Vec<WireObject>,
}

#[derive(Serialize, Deserialize)]
struct WireObject {
    sha256: String,
    bytes: u64,
    cache_key: String,
    kernel_compiler: String,
    llvm: String,
    triple: String,
    cpu: String,
}

/// A binding of the current layout without its data: version 5's and its slices.
#[derive(Serialize, Deserialize)]
struct SlicedBinding {
    binding: WireBinding,
    iterations: u32,
}

/// A binding without its data or slices (versions up to 5); `P` is the piece of the layout
/// version.
#[derive(Serialize, Deserialize)]
struct WireBinding<P = BindingPiece> {
    name: String,
    role: BindingRole,
    stream: String,
    precision: Precision,
    scale_exp: i32,
    shape: Vec<u64>,
    pieces: Vec<P>,
    /// Length of the weight data in the data section (0 for inputs and outputs).
    data_bytes: u64,
}

/// A binding piece of versions 1 and 2: one contiguous range of the tensor.
#[derive(Deserialize)]
struct LegacyPiece {
    tile: u32,
    address: u32,
    offset: u64,
    bytes: u32,
}

impl From<LegacyPiece> for BindingPiece {
    fn from(p: LegacyPiece) -> BindingPiece {
        BindingPiece::contiguous(p.tile, p.address, p.offset, p.bytes)
    }
}

/// A binding piece of versions 3 and 4: runs without padding.
#[derive(Deserialize)]
struct UnpaddedPiece {
    tile: u32,
    address: u32,
    offset: u64,
    bytes: u32,
    runs: u32,
    stride: u64,
}

impl From<UnpaddedPiece> for BindingPiece {
    fn from(p: UnpaddedPiece) -> BindingPiece {
        BindingPiece {
            runs: p.runs,
            stride: p.stride,
            ..BindingPiece::contiguous(p.tile, p.address, p.offset, p.bytes)
        }
    }
}

impl<P> WireBinding<P> {
    /// The binding with its pieces in the current encoding.
    fn upgraded(self) -> WireBinding
    where
        P: Into<BindingPiece>,
    {
        WireBinding {
            name: self.name,
            role: self.role,
            stream: self.stream,
            precision: self.precision,
            scale_exp: self.scale_exp,
            shape: self.shape,
            pieces: self.pieces.into_iter().map(Into::into).collect(),
            data_bytes: self.data_bytes,
        }
    }
}

/// The bindings section in the encoding of `spec`'s version.
fn decode_bindings(
    spec: &FormatSpec,
    section: &container::Section,
) -> Result<Vec<SlicedBinding>, PackageError> {
    let unsliced: Vec<WireBinding> = if spec.version < 3 {
        let legacy: Vec<WireBinding<LegacyPiece>> = container::from_section(spec, section)?;
        legacy.into_iter().map(WireBinding::upgraded).collect()
    } else if spec.version < 5 {
        let unpadded: Vec<WireBinding<UnpaddedPiece>> = container::from_section(spec, section)?;
        unpadded.into_iter().map(WireBinding::upgraded).collect()
    } else if spec.version < 6 {
        container::from_section(spec, section)?
    } else {
        return Ok(container::from_section(spec, section)?);
    };
    Ok(unsliced
        .into_iter()
        .map(|binding| SlicedBinding {
            binding,
            iterations: 1,
        })
        .collect())
}

fn flatten(steps: &[Step], out: &mut Vec<WireStep>) {
    for step in steps {
        match step {
            Step::Compute(compute) => out.push(WireStep::Compute(compute.clone())),
            Step::Exchange(phase) => out.push(WireStep::Exchange(phase.clone())),
            Step::Sync => out.push(WireStep::Sync),
            Step::Repeat { count, body } => {
                out.push(WireStep::Repeat {
                    count: *count,
                    children: body.len() as u32,
                });
                flatten(body, out);
            }
            Step::HostWrite { stream } => out.push(WireStep::HostWrite {
                stream: stream.clone(),
            }),
            Step::HostRead { stream } => out.push(WireStep::HostRead {
                stream: stream.clone(),
            }),
        }
    }
}

/// Rebuilds `children` steps from the front of `flat`, consuming them.
fn unflatten(
    program: &str,
    flat: &mut std::vec::IntoIter<WireStep>,
    children: u32,
    depth: usize,
) -> Result<Vec<Step>, PackageError> {
    if depth > MAX_REPEAT_NESTING {
        return Err(PackageError::Nesting {
            program: program.to_string(),
            max: MAX_REPEAT_NESTING,
        });
    }
    // Each child is at least one flat step, so `remaining` bounds the allocation.
    let remaining = flat.len();
    if children as usize > remaining {
        return Err(PackageError::RepeatBody {
            program: program.to_string(),
            children,
            remaining,
        });
    }
    let mut steps = Vec::with_capacity(children as usize);
    for _ in 0..children {
        let Some(wire) = flat.next() else {
            return Err(PackageError::RepeatBody {
                program: program.to_string(),
                children,
                remaining: 0,
            });
        };
        steps.push(match wire {
            WireStep::Compute(compute) => Step::Compute(compute),
            WireStep::Exchange(phase) => Step::Exchange(phase),
            WireStep::Sync => Step::Sync,
            WireStep::Repeat { count, children } => Step::Repeat {
                count,
                body: unflatten(program, flat, children, depth + 1)?,
            },
            WireStep::HostWrite { stream } => Step::HostWrite { stream },
            WireStep::HostRead { stream } => Step::HostRead { stream },
        });
    }
    Ok(steps)
}

/// Consumes the data section front to back.
struct DataCursor<'a> {
    data: &'a [u8],
    at: usize,
    file_offset: u64,
}

impl<'a> DataCursor<'a> {
    fn take(
        &mut self,
        what: impl Fn() -> String,
        bytes: u64,
    ) -> Result<(&'a [u8], u64), PackageError> {
        let remaining = (self.data.len() - self.at) as u64;
        if bytes > remaining {
            return Err(PackageError::DataOverrun {
                what: what(),
                bytes,
                remaining,
            });
        }
        let start = self.at;
        self.at += bytes as usize;
        Ok((&self.data[start..self.at], self.file_offset + start as u64))
    }
}

pub(super) fn encode(package: &Package) -> Result<Vec<u8>, PackageError> {
    let spec = &PACKAGE_SPEC;
    let image = &package.image;
    // Exhaustive destructuring: a new image field must be given a place in the format.
    let DeviceImage {
        format_version,
        target,
        kernels,
        tiles,
        streams,
        programs,
    } = image;
    let mut data = Vec::new();
    let wire_tiles = tiles
        .iter()
        .map(
            |TileImage {
                 tile,
                 segments,
                 code,
             }| WireTile {
                tile: *tile,
                segments: segments
                    .iter()
                    .map(|segment| {
                        data.extend_from_slice(&segment.bytes);
                        (segment.address, segment.bytes.len() as u64)
                    })
                    .collect(),
                code: code.clone(),
            },
        )
        .collect();
    let wire_programs = programs
        .iter()
        .map(|Program { name, steps }| {
            let mut flat = Vec::new();
            flatten(steps, &mut flat);
            WireProgram {
                name: name.clone(),
                steps: flat,
            }
        })
        .collect();
    let wire_image = WireImage {
        format_version: *format_version,
        target: target.clone(),
        kernels: kernels.clone(),
        tiles: wire_tiles,
        streams: streams.clone(),
        programs: wire_programs,
    };
    let wire_bindings: Vec<SlicedBinding> = package
        .bindings
        .iter()
        .map(|b| {
            data.extend_from_slice(&b.data);
            SlicedBinding {
                binding: WireBinding {
                    name: b.name.clone(),
                    role: b.role,
                    stream: b.stream.clone(),
                    precision: b.precision,
                    scale_exp: b.scale_exp,
                    shape: b.shape.clone(),
                    pieces: b.pieces.clone(),
                    data_bytes: b.data.len() as u64,
                },
                iterations: b.iterations,
            }
        })
        .collect();
    let wire_objects = package
        .objects
        .iter()
        .map(|(hash, object)| {
            data.extend_from_slice(&object.bytes);
            WireObject {
                sha256: hash.clone(),
                bytes: object.bytes.len() as u64,
                cache_key: object.cache_key.clone(),
                kernel_compiler: object.kernel_compiler.clone(),
                llvm: object.llvm.clone(),
                triple: object.triple.clone(),
                cpu: object.cpu.clone(),
            }
        })
        .collect();
    let sections = vec![
        container::to_section(
            spec,
            "meta",
            &WireMeta {
                name: package.name.clone(),
            },
        )?,
        container::to_section(spec, "image", &wire_image)?,
        container::to_section(
            spec,
            "kernels",
            &WireKernels {
                artifacts: package.kernels.clone(),
                objects: wire_objects,
            },
        )?,
        container::to_section(spec, "bindings", &wire_bindings)?,
        container::to_section(spec, "calls", &package.calls)?,
        container::to_section(spec, "profile-plan", &package.profile_plan)?,
        container::to_section(spec, "device-config", &package.device_config.writes)?,
        data,
        super::source::encode(spec, package.source.as_ref())?,
        container::to_section(spec, "memory", &package.memory)?,
    ];
    Ok(container::encode(spec, &package.compiler, &sections)?)
}

/// The sections of a package file by kind; `source` already decoded (`None` in version 1
/// files, which have no source section).
struct PackageSections<'a> {
    meta: container::Section<'a>,
    image: container::Section<'a>,
    kernels: container::Section<'a>,
    bindings: container::Section<'a>,
    calls: container::Section<'a>,
    plan: container::Section<'a>,
    config: container::Section<'a>,
    data: container::Section<'a>,
    source: Option<PackageSource>,
    memory: Option<container::Section<'a>>,
}

/// Names the sections of a decoded container (version 1 without `source`) and decodes the
/// source section.
fn package_sections<'a>(
    spec: &FormatSpec,
    sections: &[container::Section<'a>],
) -> Result<PackageSections<'a>, PackageError> {
    // Version 1 has no source section; decode() returns exactly one section per kind.
    let [meta, image, kernels, bindings, calls, plan, config, data, ref source @ ..] = *sections
    else {
        return Err(section_table_size());
    };
    let (source, memory) = match source {
        [] => (None, None),
        [source] => (super::source::decode(spec, source)?, None),
        [source, memory] => (super::source::decode(spec, source)?, Some(*memory)),
        _ => return Err(section_table_size()),
    };
    Ok(PackageSections {
        meta,
        image,
        kernels,
        bindings,
        calls,
        plan,
        config,
        data,
        source,
        memory,
    })
}

fn section_table_size() -> PackageError {
    PackageError::Internal {
        detail: "section table size".into(),
    }
}

/// Rebuilds the tiles' images, taking each segment's bytes from the data section and
/// recording where they lie.
fn decode_tiles(
    wire_tiles: Vec<WireTile>,
    cursor: &mut DataCursor<'_>,
    layout: &mut FileLayout,
) -> Result<Vec<TileImage>, PackageError> {
    let mut tiles = Vec::with_capacity(wire_tiles.len());
    for wire_tile in wire_tiles {
        let mut segments = Vec::with_capacity(wire_tile.segments.len());
        for (address, length) in wire_tile.segments {
            let tile = wire_tile.tile;
            let (bytes, offset) =
                cursor.take(|| format!("tile {tile} segment at {address:#x}"), length)?;
            layout.segments.push((tile, address, offset, length));
            segments.push(Segment {
                address,
                bytes: bytes.to_vec(),
            });
        }
        tiles.push(TileImage {
            tile: wire_tile.tile,
            segments,
            code: wire_tile.code,
        });
    }
    Ok(tiles)
}

/// Rebuilds the programs' nested steps from their flat lists.
fn decode_programs(wire_programs: Vec<WireProgram>) -> Result<Vec<Program>, PackageError> {
    let mut programs = Vec::with_capacity(wire_programs.len());
    for program in wire_programs {
        let mut flat = program.steps.into_iter();
        // The top level is whatever remains after nested bodies are consumed, so rebuild one
        // top-level step (and its body) at a time until the list is used up.
        let mut steps = Vec::new();
        while flat.len() > 0 {
            steps.extend(unflatten(&program.name, &mut flat, 1, 0)?);
        }
        programs.push(Program {
            name: program.name,
            steps,
        });
    }
    Ok(programs)
}

/// Rebuilds the bindings, taking each one's data from the data section and recording where
/// weights lie.
fn decode_binding_data(
    wire_bindings: Vec<SlicedBinding>,
    cursor: &mut DataCursor<'_>,
    layout: &mut FileLayout,
) -> Result<Vec<Binding>, PackageError> {
    let mut bindings = Vec::with_capacity(wire_bindings.len());
    for SlicedBinding {
        binding: wire_binding,
        iterations,
    } in wire_bindings
    {
        let (data, offset) = cursor.take(
            || format!("data of binding '{}'", wire_binding.name),
            wire_binding.data_bytes,
        )?;
        if wire_binding.data_bytes > 0 {
            layout
                .weights
                .push((wire_binding.name.clone(), offset, wire_binding.data_bytes));
        }
        bindings.push(Binding {
            name: wire_binding.name,
            role: wire_binding.role,
            stream: wire_binding.stream,
            precision: wire_binding.precision,
            scale_exp: wire_binding.scale_exp,
            shape: wire_binding.shape,
            iterations,
            pieces: wire_binding.pieces,
            data: data.to_vec(),
        });
    }
    Ok(bindings)
}

/// Rebuilds the kernel objects, taking each one's bytes from the data section, checking
/// them against their recorded hash and refusing a hash listed twice.
fn decode_objects(
    wire_objects: Vec<WireObject>,
    cursor: &mut DataCursor<'_>,
    layout: &mut FileLayout,
) -> Result<BTreeMap<String, KernelObject>, PackageError> {
    let mut objects = BTreeMap::new();
    for object in wire_objects {
        let hash = object.sha256.clone();
        let (bytes, offset) = cursor.take(|| format!("kernel object {hash}"), object.bytes)?;
        let actual = crate::sha256_hex(bytes);
        if actual != object.sha256 {
            return Err(PackageError::ObjectHash {
                recorded: object.sha256,
                actual,
            });
        }
        layout.objects.push((hash.clone(), offset, object.bytes));
        let previous = objects.insert(
            hash.clone(),
            KernelObject {
                bytes: bytes.to_vec(),
                cache_key: object.cache_key,
                kernel_compiler: object.kernel_compiler,
                llvm: object.llvm,
                triple: object.triple,
                cpu: object.cpu,
            },
        );
        if previous.is_some() {
            return Err(PackageError::DuplicateObject { sha256: hash });
        }
    }
    Ok(objects)
}

pub(super) fn decode(bytes: &[u8]) -> Result<(Package, FileLayout), PackageError> {
    let spec = spec_for(bytes);
    let file = container::decode(spec, bytes)?;
    let sections = package_sections(spec, &file.sections)?;
    let mut layout = FileLayout {
        file_bytes: bytes.len() as u64,
        sections: file
            .sections
            .iter()
            .map(|s| (s.name, s.file_offset, s.bytes.len() as u64))
            .collect(),
        ..FileLayout::default()
    };
    let meta: WireMeta = container::from_section(spec, &sections.meta)?;
    let wire_image: WireImage = container::from_section(spec, &sections.image)?;
    let wire_kernels: WireKernels = container::from_section(spec, &sections.kernels)?;
    let wire_bindings = decode_bindings(spec, &sections.bindings)?;
    let calls: Vec<HostCall> = container::from_section(spec, &sections.calls)?;
    let profile_plan: ProfilePlan = container::from_section(spec, &sections.plan)?;
    let writes: Vec<RegisterWrite> = container::from_section(spec, &sections.config)?;
    let memory: MemoryPlan = match &sections.memory {
        Some(section) => container::from_section(spec, section)?,
        None => MemoryPlan::default(),
    };
    let mut cursor = DataCursor {
        data: sections.data.bytes,
        at: 0,
        file_offset: sections.data.file_offset,
    };

    let tiles = decode_tiles(wire_image.tiles, &mut cursor, &mut layout)?;
    let programs = decode_programs(wire_image.programs)?;
    let image = DeviceImage {
        format_version: wire_image.format_version,
        target: wire_image.target,
        kernels: wire_image.kernels,
        tiles,
        streams: wire_image.streams,
        programs,
    };

    let bindings = decode_binding_data(wire_bindings, &mut cursor, &mut layout)?;
    let objects = decode_objects(wire_kernels.objects, &mut cursor, &mut layout)?;
    let unused = cursor.data.len() - cursor.at;
    if unused != 0 {
        return Err(PackageError::DataUnused {
            bytes: unused as u64,
        });
    }
    let package = Package {
        compiler: file.compiler,
        name: meta.name,
        image,
        kernels: wire_kernels.artifacts,
        objects,
        bindings,
        calls,
        profile_plan,
        device_config: DeviceConfig { writes },
        source: sections.source,
        memory,
    };
    Ok((package, layout))
}
