//! Reading a tile module back into a [`TileDesign`], every id, tile, row layout and range
//! checked.

use std::collections::BTreeMap;

use ipu_device::{KernelSpec, MemoryClass, Target};
use ipu_runtime::package::BindingRole;
use melior::ir::{
    attribute::{ArrayAttribute, DenseI32ArrayAttribute, DenseI64ArrayAttribute, IntegerAttribute},
    block::BlockLike,
    operation::OperationLike,
    Attribute, OperationRef, RegionLike,
};

use super::super::place::SupportMemory;
use super::super::program::{
    Arg, Buffer, HostBinding, HostPiece, Move, Place, Run, TileProgram, TileStep,
};
use super::super::LowerError;
use super::write::{precision_from_name, role_from_name};
use super::*;

// ---------------------------------------------------------------------------------------
// Reading.

/// An error while reading a tile module: the op (with its location) and what is wrong.
fn bad(op: OperationRef, detail: impl std::fmt::Display) -> LowerError {
    LowerError::Input(format!(
        "{} at {}: {detail}",
        op.name().as_string_ref().as_str().unwrap_or("?"),
        op.location()
    ))
}

fn attribute<'c>(op: OperationRef<'c, '_>, name: &str) -> Result<Attribute<'c>, LowerError> {
    op.attribute(name)
        .map_err(|_| bad(op, format!("missing attribute '{name}'")))
}

fn get_int(op: OperationRef, name: &str) -> Result<i64, LowerError> {
    let value = attribute(op, name)?;
    IntegerAttribute::try_from(value)
        .map(|i| i.value())
        .map_err(|_| bad(op, format!("'{name}' is not an integer")))
}

fn get_u32(op: OperationRef, name: &str) -> Result<u32, LowerError> {
    let value = get_int(op, name)?;
    u32::try_from(value).map_err(|_| bad(op, format!("'{name}' = {value} is outside 0..2^32")))
}

fn get_str(op: OperationRef, name: &str) -> Result<String, LowerError> {
    let value = attribute(op, name)?;
    ipu_dialects::ipu::string_value(value)
        .ok_or_else(|| bad(op, format!("'{name}' is not a string")))
}

fn get_i64s(op: OperationRef, name: &str) -> Result<Vec<i64>, LowerError> {
    let value = attribute(op, name)?;
    if let Ok(array) = DenseI64ArrayAttribute::try_from(value) {
        return (0..array.len())
            .map(|i| array.element(i).map_err(|e| bad(op, e)))
            .collect();
    }
    if let Ok(array) = DenseI32ArrayAttribute::try_from(value) {
        return (0..array.len())
            .map(|i| array.element(i).map(i64::from).map_err(|e| bad(op, e)))
            .collect();
    }
    Err(bad(op, format!("'{name}' is not a dense integer array")))
}

/// Reads a value in `0..limit` from a table row.
fn index(op: OperationRef, what: &str, value: i64, limit: usize) -> Result<usize, LowerError> {
    usize::try_from(value)
        .ok()
        .filter(|&v| v < limit)
        .ok_or_else(|| bad(op, format!("{what} {value} is outside 0..{limit}")))
}

fn u32_of(op: OperationRef, what: &str, value: i64) -> Result<u32, LowerError> {
    u32::try_from(value).map_err(|_| bad(op, format!("{what} {value} is outside 0..2^32")))
}

struct Reader<'p> {
    tiles: u32,
    buffers: &'p [Buffer],
}

