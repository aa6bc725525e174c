//! `ipu inspect`: readable views of a package, for people deciding what went wrong.
//!
//! * [`summary`]: identity, target, kernels (embedded or by spec), programs with step counts,
//!   host calls with their phases, bindings in one line each, profile plan, configuration and
//!   the file's sections;
//! * [`bindings`]: every binding with each of its tile pieces and, for weights, where the
//!   data lies in the file;
//! * [`tile`]: one tile: its place on the physical grid, segments with file offsets, code,
//!   binding pieces, and every program step that touches it (kernel runs with their
//!   arguments, exchange sends and receives).
//!
//! Every view is deterministic text (no colour, no terminal width), so tests and scripts can
//! compare it.

use std::fmt::Write;

use ipu_device::image::{DeviceImage, Step, StreamDirection};

use crate::package::{BindingPiece, FileLayout, Package, PACKAGE_FORMAT_VERSION};

/// Why a view cannot be produced.
#[derive(Debug, thiserror::Error)]
pub enum InspectError {
    #[error("tile {tile} is out of range: target {target} has tiles 0..{tiles}")]
    TileOutOfRange {
        tile: u32,
        tiles: u32,
        target: String,
    },
}

/// `1,234,567`.
fn grouped(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn shape(dims: &[u64]) -> String {
    format!(
        "[{}]",
        dims.iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    )
}

#[derive(Default)]
struct StepCounts {
    steps: u64,
    compute: u64,
    kernel_runs: u64,
    exchange: u64,
    transfers: u64,
    sync: u64,
    repeat: u64,
    host: u64,
}

fn count(steps: &[Step], counts: &mut StepCounts) {
    for step in steps {
        counts.steps += 1;
        match step {
            Step::Compute(compute) => {
                counts.compute += 1;
                counts.kernel_runs += compute.runs.len() as u64;
            }
            Step::Exchange(phase) => {
                counts.exchange += 1;
                counts.transfers += phase.sends.len() as u64;
            }
            Step::Sync => counts.sync += 1,
            Step::Repeat { body, .. } => {
                counts.repeat += 1;
                count(body, counts);
            }
            Step::HostWrite { .. } | Step::HostRead { .. } => counts.host += 1,
        }
    }
}

/// The overview (`ipu inspect p.ipuexe`).
pub fn summary(package: &Package, layout: &FileLayout) -> String {
    let mut out = String::new();
    write_identity(&mut out, package, layout);
    write_kernels(&mut out, package);
    write_programs(&mut out, &package.image);
    write_host_calls(&mut out, package);
    write_bindings(&mut out, package);
    write_profile_plan(&mut out, package);
    write_device_configuration(&mut out, package);
    write_source(&mut out, package);
    write_sections(&mut out, layout);
    out
}

/// The package's identity, file size, target and image size.
fn write_identity(out: &mut String, package: &Package, layout: &FileLayout) {
    let image = &package.image;
    let _ = writeln!(
        out,
        "package {} (compiler {}, format {PACKAGE_FORMAT_VERSION}, {} bytes)",
        package.name,
        package.compiler,
        grouped(layout.file_bytes)
    );
    let segment_bytes: u64 = image
        .tiles
        .iter()
        .flat_map(|t| &t.segments)
        .map(|s| s.bytes.len() as u64)
        .sum();
    let _ = writeln!(
        out,
        "target {} ({} tiles); {} tiles with images, {} segment bytes",
        image.target,
        package.tile_count(),
        image.tiles.len(),
        grouped(segment_bytes)
    );
}

/// The kernels, each with its embedded object or as built by spec.
fn write_kernels(out: &mut String, package: &Package) {
    let embedded = package
        .kernels
        .iter()
        .filter(|k| k.object.is_some())
        .count();
    let _ = writeln!(
        out,
        "kernels: {} ({} with embedded objects, {} distinct objects, {} by spec)",
        package.kernels.len(),
        embedded,
        package.objects.len(),
        package.kernels.len() - embedded
    );
    for (index, artifact) in package.kernels.iter().enumerate() {
        match &artifact.object {
            Some(hash) => {
                let object = package.objects.get(hash);
                let _ = writeln!(
                    out,
                    "  {index:>3} {}  object {}  {} bytes  {}",
                    artifact.name,
                    &hash[..hash.len().min(16)],
                    grouped(object.map_or(0, |o| o.bytes.len() as u64)),
                    object.map_or("", |o| o.triple.as_str())
                );
            }
            None => {
                let _ = writeln!(out, "  {index:>3} {}  by spec", artifact.name);
            }
        }
    }
}

/// The programs with their step counts by kind.
fn write_programs(out: &mut String, image: &DeviceImage) {
    let _ = writeln!(out, "programs: {}", image.programs.len());
    for program in &image.programs {
        let mut counts = StepCounts::default();
        count(&program.steps, &mut counts);
        let _ = writeln!(
            out,
            "  {}: {} steps: {} compute ({} kernel runs), {} exchange ({} transfers), {} sync, {} repeat, {} host",
            program.name,
            counts.steps,
            counts.compute,
            grouped(counts.kernel_runs),
            counts.exchange,
            grouped(counts.transfers),
            counts.sync,
            counts.repeat,
            counts.host
        );
    }
}

/// The host calls with the stream phases of each.
fn write_host_calls(out: &mut String, package: &Package) {
    let image = &package.image;
    let _ = writeln!(out, "host calls: {}", package.calls.len());
    for call in &package.calls {
        let phases = call.phases(image);
        let streams: Vec<String> = phases
            .iter()
            .map(|p| {
                let arrow = match p.direction {
                    StreamDirection::HostToDevice => "->",
                    StreamDirection::DeviceToHost => "<-",
                };
                format!("{arrow}{}", p.stream)
            })
            .collect();
        let _ = writeln!(
            out,
            "  {}: command {}, program {}, {} phases [{}]",
            call.name,
            call.command,
            call.program,
            phases.len(),
            streams.join(" ")
        );
    }
}

/// The bindings, one line each.
fn write_bindings(out: &mut String, package: &Package) {
    let _ = writeln!(out, "bindings: {}", package.bindings.len());
    for binding in &package.bindings {
        let tiles: std::collections::BTreeSet<u32> =
            binding.pieces.iter().map(|p| p.tile).collect();
        let _ = writeln!(
            out,
            "  {} {} {:?} {} over {} tiles",
            binding.role.name(),
            binding.name,
            binding.precision,
            shape(&binding.shape),
            tiles.len()
        );
    }
}

/// The profile plan: its programs and the ops it prices.
fn write_profile_plan(out: &mut String, package: &Package) {
    let plan = &package.profile_plan;
    let _ = writeln!(
        out,
        "profile plan: programs [{}], {} ops",
        plan.programs.join(", "),
        plan.ops.len()
    );
    for op in &plan.ops {
        let _ = writeln!(
            out,
            "  {} {}: kernel model {} cycles, estimated {}",
            op.op,
            op.provenance,
            grouped(op.ideal_cycles),
            grouped(op.estimated_cycles)
        );
    }
}

/// The device configuration's register writes.
fn write_device_configuration(out: &mut String, package: &Package) {
    let writes = &package.device_config.writes;
    let _ = writeln!(
        out,
        "device configuration: {} register writes",
        writes.len()
    );
    for write in writes {
        let _ = writeln!(out, "  {} = {}", write.register.name(), write.value);
    }
}

/// The MLIR source kept for the host reference, if any.
fn write_source(out: &mut String, package: &Package) {
    match &package.source {
        Some(source) => {
            let _ = writeln!(
                out,
                "source: function @{}, precision {}, {} bytes of MLIR ({} lines) for the host reference",
                source.function,
                source.precision.describe(),
                grouped(source.module.len() as u64),
                source.module.lines().count()
            );
        }
        None => {
            let _ = writeln!(out, "source: none (ipu run skips the numerical test)");
        }
    }
}

/// The file's sections with their offsets and sizes.
fn write_sections(out: &mut String, layout: &FileLayout) {
    let _ = writeln!(out, "sections:");
    for (name, offset, bytes) in &layout.sections {
        let _ = writeln!(
            out,
            "  {name:<14} at {:>10}  {:>12} bytes",
            grouped(*offset),
            grouped(*bytes)
        );
    }
}

/// The tensor bytes of a piece: `start..end`, and for a strided piece the runs it gathers
/// (`start..end` then spans the first run's start to the last run's end).
fn tensor_runs(piece: &BindingPiece) -> String {
    let (start, _) = piece.run_range(0);
    let (_, end) = piece.run_range(piece.runs.max(1) - 1);
    let padding = if piece.pad == 0 {
        String::new()
    } else {
        format!(" and {} zero bytes", piece.pad)
    };
    if piece.runs <= 1 {
        format!("{start}..{end}{padding}")
    } else {
        format!(
            "{start}..{end} in {} runs of {} bytes{padding}, stride {}",
            piece.runs,
            piece.tensor_run_bytes(),
            piece.stride
        )
    }
}

/// Every binding with its pieces (`ipu inspect --bindings`).
pub fn bindings(package: &Package, layout: &FileLayout) -> String {
    let mut out = String::new();
    for binding in &package.bindings {
        let scale = if binding.precision.is_fp8() {
            format!(" scale 2^{}", binding.scale_exp)
        } else {
            String::new()
        };
        // A stack streamed one slice per write: the pieces place one slice; a resident one
        // is written whole.
        let slices = match (binding.iterations, binding.slices_per_write()) {
            (1, _) => String::new(),
            (n, 1) => format!(", a resident stack of {n} slices (one per iteration)"),
            (n, _) => format!(" of one slice, in {n} slices (one per write)"),
        };
        let _ = writeln!(
            out,
            "{} {}: {:?}{scale} {}, {} bytes, stream '{}', {} pieces{slices}",
            binding.role.name(),
            binding.name,
            binding.precision,
            shape(&binding.shape),
            grouped(binding.tensor_bytes().unwrap_or(0)),
            binding.stream,
            binding.pieces.len()
        );
        if let Some((_, offset, bytes)) = layout.weights.iter().find(|w| w.0 == binding.name) {
            let _ = writeln!(
                out,
                "  data at file offset {} ({} bytes)",
                grouped(*offset),
                grouped(*bytes)
            );
        }
        for piece in &binding.pieces {
            let _ = writeln!(
                out,
                "  tile {:>4} {:#07x}..{:#07x} <-> tensor bytes {}",
                piece.tile,
                piece.address,
                u64::from(piece.address) + u64::from(piece.bytes),
                tensor_runs(piece)
            );
        }
    }
    out
}

/// One tile (`ipu inspect --tile N`).
pub fn tile(package: &Package, layout: &FileLayout, tile: u32) -> Result<String, InspectError> {
    let target = package.target().ok();
    let tiles = package.tile_count();
    if tile >= tiles {
        return Err(InspectError::TileOutOfRange {
            tile,
            tiles,
            target: package.image.target.clone(),
        });
    }
    let mut out = String::new();
    let place = target
        .as_ref()
        .and_then(|t| t.logical_to_physical(tile).ok())
        .map(|p| format!(" (physical row {}, column {})", p.row, p.column))
        .unwrap_or_default();
    let _ = writeln!(out, "tile {tile}{place}");
    let image_tile = package.image.tiles.iter().find(|t| t.tile == tile);
    let segments: Vec<_> = layout.segments.iter().filter(|s| s.0 == tile).collect();
    let _ = writeln!(out, "segments: {}", segments.len());
    for (_, address, offset, bytes) in segments {
        let _ = writeln!(
            out,
            "  {address:#07x}..{:#07x} {} bytes, file offset {}",
            u64::from(*address) + bytes,
            grouped(*bytes),
            grouped(*offset)
        );
    }
    let code = image_tile.map(|t| t.code.as_slice()).unwrap_or_default();
    let _ = writeln!(out, "code ranges: {}", code.len());
    for range in code {
        let _ = writeln!(out, "  {range}");
    }
    let _ = writeln!(out, "binding pieces:");
    for binding in &package.bindings {
        for piece in binding.pieces.iter().filter(|p| p.tile == tile) {
            let _ = writeln!(
                out,
                "  {} {}: {:#07x}..{:#07x} <-> tensor bytes {}",
                binding.role.name(),
                binding.name,
                piece.address,
                u64::from(piece.address) + u64::from(piece.bytes),
                tensor_runs(piece)
            );
        }
    }
    let _ = writeln!(out, "program steps on this tile:");
    for program in &package.image.programs {
        let mut next = 0;
        tile_steps(
            package,
            &program.name,
            &program.steps,
            tile,
            &mut next,
            &mut out,
        );
    }
    Ok(out)
}

fn tile_steps(
    package: &Package,
    program: &str,
    steps: &[Step],
    tile: u32,
    next: &mut u32,
    out: &mut String,
) {
    for step in steps {
        let id = *next;
        *next += 1;
        match step {
            Step::Compute(compute) => {
                for run in compute.runs.iter().filter(|r| r.tile == tile) {
                    let kernel = package
                        .kernels
                        .get(run.kernel as usize)
                        .map_or("?", |k| k.name.as_str());
                    let _ = writeln!(
                        out,
                        "  {program} step {id} compute {}: {kernel} args {:x?}",
                        compute.provenance, run.args
                    );
                }
            }
            Step::Exchange(phase) => {
                for send in phase.sends.iter().filter(|s| s.tile == tile) {
                    let _ = writeln!(
                        out,
                        "  {program} step {id} exchange phase {}: send {} bytes from {:#07x} at slot {}",
                        phase.phase, send.bytes, send.address, send.slot
                    );
                }
                for receive in phase.receives.iter().filter(|r| r.tile == tile) {
                    let _ = writeln!(
                        out,
                        "  {program} step {id} exchange phase {}: receive {} bytes from tile {} into {:#07x} at slot {}",
                        phase.phase, receive.bytes, receive.from_tile, receive.address, receive.slot
                    );
                }
            }
            Step::Repeat { count, body } => {
                let _ = writeln!(out, "  {program} step {id} repeat x{count}");
                tile_steps(package, program, body, tile, next, out);
            }
            Step::HostWrite { stream } | Step::HostRead { stream } => {
                let touches = package
                    .image
                    .stream(stream)
                    .is_some_and(|s| s.slices.iter().any(|slice| slice.tile == tile));
                if touches {
                    let direction = if matches!(step, Step::HostWrite { .. }) {
                        "host write"
                    } else {
                        "host read"
                    };
                    let _ = writeln!(out, "  {program} step {id} {direction} '{stream}'");
                }
            }
            Step::Sync => {}
        }
    }
}
