//! Writing a [`TileDesign`] as a tile module.

use std::collections::BTreeMap;

use ipu_device::Precision;
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

use super::super::program::{Arg, TileProgram, TileStep};
use super::super::LowerError;
use super::read::piece_row;
use super::*;
use ipu_dialects::tile;

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

    /// Moves `old` (ops of the module being replaced) into the new module as they are.
    fn adopt(&mut self, old: &[OperationRef<'c, '_>]) {
        for op in old {
            // SAFETY: `op` is a live op of the old tile module's block, used by nothing else;
            // it is detached from that block first and then owned by the new module (the old
            // module, destroyed after the replacement, no longer holds it).
            let owned = unsafe {
                mlir_sys::mlirOperationRemoveFromParent(op.to_raw());
                Operation::from_raw(op.to_raw())
            };
            self.ops.push(owned);
        }
    }
}

/// The parts of a tile design a stage changes; the writer moves the ops of every other part
/// over from the module the design was taken from (written by this module, in its order).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Changes {
    /// Buffer ops (addresses, lifetimes).
    pub buffers: bool,
    /// The support memory op.
    pub support: bool,
    /// The exchange steps' schedules.
    pub schedules: bool,
    /// The emitted code op.
    pub code: bool,
}

impl Changes {
    /// Whether `after` differs from `before` in the declared parts only.
    pub fn cover(&self, before: &TileDesign, after: &TileDesign) -> bool {
        let (b, a) = (&before.program, &after.program);
        b.ops == a.ops
            && b.kernels == a.kernels
            && b.bindings == a.bindings
            && b.initialize == a.initialize
            && b.run == a.run
            && b.tiles == a.tiles
            && before.function == after.function
            && before.target == after.target
            && (self.buffers || b.buffers == a.buffers)
            && (self.support || before.support == after.support)
            && (self.schedules || before.schedules == after.schedules)
            && (self.code || before.code == after.code)
    }
}

/// The ops of the module being replaced, which this module wrote, and what the stage changed
/// since: the ops of the other parts are moved into the new module as they are.
pub(super) struct Reuse<'c, 'a> {
    pub changes: Changes,
    pub ops: Vec<OperationRef<'c, 'a>>,
}

/// The part an op of a tile module belongs to, in the writer's order.
fn part_of(op: &OperationRef) -> usize {
    match op.name().as_string_ref().as_str() {
        Ok(tile::ProfiledOp::NAME) => 0,
        Ok(tile::KernelOp::NAME) => 1,
        Ok(tile::BufferOp::NAME) => 2,
        Ok(tile::StreamOp::NAME) => 3,
        Ok(tile::SupportOp::NAME) => 4,
        Ok(tile::CodeOp::NAME) => 6,
        _ => 5,
    }
}

