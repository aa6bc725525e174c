//! Reading a tile module back into a [`TileDesign`], every id, tile, row layout and range
//! checked.

use std::collections::BTreeMap;

use ipu_device::{KernelSpec, MemoryClass, Target};
use ipu_dialects::tile::{
    self, AttributeError, BufferOp, ComputeOp, ExchangeOp, StreamOp, SupportOp, TileOp,
};
use ipu_runtime::package::BindingRole;
use melior::ir::{
    attribute::{ArrayAttribute, DenseI64ArrayAttribute},
    block::BlockLike,
    operation::OperationLike,
    OperationRef, RegionLike,
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
    AttributeError::at(op, detail).into()
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
/// for a strided piece, and (runs, stride, pad) for a padded one.
pub(super) fn piece_row(p: &HostPiece) -> Vec<i64> {
    let mut row = vec![
        i64::from(p.tile),
        p.place.buffer as i64,
        i64::from(p.place.offset),
        p.tensor_offset as i64,
        i64::from(p.bytes),
    ];
    if p.runs != 1 || p.pad != 0 {
        row.extend([i64::from(p.runs), p.stride as i64]);
    }
    if p.pad != 0 {
        row.push(i64::from(p.pad));
    }
    row
}

/// The `pieces` rows of a stream: a dense array of rows of 5, or an array of one dense array
/// per piece (5 entries, 7 for a strided piece, 8 for a padded one).
pub(super) fn piece_rows(stream: StreamOp) -> Result<Vec<Vec<i64>>, LowerError> {
    let op = stream.operation();
    let value = stream.pieces()?;
    let Ok(list) = ArrayAttribute::try_from(value) else {
        let flat = tile::integers(op, "pieces")?;
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
            if ![5, 7, 8].contains(&row.len()) {
                return Err(bad(
                    op,
                    format!(
                        "piece {index} has {} entries: expected 5 (tile, buffer, offset, tensor offset, bytes), 7 (and runs, stride) or 8 (and pad)",
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
    let pad = match *row {
        [.., pad] if row.len() == 8 => u32_of(op, "pad", pad)?,
        _ => 0,
    };
    let (runs, stride) = match row[..row.len().min(7)] {
        [.., runs, stride] if row.len() >= 7 => (
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
    if pad > bytes / runs {
        return Err(bad(
            op,
            format!(
                "piece {index}: {pad} B of padding in runs of {} B",
                bytes / runs
            ),
        ));
    }
    let last = runs - 1;
    let start = u64::from(last)
        .checked_mul(stride)
        .and_then(|s| s.checked_add(tensor_offset));
    let end = start.and_then(|s| s.checked_add(u64::from(bytes / runs - pad)));
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
        pad,
    })
}

/// Reads the tile module `module` (see the module docs), checking it against `target`.
pub fn read_design(module: OperationRef, target: &Target) -> Result<TileDesign, LowerError> {
    let tiles = tile::unsigned(module, TILES_ATTRIBUTE)?;
    if tiles == 0 || tiles > target.geometry.tiles.value {
        return Err(bad(
            module,
            format!(
                "{TILES_ATTRIBUTE} = {tiles} is outside 1..={} of target {}",
                target.geometry.tiles.value, target.name
            ),
        ));
    }
    let function = tile::string(module, FUNCTION_ATTRIBUTE)?;
    let target_name =
        tile::string(module, TARGET_ATTRIBUTE).unwrap_or_else(|_| target.name.clone());
    let mut program = TileProgram {
        name: function.clone(),
        tiles,
        ..TileProgram::default()
    };
    let mut ops = Vec::new();
    if let Some(block) = module.region(0).ok().and_then(|r| r.first_block()) {
        let mut next = block.first_operation();
        while let Some(op) = next {
            let view = TileOp::of(op).ok_or_else(|| {
                bad(
                    op,
                    format!(
                        "unexpected op '{}' in a tile module",
                        op.name().as_string_ref().as_str().unwrap_or("")
                    ),
                )
            })?;
            ops.push(view);
            next = op.next_in_block();
        }
    }
    let Declarations { support, code } = read_declarations(&ops, &mut program, target)?;
    let reader = Reader {
        tiles,
        buffers: &program.buffers,
    };
    let mut bindings = Vec::new();
    for op in &ops {
        if let TileOp::StreamOp(stream) = op {
            bindings.push(read_stream(*stream, &reader)?);
        }
    }
    let (steps, schedules) = read_steps(&ops, &reader, &bindings, program.kernels.len())?;
    program.bindings = bindings;
    program.initialize = steps.initialize;
    program.run = steps.run;
    Ok(TileDesign {
        program,
        function,
        target: target_name,
        support,
        schedules,
        code,
    })
}

/// What a tile module declares besides buffers and kernels (which go into the program).
struct Declarations {
    support: Option<SupportMemory>,
    code: Option<EmittedCode>,
}

/// The declarations of a tile module, read first (buffers before the steps that name them):
/// the profiled ops, kernels and buffers into `program`, support memory and emitted code.
fn read_declarations(
    ops: &[TileOp],
    program: &mut TileProgram,
    target: &Target,
) -> Result<Declarations, LowerError> {
    let tiles = program.tiles;
    let mut declarations = Declarations {
        support: None,
        code: None,
    };
    for op in ops {
        match *op {
            TileOp::ProfiledOp(profiled) => program.ops.push((
                profiled.provenance()?,
                profiled.op()?,
                profiled.estimate()?.max(0) as u64,
            )),
            TileOp::KernelOp(kernel) => {
                let index = kernel.index()?;
                if index != program.kernels.len() as i64 {
                    return Err(bad(
                        kernel.operation(),
                        format!("kernel index {index}, expected {}", program.kernels.len()),
                    ));
                }
                let spec: KernelSpec = serde_json::from_str(&kernel.spec()?)
                    .map_err(|e| bad(kernel.operation(), format!("kernel spec: {e}")))?;
                program.kernels.push(spec);
            }
            TileOp::BufferOp(buffer) => {
                let buffer = read_buffer(buffer, program.buffers.len(), tiles, target)?;
                program.buffers.push(buffer);
            }
            TileOp::CodeOp(code) => {
                let op = code.operation();
                declarations.code = Some(EmittedCode {
                    tiles: code
                        .tiles()?
                        .into_iter()
                        .map(|t| index(op, "tile", t, tiles as usize).map(|t| t as u32))
                        .collect::<Result<_, _>>()?,
                    final_cycles: code.final_cycles()?.max(0) as u64,
                    final_exchange: code.final_exchange()?.max(0) as u64,
                });
            }
            TileOp::SupportOp(support) => declarations.support = Some(read_support(support)?),
            TileOp::StreamOp(_)
            | TileOp::HostWriteOp(_)
            | TileOp::HostReadOp(_)
            | TileOp::ComputeOp(_)
            | TileOp::ExchangeOp(_)
            | TileOp::SyncOp(_)
            | TileOp::RepeatOp(_) => {}
        }
    }
    Ok(declarations)
}

/// The steps of the two programs, in block order.
struct Programs {
    initialize: Vec<TileStep>,
    run: Vec<TileStep>,
}

/// The step ops of a tile module as the steps of its programs (host transfers naming
/// `bindings`), with the stored schedules of its exchange phases; each program's repeats must
/// nest.
fn read_steps(
    ops: &[TileOp],
    reader: &Reader,
    bindings: &[HostBinding],
    kernels: usize,
) -> Result<(Programs, BTreeMap<u32, StoredSchedule>), LowerError> {
    let mut schedules = BTreeMap::new();
    let mut programs = Programs {
        initialize: Vec::new(),
        run: Vec::new(),
    };
    for view in ops {
        let op = view.operation();
        let binding = |stream: String| {
            bindings
                .iter()
                .position(|b| b.name == stream)
                .ok_or_else(|| bad(op, format!("no stream '{stream}'")))
        };
        let (step, program) = match *view {
            TileOp::HostWriteOp(write) => (
                TileStep::HostWrite {
                    binding: binding(write.stream()?)?,
                },
                write.program()?,
            ),
            TileOp::HostReadOp(read) => (
                TileStep::HostRead {
                    binding: binding(read.stream()?)?,
                },
                read.program()?,
            ),
            TileOp::ComputeOp(compute) => {
                (read_compute(compute, reader, kernels)?, compute.program()?)
            }
            TileOp::ExchangeOp(exchange) => {
                let (step, schedule) = read_exchange(exchange, reader)?;
                if let (TileStep::Exchange { phase, .. }, Some(schedule)) = (&step, schedule) {
                    schedules.insert(*phase, schedule);
                }
                (step, exchange.program()?)
            }
            TileOp::SyncOp(sync) => (TileStep::Sync, sync.program()?),
            TileOp::RepeatOp(repeat) => (
                TileStep::Repeat {
                    count: repeat.count()?,
                    steps: repeat.steps()? as usize,
                },
                repeat.program()?,
            ),
            _ => continue,
        };
        match program.as_str() {
            "initialize" => programs.initialize.push(step),
            "run" => programs.run.push(step),
            other => {
                return Err(bad(
                    op,
                    format!("program '{other}': expected initialize or run"),
                ))
            }
        }
    }
    for (name, steps) in [("initialize", &programs.initialize), ("run", &programs.run)] {
        TileProgram::check_repeats(steps)
            .map_err(|detail| LowerError::Input(format!("ipu_tile program '{name}': {detail}")))?;
    }
    Ok((programs, schedules))
}

/// An `ipu_tile.buffer` op: the next buffer (`id` must be `expected`), on tiles below
/// `tiles`, at an address inside `target`'s tile memory when placed.
fn read_buffer(
    buffer: BufferOp,
    expected: usize,
    tiles: u32,
    target: &Target,
) -> Result<Buffer, LowerError> {
    let op = buffer.operation();
    let id = buffer.id()?;
    if id != expected as i64 {
        return Err(bad(op, format!("buffer id {id}, expected {expected}")));
    }
    let class = match buffer.class()?.as_str() {
        "standard" => MemoryClass::Standard,
        "interleaved" => MemoryClass::Interleaved,
        other => {
            return Err(bad(
                op,
                format!("class '{other}': expected standard or interleaved"),
            ))
        }
    };
    let bytes = buffer.bytes()?;
    let mut buffer_tiles = Vec::new();
    for t in buffer.tiles()? {
        let tile = index(op, "tile", t, tiles as usize)? as u32;
        if buffer_tiles.last().is_some_and(|&last| last >= tile) {
            return Err(bad(op, "tiles must be strictly ascending"));
        }
        buffer_tiles.push(tile);
    }
    let live = buffer.live()?;
    let [first, last] = live[..] else {
        return Err(bad(op, "live must be array<i64: first, last>"));
    };
    if first < 0 || last < first {
        return Err(bad(op, format!("live range [{first}, {last}] is empty")));
    }
    let address = if buffer.is_placed() {
        let address = buffer.address()?;
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
        name: buffer.name()?,
        class,
        bytes,
        tiles: buffer_tiles,
        live: (first as usize, last as usize),
        address,
    })
}

/// An `ipu_tile.support` op: the package's support memory and the ranges left for buffers.
fn read_support(support: SupportOp) -> Result<SupportMemory, LowerError> {
    let op = support.operation();
    let ranges = |name: &str, values: Vec<i64>| -> Result<Vec<(u32, u32)>, LowerError> {
        if !values.len().is_multiple_of(2) {
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
        linked_end: support.linked_end()?,
        profile_bytes: support.profile_bytes()?,
        exchange_table_bytes: support.exchange_table_bytes()?,
        host_code_bytes: support.host_code_bytes()?,
        generated_code_bytes: support.generated_code_bytes()?,
        code_address: support.code_address()?,
        standard_ranges: ranges("standard_ranges", support.standard_ranges()?)?,
        interleaved_ranges: ranges("interleaved_ranges", support.interleaved_ranges()?)?,
    })
}

/// An `ipu_tile.stream` op: a host binding and its pieces, checked against the buffers.
fn read_stream(stream: StreamOp, reader: &Reader) -> Result<HostBinding, LowerError> {
    let op = stream.operation();
    let role_name = stream.role()?;
    let role = role_from_name(&role_name).ok_or_else(|| {
        bad(
            op,
            format!("role '{role_name}': expected input, weight, parameter or output"),
        )
    })?;
    let precision_name = stream.precision()?;
    let precision = precision_from_name(&precision_name)
        .ok_or_else(|| bad(op, format!("unknown precision '{precision_name}'")))?;
    let shape: Vec<u64> = stream
        .shape()?
        .into_iter()
        .map(|d| u64::try_from(d).map_err(|_| bad(op, format!("negative dimension {d}"))))
        .collect::<Result<_, _>>()?;
    let tensor_bytes = shape
        .iter()
        .try_fold(u64::from(precision.bytes()), |a, &d| a.checked_mul(d))
        .ok_or_else(|| bad(op, "tensor size overflows"))?;
    let scale_exp = match stream.has_scale_exp() {
        false => 0,
        true => {
            let scale = stream.scale_exp()?;
            if !precision.is_fp8() || !(-31..=31).contains(&scale) {
                return Err(bad(
                    op,
                    format!("'scale_exp' = {scale}: only an FP8 stream has a scale, in -31..=31"),
                ));
            }
            scale as i32
        }
    };
    // A stack's slices: an input streamed one slice per write (the pieces place one slice),
    // or a parameter or weight resident whole (the pieces place every slice).
    let iterations = match stream.has_iterations() {
        false => 1,
        true => {
            let iterations = stream.iterations()?;
            let slices = u32::try_from(iterations).ok().filter(|&n| {
                n >= 1 && shape.first() == Some(&u64::from(n)) && role != BindingRole::Output
            });
            slices.ok_or_else(|| {
                bad(
                    op,
                    format!("'iterations' = {iterations}: a stack's slices, its leading axis ({shape:?}), of an input, parameter or weight"),
                )
            })?
        }
    };
    let per_write = if role == BindingRole::Input {
        iterations
    } else {
        1
    };
    let slice_bytes = tensor_bytes / u64::from(per_write);
    let rows = piece_rows(stream)?;
    let mut pieces = Vec::with_capacity(rows.len());
    for (index, row) in rows.iter().enumerate() {
        pieces.push(read_piece(op, reader, index, row, slice_bytes)?);
    }
    let data = if role == BindingRole::Weight {
        let value = stream.value()?;
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
        name: stream.name()?,
        role,
        precision,
        scale_exp,
        shape,
        iterations,
        pieces,
        data,
    })
}

/// An `ipu_tile.compute` op: its runs, each on a tile with a known kernel and its arguments'
/// places on that tile.
fn read_compute(
    compute: ComputeOp,
    reader: &Reader,
    kernels: usize,
) -> Result<TileStep, LowerError> {
    let op = compute.operation();
    let rows = compute.runs()?;
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
        provenance: compute.provenance()?,
        runs,
    })
}

/// An `ipu_tile.exchange` op: its phase's moves (sources and destinations on their tiles)
/// and the phase's stored schedule, if it has one.
fn read_exchange(
    exchange: ExchangeOp,
    reader: &Reader,
) -> Result<(TileStep, Option<StoredSchedule>), LowerError> {
    let op = exchange.operation();
    let tiles = reader.tiles;
    let mut schedule = None;
    let phase = exchange.phase()?;
    let rows = exchange.moves()?;
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
    if exchange.is_scheduled() {
        let values = exchange.schedule()?;
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
            key: exchange.schedule_key()? as u64,
            pieces,
            cycles: exchange.cycles()?.max(0) as u64,
        });
    }
    Ok((TileStep::Exchange { phase, moves }, schedule))
}
