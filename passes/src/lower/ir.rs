//! The `ipu_tile` dialect (dialects/irdl/ipu_tile.irdl.mlir) as Rust views: a [`TileDesign`]
//! (a [`TileProgram`] plus what the later passes add: support memory, exchange schedules,
//! emitted code) is written as a nested `builtin.module` of `ipu_tile` ops and read back,
//! with every id, tile number, row layout and address range checked on read.
//!
//! ```mlir
//! module @gemm.tiles attributes {ipu_tile.function = "gemm", ipu_tile.tiles = 1472 : i64} {
//!   "ipu_tile.buffer"() {id = 0 : i64, name = "op0.a", class = "standard", bytes = 8192 : i64,
//!                        tiles = array<i32: 0, 1>, live = array<i64: 0, 3>} : () -> ()
//!   "ipu_tile.compute"() {program = "run", provenance = "op0",
//!                         runs = array<i64: 0, 0, 1, 0, 0>} : () -> ()
//! }
//! ```

use std::collections::BTreeMap;

use ipu_device::{KernelSpec, MemoryClass, Precision, Target};
use ipu_runtime::package::BindingRole;
use melior::{
    ir::{
        attribute::AttributeLike,
        attribute::{
            ArrayAttribute, DenseI32ArrayAttribute, DenseI64ArrayAttribute, IntegerAttribute,
            StringAttribute,
        },
        block::BlockLike,
        operation::{OperationBuilder, OperationLike},
        r#type::{IntegerType, TypeLike},
        Attribute, Block, Identifier, Location, Operation, OperationRef, Region, RegionLike, Type,
    },
    Context,
};

use super::place::SupportMemory;
use super::program::{
    Arg, Buffer, HostBinding, HostPiece, Move, Place, Run, TileProgram, TileStep,
};
use super::LowerError;

/// Marks a nested module as a tile program and gives the device's tile count.
pub const TILES_ATTRIBUTE: &str = "ipu_tile.tiles";
/// The graph function a tile program implements.
pub const FUNCTION_ATTRIBUTE: &str = "ipu_tile.function";
/// The target table the program was lowered for.
pub const TARGET_ATTRIBUTE: &str = "ipu_tile.target";

/// An exchange phase's stored schedule (`ipu-lower-exchanges`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSchedule {
    /// Hash of what the schedule depends on (the moves' tiles and sizes, not addresses).
    pub key: u64,
    /// Rows (move, byte offset, bytes, cycle slot).
    pub pieces: Vec<[u64; 4]>,
    /// Scheduled cycles of the phase (fixed cost plus horizon).
    pub cycles: u64,
}

impl StoredSchedule {
    /// The rows of a scheduler result, under `key`.
    pub fn new(key: u64, schedule: &crate::exchange::PhaseSchedule) -> StoredSchedule {
        StoredSchedule {
            key,
            pieces: schedule
                .pieces
                .iter()
                .map(|p| [p.transfer as u64, p.offset, p.bytes, p.start])
                .collect(),
            cycles: schedule.cycles,
        }
    }
}

/// What `ipu-emit-tile-code` records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmittedCode {
    pub tiles: Vec<u32>,
    pub final_cycles: u64,
    pub final_exchange: u64,
}

/// A tile program and what the lowering stages added to it.
#[derive(Debug, Clone, PartialEq)]
pub struct TileDesign {
    pub program: TileProgram,
    /// The graph function it implements.
    pub function: String,
    /// The target table's name.
    pub target: String,
    pub support: Option<SupportMemory>,
    /// Stored schedules by phase id.
    pub schedules: BTreeMap<u32, StoredSchedule>,
    pub code: Option<EmittedCode>,
}

impl TileDesign {
    pub fn new(program: TileProgram, function: &str, target: &Target) -> TileDesign {
        TileDesign {
            program,
            function: function.to_string(),
            target: target.name.clone(),
            support: None,
            schedules: BTreeMap::new(),
            code: None,
        }
    }
}

/// The key a phase's schedule depends on: every move's source tile, destinations and size.
pub fn schedule_key(moves: &[Move]) -> u64 {
    use std::hash::{Hash, Hasher};
    // FNV-1a over a fixed encoding: stable across runs and builds (std's SipHash keys are
    // fixed too, but FNV keeps the value independent of the standard library's choice).
    let mut hasher = Fnv(0xcbf2_9ce4_8422_2325);
    for m in moves {
        m.source_tile.hash(&mut hasher);
        m.destinations.hash(&mut hasher);
        m.bytes.hash(&mut hasher);
    }
    hasher.finish()
}

struct Fnv(u64);

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Finding and replacing tile modules.