impl<'c, 'a> Reuse<'c, 'a> {
    /// The old ops of each part (ops, kernels, buffers, streams, support, steps, code) when
    /// they are in the writer's order and there is one step op per step of `design`.
    fn parts(&self, design: &TileDesign) -> Option<[&[OperationRef<'c, 'a>]; 7]> {
        let mut counts = [0usize; 7];
        let mut last = 0;
        for op in &self.ops {
            let part = part_of(op);
            if part < last {
                return None;
            }
            last = part;
            counts[part] += 1;
        }
        if counts[5] != design.program.initialize.len() + design.program.run.len() {
            return None;
        }
        let mut rest = self.ops.as_slice();
        Some(counts.map(|count| {
            let (part, tail) = rest.split_at(count);
            rest = tail;
            part
        }))
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

pub(super) fn precision_from_name(name: &str) -> Option<Precision> {
    [
        Precision::F32,
        Precision::F16,
        Precision::F8E4M3,
        Precision::F8E5M2,
    ]
    .into_iter()
    .find(|p| p.short_name() == name)
}

pub(super) fn role_from_name(name: &str) -> Option<BindingRole> {
    [
        BindingRole::Input,
        BindingRole::Output,
        BindingRole::Weight,
        BindingRole::Parameter,
    ]
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

pub(super) fn build_tile_module<'c>(
    context: &'c Context,
    location: Location<'c>,
    design: &TileDesign,
    reuse: Option<Reuse<'c, '_>>,
) -> Result<Operation<'c>, LowerError> {
    let program = &design.program;
    let mut w = Writer {
        context,
        location,
        i64: IntegerType::new(context, 64).into(),
        ops: Vec::new(),
    };
    let parts = reuse.as_ref().and_then(|reuse| reuse.parts(design));
    let changes = reuse.as_ref().map(|reuse| reuse.changes);
    // The old ops of part `index` when they can be moved over (the part is unchanged).
    let unchanged = |index: usize, changed: bool| match &parts {
        Some(parts) if !changed => Some(parts[index]),
        _ => None,
    };
    let changes = changes.unwrap_or_default();
    match unchanged(0, false) {
        Some(old) => w.adopt(old),
        None => write_ops(&mut w, program)?,
    }
    match unchanged(1, false) {
        Some(old) => w.adopt(old),
        None => write_kernels(&mut w, program)?,
    }
    match unchanged(2, changes.buffers) {
        Some(old) => w.adopt(old),
        None => write_buffers(&mut w, program)?,
    }
    match unchanged(3, false) {
        Some(old) => w.adopt(old),
        None => write_streams(&mut w, program)?,
    }
    match unchanged(4, changes.support) {
        Some(old) => w.adopt(old),
        None => write_support(&mut w, design)?,
    }
    let steps = program
        .initialize
        .iter()
        .map(|step| (true, step))
        .chain(program.run.iter().map(|step| (false, step)));
    for (position, (initialize, step)) in steps.enumerate() {
        let changed = changes.schedules && matches!(step, TileStep::Exchange { .. });
        match unchanged(5, changed) {
            Some(old) => w.adopt(&old[position..=position]),
            None => write_step(
                &mut w,
                program_name(initialize),
                step,
                program,
                &design.schedules,
            )?,
        }
    }
    match unchanged(6, changes.code) {
        Some(old) => w.adopt(old),
        None => write_code(&mut w, design)?,
    }
    finish_module(w, design)
}

fn write_ops(w: &mut Writer, program: &TileProgram) -> Result<(), LowerError> {
    for (provenance, op, estimate) in &program.ops {
        let attributes = vec![
            ("provenance", w.str(provenance)),
            ("op", w.str(op)),
            ("estimate", w.int(*estimate)),
        ];
        w.op(tile::ProfiledOp::NAME, attributes)?;
    }
    Ok(())
}

fn write_kernels(w: &mut Writer, program: &TileProgram) -> Result<(), LowerError> {
    for (index, spec) in program.kernels.iter().enumerate() {
        let json = serde_json::to_string(spec)
            .map_err(|e| LowerError::Input(format!("kernel {index}: {e}")))?;
        let attributes = vec![
            ("index", w.int(index as u64)),
            ("name", w.str(&spec.name())),
            ("spec", w.str(&json)),
        ];
        w.op(tile::KernelOp::NAME, attributes)?;
    }
    Ok(())
}

fn write_buffers(w: &mut Writer, program: &TileProgram) -> Result<(), LowerError> {
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
        w.op(tile::BufferOp::NAME, attributes)?;
    }
    Ok(())
}

fn write_streams(w: &mut Writer, program: &TileProgram) -> Result<(), LowerError> {
    let context = w.context;
    for binding in &program.bindings {
        // Contiguous pieces only: one dense array of rows of 5 (the common, compact form);
        // otherwise one row per piece, strided ones with their runs and stride, padded ones
        // with their padding too.
        let pieces = if binding.pieces.iter().all(|p| p.runs == 1 && p.pad == 0) {
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
        if binding.iterations != 1 {
            attributes.push((
                "iterations",
                IntegerAttribute::new(w.i64, i64::from(binding.iterations)).into(),
            ));
        }
        if binding.role == BindingRole::Weight {
            attributes.push((
                "value",
                value_attribute(context, binding.precision, &binding.shape, &binding.data)?,
            ));
        }
        w.op(tile::StreamOp::NAME, attributes)?;
    }
    Ok(())
}

fn write_support(w: &mut Writer, design: &TileDesign) -> Result<(), LowerError> {
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
        w.op(tile::SupportOp::NAME, attributes)?;
    }
    Ok(())
}

fn write_code(w: &mut Writer, design: &TileDesign) -> Result<(), LowerError> {
    if let Some(code) = &design.code {
        let attributes = vec![
            ("tiles", w.tiles(&code.tiles)),
            ("final_cycles", w.int(code.final_cycles)),
            ("final_exchange", w.int(code.final_exchange)),
        ];
        w.op(tile::CodeOp::NAME, attributes)?;
    }
    Ok(())
}

/// The tile module holding the ops written so far.
fn finish_module<'c>(mut w: Writer<'c>, design: &TileDesign) -> Result<Operation<'c>, LowerError> {
    let context = w.context;
    let program = &design.program;
    let location = w.location;
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
                tile::HostWriteOp::NAME
            } else {
                tile::HostReadOp::NAME
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
            w.op(tile::ComputeOp::NAME, attributes)
        }
        TileStep::Sync => {
            let attributes = vec![("program", w.str(program))];
            w.op(tile::SyncOp::NAME, attributes)
        }
        TileStep::Repeat { count, steps } => {
            let attributes = vec![
                ("program", w.str(program)),
                ("count", w.int(u64::from(*count))),
                ("steps", w.int(*steps as u64)),
            ];
            w.op(tile::RepeatOp::NAME, attributes)
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
            w.op(tile::ExchangeOp::NAME, attributes)
        }
    }
}