impl Reader<'_> {
    fn tile(&self, op: OperationRef, value: i64) -> Result<u32, LowerError> {
        index(op, "tile", value, self.tiles as usize).map(|t| t as u32)
    }

    /// A place: the buffer must exist and `bytes` from `offset` must lie inside it.
    fn place(
        &self,
        op: OperationRef,
        buffer: i64,
        offset: i64,
        bytes: u32,
    ) -> Result<Place, LowerError> {
        let id = index(op, "buffer", buffer, self.buffers.len())?;
        let offset = u32_of(op, "offset", offset)?;
        let size = self.buffers[id].bytes;
        if u64::from(offset) + u64::from(bytes) > u64::from(size) {
            return Err(bad(
                op,
                format!(
                    "{bytes} B at offset {offset} overrun buffer {id} ({}, {size} B)",
                    self.buffers[id].name
                ),
            ));
        }
        Ok(Place::at(id, offset))
    }

    fn on_tile(&self, op: OperationRef, place: Place, tile: u32) -> Result<(), LowerError> {
        let buffer = &self.buffers[place.buffer];
        if buffer.tiles.binary_search(&tile).is_err() {
            return Err(bad(
                op,
                format!(
                    "buffer {} ({}) is not on tile {tile}",
                    place.buffer, buffer.name
                ),
            ));
        }
        Ok(())
    }
}

/// The row of a host piece: (tile, buffer, offset, tensor offset, bytes), and (runs, stride)
/// for a strided piece.
pub(super) fn piece_row(p: &HostPiece) -> Vec<i64> {
    let mut row = vec![
        i64::from(p.tile),
        p.place.buffer as i64,
        i64::from(p.place.offset),
        p.tensor_offset as i64,
        i64::from(p.bytes),
    ];
    if p.runs != 1 {
        row.extend([i64::from(p.runs), p.stride as i64]);
    }
    row
}

/// The `pieces` rows of a stream: a dense array of rows of 5, or an array of one dense array
/// per piece (5 entries, or 7 for a strided piece).
pub(super) fn piece_rows(op: OperationRef) -> Result<Vec<Vec<i64>>, LowerError> {
    let value = attribute(op, "pieces")?;
    let Ok(list) = ArrayAttribute::try_from(value) else {
        let flat = get_i64s(op, "pieces")?;
        if flat.len() % 5 != 0 {
            return Err(bad(op, "pieces must be rows of 5"));
        }
        return Ok(flat.chunks(5).map(<[i64]>::to_vec).collect());
    };
    (0..list.len())
        .map(|index| {
            let row = list
                .element(index)
                .ok()
                .and_then(|row| DenseI64ArrayAttribute::try_from(row).ok())
                .ok_or_else(|| bad(op, format!("piece {index} is not a dense i64 array")))?;
            let row: Vec<i64> = (0..row.len())
                .map(|i| row.element(i).map_err(|e| bad(op, e)))
                .collect::<Result<_, _>>()?;
            if row.len() != 5 && row.len() != 7 {
                return Err(bad(
                    op,
                    format!(
                        "piece {index} has {} entries: expected 5 (tile, buffer, offset, tensor offset, bytes) or 7 (and runs, stride)",
                        row.len()
                    ),
                ));
            }
            Ok(row)
        })
        .collect()
}

/// Reads piece `index` of a stream from its row: the place must hold `bytes` on the tile,
/// the runs must split `bytes` evenly and the last run (so every run) must lie inside the
/// tensor.
fn read_piece(
    op: OperationRef,
    reader: &Reader,
    index: usize,
    row: &[i64],
    tensor_bytes: u64,
) -> Result<HostPiece, LowerError> {
    let tile = reader.tile(op, row[0])?;
    let bytes = u32_of(op, "bytes", row[4])?;
    let place = reader.place(op, row[1], row[2], bytes)?;
    reader.on_tile(op, place, tile)?;
    let tensor_offset = u64::try_from(row[3]).map_err(|_| {
        bad(
            op,
            format!("piece {index}: tensor offset {} is negative", row[3]),
        )
    })?;
    let (runs, stride) = match *row {
        [.., runs, stride] if row.len() == 7 => (
            u32_of(op, "runs", runs)?,
            u64::try_from(stride)
                .map_err(|_| bad(op, format!("piece {index}: stride {stride} is negative")))?,
        ),
        _ => (1, 0),
    };
    if runs == 0 || !bytes.is_multiple_of(runs) {
        return Err(bad(
            op,
            format!("piece {index}: {bytes} B do not split into {runs} equal runs"),
        ));
    }
    if runs == 1 && stride != 0 {
        return Err(bad(
            op,
            format!("piece {index}: one run with stride {stride} (a one-run piece has stride 0)"),
        ));
    }
    let last = runs - 1;
    let start = u64::from(last)
        .checked_mul(stride)
        .and_then(|s| s.checked_add(tensor_offset));
    let end = start.and_then(|s| s.checked_add(u64::from(bytes / runs)));
    if end.is_none_or(|end| end > tensor_bytes) {
        let detail = if runs == 1 {
            format!("piece at tensor offset {tensor_offset} overruns the {tensor_bytes} B tensor")
        } else {
            let start = start.map_or("past 2^64".to_string(), |s| s.to_string());
            format!(
                "piece {index} run {last} at tensor offset {start} overruns the {tensor_bytes} B tensor"
            )
        };
        return Err(bad(op, detail));
    }
    Ok(HostPiece {
        tile,
        place,
        tensor_offset,
        bytes,
        runs,
        stride,
    })
}