/// The tile modules directly inside `module` (nested `builtin.module`s with
/// [`TILES_ATTRIBUTE`]).
pub fn tile_modules<'c, 'a>(module: OperationRef<'c, 'a>) -> Vec<OperationRef<'c, 'a>> {
    let mut found = Vec::new();
    let Ok(region) = module.region(0) else {
        return found;
    };
    let Some(block) = region.first_block() else {
        return found;
    };
    let mut next = block.first_operation();
    while let Some(op) = next {
        if op.name().as_string_ref().as_str() == Ok("builtin.module")
            && op.has_attribute(TILES_ATTRIBUTE)
        {
            found.push(op);
        }
        next = op.next_in_block();
    }
    found
}

/// Replaces `old` (a tile module) by the module written for `design`, at the same place.
pub fn replace_tile_module<'c>(
    context: &'c Context,
    old: OperationRef<'c, '_>,
    design: &TileDesign,
) -> Result<(), LowerError> {
    let location = old.location();
    let block = old
        .block()
        .ok_or_else(|| LowerError::Input("tile module has no parent block".into()))?;
    let new = build_tile_module(context, location, design)?;
    block.insert_operation_before(old, new);
    // SAFETY: `old` is a live op owned by its block; it is first removed from the block (the
    // replacement is already in place) and then destroyed, and no handle to it is used after.
    unsafe {
        mlir_sys::mlirOperationRemoveFromParent(old.to_raw());
        mlir_sys::mlirOperationDestroy(old.to_raw());
    }
    Ok(())
}

/// Appends the module written for `design` at the end of `module`'s body.
pub fn append_tile_module<'c>(
    context: &'c Context,
    module: OperationRef<'c, '_>,
    location: Location<'c>,
    design: &TileDesign,
) -> Result<(), LowerError> {
    let region = module
        .region(0)
        .map_err(|_| LowerError::Input("module has no body".into()))?;
    let block = region
        .first_block()
        .ok_or_else(|| LowerError::Input("module has no body block".into()))?;
    let new = build_tile_module(context, location, design)?;
    block.append_operation(new);
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Writing.

struct Writer<'c> {
    context: &'c Context,
    location: Location<'c>,
    i64: Type<'c>,
    ops: Vec<Operation<'c>>,
}

impl<'c> Writer<'c> {
    fn int(&self, value: u64) -> Attribute<'c> {
        IntegerAttribute::new(self.i64, value as i64).into()
    }
    fn str(&self, value: &str) -> Attribute<'c> {
        StringAttribute::new(self.context, value).into()
    }
    fn i64s(&self, values: &[i64]) -> Attribute<'c> {
        DenseI64ArrayAttribute::new(self.context, values).into()
    }
    fn tiles(&self, tiles: &[u32]) -> Attribute<'c> {
        let values: Vec<i32> = tiles.iter().map(|&t| t as i32).collect();
        DenseI32ArrayAttribute::new(self.context, &values).into()
    }
    fn op(&mut self, name: &str, attributes: Vec<(&str, Attribute<'c>)>) -> Result<(), LowerError> {
        let attributes: Vec<(Identifier<'c>, Attribute<'c>)> = attributes
            .into_iter()
            .map(|(key, value)| (Identifier::new(self.context, key), value))
            .collect();
        let op = OperationBuilder::new(name, self.location)
            .add_attributes(&attributes)
            .build()
            .map_err(|e| LowerError::Input(format!("building {name}: {e}")))?;
        self.ops.push(op);
        Ok(())
    }
}

fn program_name(initialize: bool) -> &'static str {
    if initialize {
        "initialize"
    } else {
        "run"
    }
}

/// The MLIR element type text of a host precision.
pub fn element_type_text(precision: Precision) -> &'static str {
    match precision {
        Precision::F32 => "f32",
        Precision::F16 => "f16",
        Precision::F8E4M3 => "f8E4M3FNUZ",
        Precision::F8E5M2 => "f8E5M2FNUZ",
    }
}

fn precision_from_name(name: &str) -> Option<Precision> {
    [
        Precision::F32,
        Precision::F16,
        Precision::F8E4M3,
        Precision::F8E5M2,
    ]
    .into_iter()
    .find(|p| p.short_name() == name)
}

fn role_from_name(name: &str) -> Option<BindingRole> {
    [BindingRole::Input, BindingRole::Output, BindingRole::Weight]
        .into_iter()
        .find(|r| r.name() == name)
}

