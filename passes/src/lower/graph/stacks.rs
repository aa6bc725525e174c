//! Resident per-iteration stacks of an `ipu.scan`.
//!
//! A stack that is a parameter or a constant (written once, at `initialize`) stays on the
//! device for every run. The bytes a body op reads of one slice are cut into parts (one per
//! reader of the same bytes, and parts of about twice an even share), each stored once on a
//! holder ([`Holders`]: a reader when it holds no more than its share of the stack, else the
//! least loaded tile) in a store holding that part of every iteration's slice. In iteration
//! `i` each holder copies part `i` of its store (a `CopySlice` indexed by the repeat's
//! iteration counter) where it reads it, or into a staging buffer when it does not read it,
//! and multicasts it to the other readers in one exchange phase. The host writes the whole
//! stack once, in the layout the reading op asked for (strided runs, zero padding), slice
//! after slice.
//!
//! The counter is a 4-byte buffer on the holding tiles: filled with zero before the repeat
//! and advanced (`Count`) by the repeat's last step of each iteration.

use std::collections::BTreeMap;

use ipu_device::{KernelSpec, Precision};
use ipu_runtime::package::BindingRole;

use super::{unsupported, Lowering};
use crate::lower::program::{Arg, BufferId, HostBinding, HostPiece, Place, Run, TileStep};
use crate::lower::LowerError;
use crate::strategies::repeat::{Holders, STORE_ALIGNMENT};
use crate::tiling::ValueId;

use super::general::Transfers;

/// What makes an iterated stack resident: how its binding is written at `initialize`.
#[derive(Debug, Clone)]
pub(super) struct ResidentStack {
    /// `Parameter` (the caller's tensor, given at initialization) or `Weight` (a constant).
    pub role: BindingRole,
    /// A constant's bytes, whole stack, in its element type.
    pub data: Option<(Vec<u8>, Precision)>,
}

/// The bytes of one slice a set of tiles read at the same place: a piece of the binding
/// without its tile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Content {
    buffer: BufferId,
    offset: u32,
    tensor_offset: u64,
    bytes: u32,
    runs: u32,
    stride: u64,
    pad: u32,
}

/// Parts of a content are cut at multiples of this many bytes within one run.
const PART_UNIT: u32 = 8;

impl Content {
    /// The content cut into at most `count` parts: whole runs each, or, for one run without
    /// padding, ranges of whole 8-byte units (the last part takes the rest).
    fn parts(self, count: u32) -> Vec<Content> {
        let count = count.max(1);
        if self.runs > 1 {
            let run_bytes = self.bytes / self.runs;
            let per = self.runs.div_ceil(count);
            return (0..self.runs)
                .step_by(per as usize)
                .map(|first| {
                    let runs = per.min(self.runs - first);
                    Content {
                        offset: self.offset + first * run_bytes,
                        tensor_offset: self.tensor_offset + u64::from(first) * self.stride,
                        bytes: runs * run_bytes,
                        runs,
                        ..self
                    }
                })
                .collect();
        }
        if self.pad > 0 || self.bytes <= PART_UNIT {
            return vec![self];
        }
        let per = self.bytes.div_ceil(count).div_ceil(PART_UNIT) * PART_UNIT;
        (0..self.bytes)
            .step_by(per as usize)
            .map(|first| Content {
                offset: self.offset + first,
                tensor_offset: self.tensor_offset + u64::from(first),
                bytes: per.min(self.bytes - first),
                ..self
            })
            .collect()
    }

    fn of(piece: &HostPiece) -> Content {
        Content {
            buffer: piece.place.buffer,
            offset: piece.place.offset,
            tensor_offset: piece.tensor_offset,
            bytes: piece.bytes,
            runs: piece.runs,
            stride: piece.stride,
            pad: piece.pad,
        }
    }
}