/// Reads the tile module `module` (see the module docs), checking it against `target`.
pub fn read_design(module: OperationRef, target: &Target) -> Result<TileDesign, LowerError> {
    let tiles = get_u32(module, TILES_ATTRIBUTE)?;
    if tiles == 0 || tiles > target.geometry.tiles.value {
        return Err(bad(
            module,
            format!(
                "{TILES_ATTRIBUTE} = {tiles} is outside 1..={} of target {}",
                target.geometry.tiles.value, target.name
            ),
        ));
    }
    let function = get_str(module, FUNCTION_ATTRIBUTE)?;
    let target_name = get_str(module, TARGET_ATTRIBUTE).unwrap_or_else(|_| target.name.clone());
    let mut program = TileProgram {
        name: function.clone(),
        tiles,
        ..TileProgram::default()
    };
    let mut design_support = None;
    let mut schedules = BTreeMap::new();
    let mut code = None;
    let mut ops = Vec::new();
    if let Some(block) = module.region(0).ok().and_then(|r| r.first_block()) {
        let mut next = block.first_operation();
        while let Some(op) = next {
            ops.push(op);
            next = op.next_in_block();
        }
    }
    // Declarations first (buffers before the steps that name them).
    for &op in &ops {
        let name = op.name().as_string_ref().as_str().unwrap_or("").to_string();
        match name.as_str() {
            "ipu_tile.op" => program.ops.push((
                get_str(op, "provenance")?,
                get_str(op, "op")?,
                get_int(op, "estimate")?.max(0) as u64,
            )),
            "ipu_tile.kernel" => {
                let index = get_int(op, "index")?;
                if index != program.kernels.len() as i64 {
                    return Err(bad(
                        op,
                        format!("kernel index {index}, expected {}", program.kernels.len()),
                    ));
                }
                let spec: KernelSpec = serde_json::from_str(&get_str(op, "spec")?)
                    .map_err(|e| bad(op, format!("kernel spec: {e}")))?;
                program.kernels.push(spec);
            }
            "ipu_tile.buffer" => {
                let buffer = read_buffer(op, program.buffers.len(), tiles, target)?;
                program.buffers.push(buffer);
            }
            "ipu_tile.code" => {
                code = Some(EmittedCode {
                    tiles: get_i64s(op, "tiles")?
                        .into_iter()
                        .map(|t| index(op, "tile", t, tiles as usize).map(|t| t as u32))
                        .collect::<Result<_, _>>()?,
                    final_cycles: get_int(op, "final_cycles")?.max(0) as u64,
                    final_exchange: get_int(op, "final_exchange")?.max(0) as u64,
                });
            }
            "ipu_tile.support" => design_support = Some(read_support(op)?),
            "ipu_tile.stream"
            | "ipu_tile.host_write"
            | "ipu_tile.host_read"
            | "ipu_tile.compute"
            | "ipu_tile.exchange"
            | "ipu_tile.sync"
            | "ipu_tile.repeat" => {}
            other => return Err(bad(op, format!("unexpected op '{other}' in a tile module"))),
        }
    }
    let reader = Reader {
        tiles,
        buffers: &program.buffers,
    };
    let mut bindings = Vec::new();
    for &op in &ops {
        if op.name().as_string_ref().as_str() != Ok("ipu_tile.stream") {
            continue;
        }
        bindings.push(read_stream(op, &reader)?);
    }
    let mut initialize = Vec::new();
    let mut run = Vec::new();
    for &op in &ops {
        let name = op.name().as_string_ref().as_str().unwrap_or("").to_string();
        let step = match name.as_str() {
            "ipu_tile.host_write" | "ipu_tile.host_read" => {
                let stream = get_str(op, "stream")?;
                let binding = bindings
                    .iter()
                    .position(|b| b.name == stream)
                    .ok_or_else(|| bad(op, format!("no stream '{stream}'")))?;
                if name == "ipu_tile.host_write" {
                    TileStep::HostWrite { binding }
                } else {
                    TileStep::HostRead { binding }
                }
            }
            "ipu_tile.compute" => read_compute(op, &reader, program.kernels.len())?,
            "ipu_tile.exchange" => {
                let (step, schedule) = read_exchange(op, &reader)?;
                if let (TileStep::Exchange { phase, .. }, Some(schedule)) = (&step, schedule) {
                    schedules.insert(*phase, schedule);
                }
                step
            }
            "ipu_tile.sync" => TileStep::Sync,
            "ipu_tile.repeat" => TileStep::Repeat {
                count: get_u32(op, "count")?,
                steps: get_u32(op, "steps")? as usize,
            },
            _ => continue,
        };
        match get_str(op, "program")?.as_str() {
            "initialize" => initialize.push(step),
            "run" => run.push(step),
            other => {
                return Err(bad(
                    op,
                    format!("program '{other}': expected initialize or run"),
                ))
            }
        }
    }
    for (name, steps) in [("initialize", &initialize), ("run", &run)] {
        TileProgram::check_repeats(steps)
            .map_err(|detail| LowerError::Input(format!("ipu_tile program '{name}': {detail}")))?;
    }
    program.bindings = bindings;
    program.initialize = initialize;
    program.run = run;
    Ok(TileDesign {
        program,
        function,
        target: target_name,
        support: design_support,
        schedules,
        code,
    })
}