/// A dense elements attribute holding `data` (C order, `precision` elements) of `shape`;
/// a splat when every element is equal.
fn value_attribute<'c>(
    context: &'c Context,
    precision: Precision,
    shape: &[u64],
    data: &[u8],
) -> Result<Attribute<'c>, LowerError> {
    let dims = shape
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join("x");
    let text = if shape.is_empty() {
        format!("tensor<{}>", element_type_text(precision))
    } else {
        format!("tensor<{dims}x{}>", element_type_text(precision))
    };
    let r#type = Type::parse(context, &text)
        .ok_or_else(|| LowerError::Input(format!("cannot build type {text}")))?;
    let width = precision.bytes() as usize;
    let splat = data.len() >= width && data.chunks(width).all(|c| c == &data[..width]);
    let raw = if splat { &data[..width] } else { data };
    // SAFETY: the type is a valid ranked tensor type of `precision` elements and `raw` holds
    // either one element (a splat) or every element, as MLIR's raw-buffer constructor requires;
    // MLIR copies the bytes.
    let attribute = unsafe {
        Attribute::from_raw(mlir_sys::mlirDenseElementsAttrRawBufferGet(
            r#type.to_raw(),
            raw.len(),
            raw.as_ptr().cast(),
        ))
    };
    if attribute.to_raw().ptr.is_null() {
        return Err(LowerError::Input(format!(
            "weight data of {} B does not fit {text}",
            data.len()
        )));
    }
    Ok(attribute)
}

/// The C-order bytes of a dense elements attribute of `elements` elements of `width` bytes.
pub fn attribute_bytes(attribute: Attribute, elements: u64, width: u32) -> Option<Vec<u8>> {
    let raw = attribute.to_raw();
    // SAFETY: checked to be a dense elements attribute first; its raw data is the packed
    // element bytes (one element when it is a splat).
    unsafe {
        if !mlir_sys::mlirAttributeIsADenseElements(raw) {
            return None;
        }
        let splat = mlir_sys::mlirDenseElementsAttrIsSplat(raw);
        let pointer = mlir_sys::mlirDenseElementsAttrGetRawData(raw) as *const u8;
        let total = usize::try_from(elements.checked_mul(u64::from(width))?).ok()?;
        if pointer.is_null() {
            return None;
        }
        if splat {
            let one = std::slice::from_raw_parts(pointer, width as usize);
            Some(one.repeat(total / width as usize))
        } else {
            Some(std::slice::from_raw_parts(pointer, total).to_vec())
        }
    }
}