impl Lowering<'_> {
    /// Places `pieces` of iterated value `value` (one slice, as the reading op asks for it)
    /// from its resident stack; see the module docs.
    pub(super) fn stream_resident(
        &mut self,
        value: ValueId,
        pieces: Vec<HostPiece>,
        (precision, scale_exp): (Precision, i32),
        resident: ResidentStack,
    ) -> Result<(), LowerError> {
        let stream = self.iterated[&value].clone();
        let name = stream.name.clone();
        let slices = stream.iterations;
        let slice_elements: u64 = stream.shape.iter().skip(1).product();
        let slice_bytes = slice_elements * u64::from(precision.bytes());
        // Who reads which bytes: each distinct content is stored once.
        let mut readers: BTreeMap<Content, Vec<u32>> = BTreeMap::new();
        for piece in &pieces {
            let tiles = readers.entry(Content::of(piece)).or_default();
            if !tiles.contains(&piece.tile) {
                tiles.push(piece.tile);
            }
        }
        // A content several tiles read is cut into one part per reader, and any content into
        // parts of about `repeat::piece_bytes` (whole runs, or 8-byte units of one run), so
        // the stores spread over the tiles.
        let unit = crate::strategies::repeat::piece_bytes(slice_bytes, self.tiles);
        let parts: Vec<(Content, &Vec<u32>)> = readers
            .iter()
            .flat_map(|(content, tiles)| {
                let count = (tiles.len() as u64).max(u64::from(content.bytes).div_ceil(unit));
                content
                    .parts(u32::try_from(count).unwrap_or(u32::MAX))
                    .into_iter()
                    .map(move |part| (part, tiles))
            })
            .collect();
        // Which tile holds each part: `repeat::Holders`, shared with the planner. The holders
        // spread the parts of every stack of the scan over all tiles; this stack's store is
        // one buffer on its holders, each part at its offset in the holder's part of a slice.
        let cap = crate::strategies::repeat::holder_cap(slice_bytes, self.tiles);
        let holders = self.holders.get_or_insert_with(|| Holders::new(self.tiles));
        let mut load: BTreeMap<u32, u64> = BTreeMap::new();
        let mut held = Vec::with_capacity(parts.len());
        for &(content, tiles) in &parts {
            let (holder, offset) = holders.place(tiles, u64::from(content.bytes), (&mut load, cap));
            held.push((content, holder, offset, tiles));
        }
        let part = load
            .values()
            .copied()
            .max()
            .unwrap_or(0)
            .max(STORE_ALIGNMENT);
        let store_bytes = part * u64::from(slices);
        let too_large = |what: String| {
            unsupported(
                "ipu.scan",
                format!("resident stack {name}: {what} does not fit a 32-bit tile address"),
            )
        };
        let stride =
            u32::try_from(part).map_err(|_| too_large(format!("{part} bytes per slice")))?;
        let store_size = u32::try_from(store_bytes)
            .map_err(|_| too_large(format!("a store of {store_bytes} bytes")))?;
        let holders: Vec<u32> = load.keys().copied().collect();
        let store = self.program.buffer(
            format!("{name}.store"),
            ipu_device::MemoryClass::Standard,
            store_size,
            holders.clone(),
        );
        // The host writes every slice of every content into its holder's store.
        let mut stored = Vec::with_capacity(held.len() * slices as usize);
        for slice in 0..slices {
            for &(content, holder, offset, _) in &held {
                let in_store = u64::from(slice) * part + offset;
                stored.push(HostPiece {
                    tile: holder,
                    place: Place::at(store, in_store as u32),
                    tensor_offset: content.tensor_offset + u64::from(slice) * slice_bytes,
                    bytes: content.bytes,
                    runs: content.runs,
                    stride: content.stride,
                    pad: content.pad,
                });
            }
        }
        self.resident_binding(&stream, (precision, scale_exp), resident, stored)?;
        // Each iteration: the holders copy their pieces of this iteration's slice where the
        // op reads them, then multicast them to the other readers.
        let counter = self.iteration_counter(&holders);
        // A holder that does not read its part copies it into a staging buffer of its own
        // (its place in the reading buffer may hold other bytes there) and sends it from
        // there.
        let mut staged: BTreeMap<u32, u32> = BTreeMap::new();
        let mut staging_of = Vec::with_capacity(held.len());
        for &(content, holder, _, readers) in &held {
            if readers.contains(&holder) {
                staging_of.push(None);
            } else {
                let at = staged.entry(holder).or_default();
                staging_of.push(Some(*at));
                *at += content.bytes.div_ceil(STORE_ALIGNMENT as u32) * STORE_ALIGNMENT as u32;
            }
        }
        let staging = (!staged.is_empty()).then(|| {
            let bytes = staged.values().copied().max().unwrap_or(0);
            self.program.buffer(
                format!("{name}.staging"),
                ipu_device::MemoryClass::Standard,
                bytes,
                staged.keys().copied().collect(),
            )
        });
        let mut copies = Vec::with_capacity(held.len());
        let mut transfers = Transfers::default();
        for (&(content, holder, offset, readers), staged_at) in held.iter().zip(staging_of) {
            let place = Place::at(content.buffer, content.offset);
            let source = match (staging, staged_at) {
                (Some(staging), Some(at)) => Place::at(staging, at),
                _ => place,
            };
            copies.push(Run {
                tile: holder,
                kernel: self.program.kernel(KernelSpec::CopySlice {
                    bytes: content.bytes,
                    stride,
                    slices,
                }),
                args: vec![
                    Arg::Address(Place::at(store, offset as u32)),
                    Arg::Address(source),
                    Arg::Address(Place::at(counter, 0)),
                ],
            });
            for &tile in readers {
                if tile != holder {
                    transfers.add(holder, source, tile, place, content.bytes);
                }
            }
        }
        let provenance = format!("{}{name}.slice", self.prefix);
        self.push_compute(provenance.clone(), copies);
        let local = self.flush(transfers);
        if !local.is_empty() {
            self.push_compute(provenance, local);
        }
        Ok(())
    }

    /// The resident stack's binding, written at `initialize`: created with `pieces`, or
    /// extended by them when another op already reads the stack.
    fn resident_binding(
        &mut self,
        stream: &super::IteratedStream,
        (precision, scale_exp): (Precision, i32),
        resident: ResidentStack,
        pieces: Vec<HostPiece>,
    ) -> Result<(), LowerError> {
        let name = &stream.name;
        if let Some(binding) = self.program.bindings.iter_mut().find(|b| &b.name == name) {
            if binding.precision != precision || binding.scale_exp != scale_exp {
                return Err(unsupported(
                    "host stream",
                    format!(
                        "resident stack {name} is read as {precision:?} at scale {scale_exp} and in another encoding; one encoding per stack is lowered"
                    ),
                ));
            }
            // Read whole by another op too: one binding, written whole at initialize.
            binding.iterations = stream.iterations;
            binding.pieces.extend(pieces);
            return Ok(());
        }
        let data = match resident.data {
            None => Vec::new(),
            Some((data, element)) => super::encode_constant(
                data,
                element,
                (precision, scale_exp),
                &format!("constant stack {name}"),
            )?,
        };
        self.program.bindings.push(HostBinding {
            name: name.clone(),
            role: resident.role,
            precision,
            scale_exp,
            shape: stream.shape.clone(),
            iterations: stream.iterations,
            pieces,
            data,
        });
        let binding = self.program.bindings.len() - 1;
        self.program
            .initialize
            .push(TileStep::HostWrite { binding });
        Ok(())
    }

    /// The repeat's iteration counter, held by (at least) `tiles`.
    fn iteration_counter(&mut self, tiles: &[u32]) -> BufferId {
        let counter = match self.counter {
            Some(counter) => counter,
            None => {
                let name = format!("{}counter", self.prefix);
                let counter =
                    self.program
                        .buffer(name, ipu_device::MemoryClass::Standard, 4, Vec::new());
                self.counter = Some(counter);
                counter
            }
        };
        let held = &mut self.program.buffers[counter].tiles;
        held.extend_from_slice(tiles);
        held.sort_unstable();
        held.dedup();
        counter
    }

    /// The counter's runs: `(fill with zero, advance)` on every tile holding it.
    pub(super) fn counter_runs(&mut self, counter: BufferId) -> (Vec<Run>, Vec<Run>) {
        let tiles = self.program.buffers[counter].tiles.clone();
        let fill = self.program.kernel(KernelSpec::Fill {
            precision: Precision::F32,
            elements: 1,
        });
        let count = self.program.kernel(KernelSpec::Count);
        let fills = tiles
            .iter()
            .map(|&tile| Run {
                tile,
                kernel: fill,
                args: vec![Arg::Address(Place::at(counter, 0)), Arg::Value(0)],
            })
            .collect();
        let counts = tiles
            .iter()
            .map(|&tile| Run {
                tile,
                kernel: count,
                args: vec![Arg::Address(Place::at(counter, 0))],
            })
            .collect();
        (fills, counts)
    }
}