/// An `ipu_tile.buffer` op: the next buffer (`id` must be `expected`), on tiles below
/// `tiles`, at an address inside `target`'s tile memory when placed.
fn read_buffer(
    op: OperationRef,
    expected: usize,
    tiles: u32,
    target: &Target,
) -> Result<Buffer, LowerError> {
    let id = get_int(op, "id")?;
    if id != expected as i64 {
        return Err(bad(op, format!("buffer id {id}, expected {expected}")));
    }
    let class = match get_str(op, "class")?.as_str() {
        "standard" => MemoryClass::Standard,
        "interleaved" => MemoryClass::Interleaved,
        other => {
            return Err(bad(
                op,
                format!("class '{other}': expected standard or interleaved"),
            ))
        }
    };
    let bytes = get_u32(op, "bytes")?;
    let mut buffer_tiles = Vec::new();
    for t in get_i64s(op, "tiles")? {
        let tile = index(op, "tile", t, tiles as usize)? as u32;
        if buffer_tiles.last().is_some_and(|&last| last >= tile) {
            return Err(bad(op, "tiles must be strictly ascending"));
        }
        buffer_tiles.push(tile);
    }
    let live = get_i64s(op, "live")?;
    let [first, last] = live[..] else {
        return Err(bad(op, "live must be array<i64: first, last>"));
    };
    if first < 0 || last < first {
        return Err(bad(op, format!("live range [{first}, {last}] is empty")));
    }
    let address = if op.has_attribute("address") {
        let address = get_u32(op, "address")?;
        let end = u64::from(address) + u64::from(bytes);
        let lowest = target.memory.sram_base.value;
        let highest = u64::from(target.sram_end());
        if address < lowest || end > highest {
            return Err(bad(
                op,
                format!(
                    "address range {address:#x}..{end:#x} is outside tile SRAM \
                     {lowest:#x}..{highest:#x}"
                ),
            ));
        }
        Some(address)
    } else {
        None
    };
    Ok(Buffer {
        name: get_str(op, "name")?,
        class,
        bytes,
        tiles: buffer_tiles,
        live: (first as usize, last as usize),
        address,
    })
}