fn build_tile_module<'c>(
    context: &'c Context,
    location: Location<'c>,
    design: &TileDesign,
) -> Result<Operation<'c>, LowerError> {
    let program = &design.program;
    let mut w = Writer {
        context,
        location,
        i64: IntegerType::new(context, 64).into(),
        ops: Vec::new(),
    };
    for (provenance, op, estimate) in &program.ops {
        let attributes = vec![
            ("provenance", w.str(provenance)),
            ("op", w.str(op)),
            ("estimate", w.int(*estimate)),
        ];
        w.op("ipu_tile.op", attributes)?;
    }
    for (index, spec) in program.kernels.iter().enumerate() {
        let json = serde_json::to_string(spec)
            .map_err(|e| LowerError::Input(format!("kernel {index}: {e}")))?;
        let attributes = vec![
            ("index", w.int(index as u64)),
            ("name", w.str(&spec.name())),
            ("spec", w.str(&json)),
        ];
        w.op("ipu_tile.kernel", attributes)?;
    }
    for (id, buffer) in program.buffers.iter().enumerate() {
        let mut attributes = vec![
            ("id", w.int(id as u64)),
            ("name", w.str(&buffer.name)),
            ("class", w.str(buffer.class.name())),
            ("bytes", w.int(u64::from(buffer.bytes))),
            ("tiles", w.tiles(&buffer.tiles)),
            (
                "live",
                w.i64s(&[buffer.live.0 as i64, buffer.live.1 as i64]),
            ),
        ];
        if let Some(address) = buffer.address {
            attributes.push(("address", w.int(u64::from(address))));
        }
        w.op("ipu_tile.buffer", attributes)?;
    }
    for binding in &program.bindings {
        // Contiguous pieces only: one dense array of rows of 5 (the common, compact form);
        // otherwise one row per piece, strided ones with their runs and stride.
        let pieces = if binding.pieces.iter().all(|p| p.runs == 1) {
            let rows: Vec<i64> = binding.pieces.iter().flat_map(piece_row).collect();
            w.i64s(&rows)
        } else {
            let rows: Vec<Attribute> = binding
                .pieces
                .iter()
                .map(|p| w.i64s(&piece_row(p)))
                .collect();
            ArrayAttribute::new(context, &rows).into()
        };
        let shape: Vec<i64> = binding.shape.iter().map(|&d| d as i64).collect();
        let mut attributes = vec![
            ("name", w.str(&binding.name)),
            ("role", w.str(binding.role.name())),
            ("precision", w.str(binding.precision.short_name())),
            ("shape", w.i64s(&shape)),
            ("pieces", pieces),
        ];
        if binding.scale_exp != 0 {
            attributes.push((
                "scale_exp",
                IntegerAttribute::new(w.i64, i64::from(binding.scale_exp)).into(),
            ));
        }
        if binding.role == BindingRole::Weight {
            attributes.push((
                "value",
                value_attribute(context, binding.precision, &binding.shape, &binding.data)?,
            ));
        }
        w.op("ipu_tile.stream", attributes)?;
    }
    if let Some(support) = &design.support {
        let pairs = |ranges: &[(u32, u32)]| -> Vec<i64> {
            ranges
                .iter()
                .flat_map(|&(s, e)| [i64::from(s), i64::from(e)])
                .collect()
        };
        let attributes = vec![
            ("linked_end", w.int(u64::from(support.linked_end))),
            ("profile_bytes", w.int(u64::from(support.profile_bytes))),
            (
                "exchange_table_bytes",
                w.int(u64::from(support.exchange_table_bytes)),
            ),
            ("host_code_bytes", w.int(u64::from(support.host_code_bytes))),
            (
                "generated_code_bytes",
                w.int(u64::from(support.generated_code_bytes)),
            ),
            ("code_address", w.int(u64::from(support.code_address))),
            ("standard_ranges", w.i64s(&pairs(&support.standard_ranges))),
            (
                "interleaved_ranges",
                w.i64s(&pairs(&support.interleaved_ranges)),
            ),
        ];
        w.op("ipu_tile.support", attributes)?;
    }
    for (initialize, steps) in [(true, &program.initialize), (false, &program.run)] {
        let name = program_name(initialize);
        for step in steps {
            write_step(&mut w, name, step, program, &design.schedules)?;
        }
    }
    if let Some(code) = &design.code {
        let attributes = vec![
            ("tiles", w.tiles(&code.tiles)),
            ("final_cycles", w.int(code.final_cycles)),
            ("final_exchange", w.int(code.final_exchange)),
        ];
        w.op("ipu_tile.code", attributes)?;
    }
    let block = Block::new(&[]);
    for op in w.ops.drain(..) {
        block.append_operation(op);
    }
    let region = Region::new();
    region.append_block(block);
    let attributes = vec![
        (
            Identifier::new(context, "sym_name"),
            w.str(&format!("{}.tiles", design.function)),
        ),
        (
            Identifier::new(context, TILES_ATTRIBUTE),
            w.int(u64::from(program.tiles)),
        ),
        (
            Identifier::new(context, FUNCTION_ATTRIBUTE),
            w.str(&design.function),
        ),
        (
            Identifier::new(context, TARGET_ATTRIBUTE),
            w.str(&design.target),
        ),
    ];
    OperationBuilder::new("builtin.module", location)
        .add_attributes(&attributes)
        .add_regions([region])
        .build()
        .map_err(|e| LowerError::Input(format!("building the tile module: {e}")))
}

