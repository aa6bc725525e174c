//! Structural validation of a [`DeviceImage`] against a [`Target`]: every tile id, address
//! range, kernel index and stream reference is checked before anything is loaded. Hazards that
//! need timing (exchange conflicts, kernel operand footprints) are the simulator's
//! `hardwareTest` (`crate::sim`).

use std::collections::BTreeSet;

use super::{AddressRange, DeviceImage, Step, StreamDirection, IMAGE_FORMAT_VERSION};
use crate::target::Target;

/// Why an image cannot run on a target. Messages name the program, the pre-order step number,
/// the tile and the address range involved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImageError {
    #[error(
        "image format version {found} is not supported (this build reads version {supported})"
    )]
    Version { found: u32, supported: u32 },
    #[error("image was built for target '{image}', the device is '{device}'")]
    TargetMismatch { image: String, device: String },
    #[error("{context}: tile {tile} is out of range (target {target} has tiles 0..{tiles})")]
    TileOutOfRange {
        context: String,
        tile: u32,
        tiles: u32,
        target: String,
    },
    #[error("tile {tile} has more than one tile image")]
    DuplicateTileImage { tile: u32 },
    #[error("{context}: tile {tile} range {range} is outside SRAM {sram_start:#x}..{sram_end:#x}")]
    OutsideSram {
        context: String,
        tile: u32,
        range: AddressRange,
        sram_start: u32,
        sram_end: u32,
    },
    #[error("tile {tile}: segment {range} extends past the loadable limit {limit:#x}")]
    BeyondLoadable {
        tile: u32,
        range: AddressRange,
        limit: u32,
    },
    #[error("tile {tile}: segments {first} and {second} overlap")]
    SegmentsOverlap {
        tile: u32,
        first: AddressRange,
        second: AddressRange,
    },
    #[error(
        "tile {tile}: code range {range} is outside the executable region {start:#x}..{end:#x}"
    )]
    CodeNotExecutable {
        tile: u32,
        range: AddressRange,
        start: u32,
        end: u32,
    },
    #[error("program '{program}' step {step}: tile {tile} calls kernel {kernel}, the kernel table has {kernels}")]
    KernelIndex {
        program: String,
        step: u32,
        tile: u32,
        kernel: u32,
        kernels: usize,
    },
    #[error("program '{program}' step {step} (phase {phase}): tile {tile} {role} of {bytes} bytes at {range}: {reason}")]
    BadTransfer {
        program: String,
        step: u32,
        phase: u32,
        tile: u32,
        role: &'static str,
        bytes: u32,
        range: AddressRange,
        reason: String,
    },
    #[error("program '{program}' step {step}: unknown stream '{stream}'")]
    UnknownStream {
        program: String,
        step: u32,
        stream: String,
    },
    #[error("program '{program}' step {step}: stream '{stream}' is {direction:?}, the step needs the other direction")]
    StreamDirectionMismatch {
        program: String,
        step: u32,
        stream: String,
        direction: StreamDirection,
    },
    #[error("stream '{name}' is declared more than once")]
    DuplicateStream { name: String },
    #[error("program '{name}' is declared more than once")]
    DuplicateProgram { name: String },
}

/// What validation counted (for logs and reports).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImageSummary {
    pub tiles_with_images: usize,
    pub segment_bytes: u64,
    pub programs: usize,
    /// Steps over all programs, counted once (repeat bodies are not multiplied).
    pub steps: u64,
    pub kernel_runs: u64,
    pub transfers: u64,
}

struct Checker<'a> {
    target: &'a Target,
    kernels: usize,
    summary: ImageSummary,
}

impl DeviceImage {
    /// Checks the image against `target`: format version, target name, tile ids, segments
    /// inside SRAM and below the loadable limit, code only in the executable region, kernel
    /// indices, stream references and exchange row ranges.
    pub fn validate(&self, target: &Target) -> Result<ImageSummary, ImageError> {
        if self.format_version != IMAGE_FORMAT_VERSION {
            return Err(ImageError::Version {
                found: self.format_version,
                supported: IMAGE_FORMAT_VERSION,
            });
        }
        if self.target != target.name {
            return Err(ImageError::TargetMismatch {
                image: self.target.clone(),
                device: target.name.clone(),
            });
        }
        let mut checker = Checker {
            target,
            kernels: self.kernels.len(),
            summary: ImageSummary::default(),
        };
        checker.tiles(self)?;
        let mut names = BTreeSet::new();
        for stream in &self.streams {
            if !names.insert(stream.name.as_str()) {
                return Err(ImageError::DuplicateStream {
                    name: stream.name.clone(),
                });
            }
            for slice in &stream.slices {
                let context = || format!("stream '{}'", stream.name);
                checker.tile(context, slice.tile)?;
                checker.in_sram(
                    context,
                    slice.tile,
                    AddressRange::new(slice.address, slice.bytes),
                )?;
            }
        }
        let mut names = BTreeSet::new();
        for program in &self.programs {
            if !names.insert(program.name.as_str()) {
                return Err(ImageError::DuplicateProgram {
                    name: program.name.clone(),
                });
            }
            let mut next_step = 0;
            checker.steps(self, &program.name, &program.steps, &mut next_step)?;
            checker.summary.programs += 1;
        }
        Ok(checker.summary)
    }
}