/// An `ipu_tile.support` op: the package's support memory and the ranges left for buffers.
fn read_support(op: OperationRef) -> Result<SupportMemory, LowerError> {
    let ranges = |name: &str| -> Result<Vec<(u32, u32)>, LowerError> {
        let values = get_i64s(op, name)?;
        if values.len() % 2 != 0 {
            return Err(bad(op, format!("'{name}' must hold (start, end) pairs")));
        }
        values
            .chunks(2)
            .map(|pair| {
                let (s, e) = (u32_of(op, name, pair[0])?, u32_of(op, name, pair[1])?);
                if s > e {
                    return Err(bad(op, format!("'{name}' range {s}..{e} is reversed")));
                }
                Ok((s, e))
            })
            .collect()
    };
    Ok(SupportMemory {
        linked_end: get_u32(op, "linked_end")?,
        profile_bytes: get_u32(op, "profile_bytes")?,
        exchange_table_bytes: get_u32(op, "exchange_table_bytes")?,
        host_code_bytes: get_u32(op, "host_code_bytes")?,
        generated_code_bytes: get_u32(op, "generated_code_bytes")?,
        code_address: get_u32(op, "code_address")?,
        standard_ranges: ranges("standard_ranges")?,
        interleaved_ranges: ranges("interleaved_ranges")?,
    })
}

/// An `ipu_tile.stream` op: a host binding and its pieces, checked against the buffers.
fn read_stream(op: OperationRef, reader: &Reader) -> Result<HostBinding, LowerError> {
    let role_name = get_str(op, "role")?;
    let role = role_from_name(&role_name).ok_or_else(|| {
        bad(
            op,
            format!("role '{role_name}': expected input, weight or output"),
        )
    })?;
    let precision_name = get_str(op, "precision")?;
    let precision = precision_from_name(&precision_name)
        .ok_or_else(|| bad(op, format!("unknown precision '{precision_name}'")))?;
    let shape: Vec<u64> = get_i64s(op, "shape")?
        .into_iter()
        .map(|d| u64::try_from(d).map_err(|_| bad(op, format!("negative dimension {d}"))))
        .collect::<Result<_, _>>()?;
    let tensor_bytes = shape
        .iter()
        .try_fold(u64::from(precision.bytes()), |a, &d| a.checked_mul(d))
        .ok_or_else(|| bad(op, "tensor size overflows"))?;
    let scale_exp = match op.attribute("scale_exp") {
        Err(_) => 0,
        Ok(_) => {
            let scale = get_int(op, "scale_exp")?;
            if !precision.is_fp8() || !(-31..=31).contains(&scale) {
                return Err(bad(
                    op,
                    format!("'scale_exp' = {scale}: only an FP8 stream has a scale, in -31..=31"),
                ));
            }
            scale as i32
        }
    };
    let rows = piece_rows(op)?;
    let mut pieces = Vec::with_capacity(rows.len());
    for (index, row) in rows.iter().enumerate() {
        pieces.push(read_piece(op, reader, index, row, tensor_bytes)?);
    }
    let data = if role == BindingRole::Weight {
        let value = attribute(op, "value")?;
        attribute_bytes(
            value,
            tensor_bytes / u64::from(precision.bytes()),
            precision.bytes(),
        )
        .filter(|d| d.len() as u64 == tensor_bytes)
        .ok_or_else(|| bad(op, "'value' is not dense data of the stream's shape"))?
    } else {
        Vec::new()
    };
    Ok(HostBinding {
        name: get_str(op, "name")?,
        role,
        precision,
        scale_exp,
        shape,
        pieces,
        data,
    })
}