fn write_step(
    w: &mut Writer,
    program: &str,
    step: &TileStep,
    tile_program: &TileProgram,
    schedules: &BTreeMap<u32, StoredSchedule>,
) -> Result<(), LowerError> {
    match step {
        TileStep::HostWrite { binding } | TileStep::HostRead { binding } => {
            let name = if matches!(step, TileStep::HostWrite { .. }) {
                "ipu_tile.host_write"
            } else {
                "ipu_tile.host_read"
            };
            let stream = &tile_program.bindings[*binding].name;
            let attributes = vec![("program", w.str(program)), ("stream", w.str(stream))];
            w.op(name, attributes)
        }
        TileStep::Compute { provenance, runs } => {
            let mut rows = Vec::new();
            for run in runs {
                rows.extend([
                    i64::from(run.tile),
                    i64::from(run.kernel),
                    run.args.len() as i64,
                ]);
                for arg in &run.args {
                    match *arg {
                        Arg::Address(place) => {
                            rows.extend([place.buffer as i64, i64::from(place.offset)])
                        }
                        Arg::Value(value) => rows.extend([-1, i64::from(value)]),
                    }
                }
            }
            let attributes = vec![
                ("program", w.str(program)),
                ("provenance", w.str(provenance)),
                ("runs", w.i64s(&rows)),
            ];
            w.op("ipu_tile.compute", attributes)
        }
        TileStep::Sync => {
            let attributes = vec![("program", w.str(program))];
            w.op("ipu_tile.sync", attributes)
        }
        TileStep::Repeat { count, steps } => {
            let attributes = vec![
                ("program", w.str(program)),
                ("count", w.int(u64::from(*count))),
                ("steps", w.int(*steps as u64)),
            ];
            w.op("ipu_tile.repeat", attributes)
        }
        TileStep::Exchange { phase, moves } => {
            let mut rows = Vec::new();
            for m in moves {
                rows.extend([
                    i64::from(m.source_tile),
                    m.source.buffer as i64,
                    i64::from(m.source.offset),
                    m.destination.buffer as i64,
                    i64::from(m.destination.offset),
                    i64::from(m.bytes),
                    m.destinations.len() as i64,
                ]);
                rows.extend(m.destinations.iter().map(|&d| i64::from(d)));
            }
            let mut attributes = vec![
                ("program", w.str(program)),
                ("phase", w.int(u64::from(*phase))),
                ("moves", w.i64s(&rows)),
            ];
            if let Some(schedule) = schedules.get(phase) {
                let pieces: Vec<i64> = schedule
                    .pieces
                    .iter()
                    .flat_map(|row| row.map(|v| v as i64))
                    .collect();
                attributes.push(("schedule", w.i64s(&pieces)));
                attributes.push(("schedule_key", w.int(schedule.key)));
                attributes.push(("cycles", w.int(schedule.cycles)));
            }
            w.op("ipu_tile.exchange", attributes)
        }
    }
}

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
    StringAttribute::try_from(value)
        .map(|s| s.value().to_string())
        .map_err(|_| bad(op, format!("'{name}' is not a string")))
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
fn piece_row(p: &HostPiece) -> Vec<i64> {
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
fn piece_rows(op: OperationRef) -> Result<Vec<Vec<i64>>, LowerError> {
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
                let id = get_int(op, "id")?;
                if id != program.buffers.len() as i64 {
                    return Err(bad(
                        op,
                        format!("buffer id {id}, expected {}", program.buffers.len()),
                    ));
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
                program.buffers.push(Buffer {
                    name: get_str(op, "name")?,
                    class,
                    bytes,
                    tiles: buffer_tiles,
                    live: (first as usize, last as usize),
                    address,
                });
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
            "ipu_tile.support" => {
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
                                return Err(bad(
                                    op,
                                    format!("'{name}' range {s}..{e} is reversed"),
                                ));
                            }
                            Ok((s, e))
                        })
                        .collect()
                };
                design_support = Some(SupportMemory {
                    linked_end: get_u32(op, "linked_end")?,
                    profile_bytes: get_u32(op, "profile_bytes")?,
                    exchange_table_bytes: get_u32(op, "exchange_table_bytes")?,
                    host_code_bytes: get_u32(op, "host_code_bytes")?,
                    generated_code_bytes: get_u32(op, "generated_code_bytes")?,
                    code_address: get_u32(op, "code_address")?,
                    standard_ranges: ranges("standard_ranges")?,
                    interleaved_ranges: ranges("interleaved_ranges")?,
                });
            }
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
                        format!(
                            "'scale_exp' = {scale}: only an FP8 stream has a scale, in -31..=31"
                        ),
                    ));
                }
                scale as i32
            }
        };
        let rows = piece_rows(op)?;
        let mut pieces = Vec::with_capacity(rows.len());
        for (index, row) in rows.iter().enumerate() {
            pieces.push(read_piece(op, &reader, index, row, tensor_bytes)?);
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
        bindings.push(HostBinding {
            name: get_str(op, "name")?,
            role,
            precision,
            scale_exp,
            shape,
            pieces,
            data,
        });
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
            "ipu_tile.compute" => {
                let rows = get_i64s(op, "runs")?;
                let mut runs = Vec::new();
                let mut at = 0;
                while at < rows.len() {
                    if at + 3 > rows.len() {
                        return Err(bad(op, "truncated run record"));
                    }
                    let tile = reader.tile(op, rows[at])?;
                    let kernel = index(op, "kernel", rows[at + 1], program.kernels.len())? as u32;
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
                TileStep::Compute {
                    provenance: get_str(op, "provenance")?,
                    runs,
                }
            }
            "ipu_tile.exchange" => {
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
                    schedules.insert(
                        phase,
                        StoredSchedule {
                            key: get_int(op, "schedule_key")? as u64,
                            pieces,
                            cycles: get_int(op, "cycles")?.max(0) as u64,
                        },
                    );
                }
                TileStep::Exchange { phase, moves }
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