impl Checker<'_> {
    /// Checks a tile number; `context` names the place for the error (built only then).
    fn tile(&self, context: impl Fn() -> String, tile: u32) -> Result<(), ImageError> {
        let tiles = self.target.geometry.tiles.value;
        if tile >= tiles {
            return Err(ImageError::TileOutOfRange {
                context: context(),
                tile,
                tiles,
                target: self.target.name.clone(),
            });
        }
        Ok(())
    }

    fn in_sram(
        &self,
        context: impl Fn() -> String,
        tile: u32,
        range: AddressRange,
    ) -> Result<(), ImageError> {
        let sram_start = self.target.memory.sram_base.value;
        let sram_end = self.target.sram_end();
        if range.start < sram_start || range.end() > u64::from(sram_end) {
            return Err(ImageError::OutsideSram {
                context: context(),
                tile,
                range,
                sram_start,
                sram_end,
            });
        }
        Ok(())
    }

    fn tiles(&mut self, image: &DeviceImage) -> Result<(), ImageError> {
        let memory = &self.target.memory;
        let mut seen = BTreeSet::new();
        for tile_image in &image.tiles {
            let tile = tile_image.tile;
            self.tile(|| "tile image".into(), tile)?;
            if !seen.insert(tile) {
                return Err(ImageError::DuplicateTileImage { tile });
            }
            let mut ranges = Vec::with_capacity(tile_image.segments.len());
            for segment in &tile_image.segments {
                let bytes = u32::try_from(segment.bytes.len()).unwrap_or(u32::MAX);
                let range = AddressRange::new(segment.address, bytes);
                self.in_sram(|| "segment".into(), tile, range)?;
                if range.end() > u64::from(memory.loadable_limit.value) {
                    return Err(ImageError::BeyondLoadable {
                        tile,
                        range,
                        limit: memory.loadable_limit.value,
                    });
                }
                ranges.push(range);
                self.summary.segment_bytes += u64::from(bytes);
            }
            ranges.sort();
            for pair in ranges.windows(2) {
                if pair[1].bytes > 0 && pair[0].end() > u64::from(pair[1].start) {
                    return Err(ImageError::SegmentsOverlap {
                        tile,
                        first: pair[0],
                        second: pair[1],
                    });
                }
            }
            for &range in &tile_image.code {
                let (start, end) = (memory.standard_start.value, memory.standard_end.value);
                if range.start < start || range.end() > u64::from(end) {
                    return Err(ImageError::CodeNotExecutable {
                        tile,
                        range,
                        start,
                        end,
                    });
                }
            }
            self.summary.tiles_with_images += 1;
        }
        Ok(())
    }

    fn steps(
        &mut self,
        image: &DeviceImage,
        program: &str,
        steps: &[Step],
        next_step: &mut u32,
    ) -> Result<(), ImageError> {
        for step in steps {
            let id = *next_step;
            *next_step += 1;
            self.summary.steps += 1;
            match step {
                Step::Compute(compute) => {
                    for run in &compute.runs {
                        self.tile(|| format!("program '{program}' step {id}"), run.tile)?;
                        if run.kernel as usize >= self.kernels {
                            return Err(ImageError::KernelIndex {
                                program: program.to_string(),
                                step: id,
                                tile: run.tile,
                                kernel: run.kernel,
                                kernels: self.kernels,
                            });
                        }
                    }
                    self.summary.kernel_runs += compute.runs.len() as u64;
                }
                Step::Exchange(phase) => {
                    let max_bytes = self
                        .target
                        .exchange
                        .max_transfer_words
                        .value
                        .saturating_mul(4);
                    let rows = phase
                        .sends
                        .iter()
                        .map(|s| ("send", s.tile, s.address, s.bytes))
                        .chain(
                            phase
                                .receives
                                .iter()
                                .map(|r| ("receive", r.tile, r.address, r.bytes)),
                        );
                    for (role, tile, address, bytes) in rows {
                        let context = || {
                            format!(
                                "program '{program}' step {id} (phase {}) {role}",
                                phase.phase
                            )
                        };
                        self.tile(context, tile)?;
                        let range = AddressRange::new(address, bytes);
                        let bad = |reason: String| ImageError::BadTransfer {
                            program: program.to_string(),
                            step: id,
                            phase: phase.phase,
                            tile,
                            role,
                            bytes,
                            range,
                            reason,
                        };
                        if bytes == 0 {
                            return Err(bad("empty transfer".to_string()));
                        }
                        if bytes > max_bytes {
                            return Err(bad(format!(
                                "larger than the largest single transfer ({max_bytes} bytes)"
                            )));
                        }
                        self.in_sram(context, tile, range)?;
                    }
                    for receive in &phase.receives {
                        self.tile(
                            || format!("program '{program}' step {id} receive source"),
                            receive.from_tile,
                        )?;
                    }
                    self.summary.transfers += phase.sends.len() as u64;
                }
                Step::Sync => {}
                Step::Repeat { body, .. } => self.steps(image, program, body, next_step)?,
                Step::HostWrite { stream } | Step::HostRead { stream } => {
                    let wanted = match step {
                        Step::HostWrite { .. } => StreamDirection::HostToDevice,
                        _ => StreamDirection::DeviceToHost,
                    };
                    let binding =
                        image
                            .stream(stream)
                            .ok_or_else(|| ImageError::UnknownStream {
                                program: program.to_string(),
                                step: id,
                                stream: stream.clone(),
                            })?;
                    if binding.direction != wanted {
                        return Err(ImageError::StreamDirectionMismatch {
                            program: program.to_string(),
                            step: id,
                            stream: stream.clone(),
                            direction: binding.direction,
                        });
                    }
                }
            }
        }
        Ok(())
    }
}