/// An `ipu_tile.compute` op: its runs, each on a tile with a known kernel and its arguments'
/// places on that tile.
fn read_compute(op: OperationRef, reader: &Reader, kernels: usize) -> Result<TileStep, LowerError> {
    let rows = get_i64s(op, "runs")?;
    let mut runs = Vec::new();
    let mut at = 0;
    while at < rows.len() {
        if at + 3 > rows.len() {
            return Err(bad(op, "truncated run record"));
        }
        let tile = reader.tile(op, rows[at])?;
        let kernel = index(op, "kernel", rows[at + 1], kernels)? as u32;
        let count = index(op, "argument count", rows[at + 2], 64)?;
        at += 3;
        if at + 2 * count > rows.len() {
            return Err(bad(op, "truncated run arguments"));
        }
        let mut args = Vec::with_capacity(count);
        for pair in rows[at..at + 2 * count].chunks(2) {
            if pair[0] == -1 {
                args.push(Arg::Value(u32_of(op, "value", pair[1])?));
            } else {
                let place = reader.place(op, pair[0], pair[1], 0)?;
                reader.on_tile(op, place, tile)?;
                args.push(Arg::Address(place));
            }
        }
        at += 2 * count;
        runs.push(Run { tile, kernel, args });
    }
    Ok(TileStep::Compute {
        provenance: get_str(op, "provenance")?,
        runs,
    })
}

/// An `ipu_tile.exchange` op: its phase's moves (sources and destinations on their tiles)
/// and the phase's stored schedule, if it has one.
fn read_exchange(
    op: OperationRef,
    reader: &Reader,
) -> Result<(TileStep, Option<StoredSchedule>), LowerError> {
    let tiles = reader.tiles;
    let mut schedule = None;
    let phase = get_u32(op, "phase")?;
    let rows = get_i64s(op, "moves")?;
    let mut moves = Vec::new();
    let mut at = 0;
    while at < rows.len() {
        if at + 7 > rows.len() {
            return Err(bad(op, "truncated move record"));
        }
        let r = &rows[at..at + 7];
        let source_tile = reader.tile(op, r[0])?;
        let bytes = u32_of(op, "bytes", r[5])?;
        let source = reader.place(op, r[1], r[2], bytes)?;
        reader.on_tile(op, source, source_tile)?;
        let destination = reader.place(op, r[3], r[4], bytes)?;
        let count = index(op, "destination count", r[6], tiles as usize + 1)?;
        at += 7;
        if at + count > rows.len() {
            return Err(bad(op, "truncated destination list"));
        }
        let mut destinations = Vec::with_capacity(count);
        for &d in &rows[at..at + count] {
            let tile = reader.tile(op, d)?;
            reader.on_tile(op, destination, tile)?;
            destinations.push(tile);
        }
        at += count;
        moves.push(Move {
            source_tile,
            source,
            destinations,
            destination,
            bytes,
        });
    }
    if op.has_attribute("schedule") {
        let values = get_i64s(op, "schedule")?;
        if values.len() % 4 != 0 {
            return Err(bad(op, "schedule must be rows of 4"));
        }
        let pieces = values
            .chunks(4)
            .map(|r| {
                let row = [r[0], r[1], r[2], r[3]].map(|v| v.max(0) as u64);
                if row[0] as usize >= moves.len() || r.iter().any(|&v| v < 0) {
                    return Err(bad(op, format!("schedule row {r:?} is invalid")));
                }
                Ok(row)
            })
            .collect::<Result<_, _>>()?;
        schedule = Some(StoredSchedule {
            key: get_int(op, "schedule_key")? as u64,
            pieces,
            cycles: get_int(op, "cycles")?.max(0) as u64,
        });
    }
    Ok((TileStep::Exchange { phase, moves }, schedule))
}
