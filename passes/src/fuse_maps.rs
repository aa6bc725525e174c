//! `ipu-fuse-maps`: an `ipu.map` reading the result of another `ipu.map` of the same shape,
//! that result read by nothing else, becomes one map whose body computes both (the producer's
//! body substituted for that input, [`ScalarProgram::substitute`]): a chain of elementwise ops
//! runs as one fused kernel, not one kernel and one exchange per op. The linalg import fuses
//! its generics itself; this pass does it for what the TOSA import writes (one map per
//! elementwise TOSA op) and for any ipu module. A fused map keeps to the kernel's input limit
//! (`MAP_MAX_INPUTS`).

use ipu_device::kernels::spec::MAP_MAX_INPUTS;
use ipu_dialects::graph::read::functions;
use ipu_dialects::graph::scalar::ScalarProgram;
use ipu_dialects::ipu::{op_name, MapOp};
use melior::ir::{block::BlockLike, operation::OperationLike, OperationRef, Value, ValueLike};

use crate::ir::{producer, users};
use crate::pass::{Pass, PassFailure, PassRun};

crate::pass_options! {
    /// Options of `ipu-fuse-maps` (none).
    pub struct FuseMapsOptions for "ipu-fuse-maps" {}
}

/// The `ipu-fuse-maps` pass.
#[derive(Clone)]
pub struct FuseMaps {
    options: FuseMapsOptions,
}

impl Pass for FuseMaps {
    type Options = FuseMapsOptions;
    const ARGUMENT: &'static str = "ipu-fuse-maps";
    const SUMMARY: &'static str = "Fuse chains of single-use ipu.map ops into one map";

    fn new(options: FuseMapsOptions) -> Self {
        FuseMaps { options }
    }

    fn options(&self) -> &FuseMapsOptions {
        &self.options
    }

    fn run(&self, op: OperationRef, run: &mut PassRun) -> Result<(), PassFailure> {
        let fused = fuse_maps(op).map_err(|message| {
            ipu_dialects::diagnostics::op_error(&op, &format!("{}: {message}", Self::ARGUMENT));
            PassFailure(message)
        })?;
        run.statistic(
            "fused",
            "Number of ipu.map ops fused into their reader",
            fused,
        );
        Ok(())
    }
}

/// The body program of `map` (inputs, then one index per result axis when the body reads
/// them), if it can be read.
fn body_of(
    map: OperationRef,
    table: &std::collections::BTreeMap<String, OperationRef>,
) -> Option<ScalarProgram> {
    crate::form_attention::map_program(map, table, map.operand_count())
}

/// One fusable pair: the reader, the positions of the producer's result among its inputs
/// (each substituted: an input read twice, as in `x * x`, computes the producer twice), the
/// producer and the fused body.
fn fusable<'c, 'a>(
    reader: OperationRef<'c, 'a>,
    table: &std::collections::BTreeMap<String, OperationRef>,
) -> Option<(Vec<usize>, OperationRef<'c, 'a>, ScalarProgram)> {
    let result: Value = reader.result(0).ok()?.into();
    let body = body_of(reader, table)?;
    for k in 0..reader.operand_count() {
        let operand = reader.operand(k).ok()?;
        let Some(map) = producer(operand).filter(|p| op_name(p) == MapOp::NAME) else {
            continue;
        };
        let positions: Vec<usize> = reader
            .operands()
            .enumerate()
            .filter(|(_, v)| *v == operand)
            .map(|(p, _)| p)
            .collect();
        // Read only by this map (maybe at several positions), with the reader's shape.
        let only_here = users(operand)
            .iter()
            .all(|u| u.to_raw().ptr == reader.to_raw().ptr);
        if positions[0] != k || !only_here || operand.r#type() != result.r#type() {
            continue;
        }
        let inputs = reader.operand_count() + positions.len() * (map.operand_count().max(1) - 1);
        if inputs > MAP_MAX_INPUTS || map.operand_count() == 0 {
            continue;
        }
        let Some(inner) = body_of(map, table) else {
            continue;
        };
        // Substituted from the last position, so the earlier positions keep their numbers.
        let mut fused = body.clone();
        for &p in positions.iter().rev() {
            fused = fused.substitute(p, &inner);
        }
        if fused.types().is_err() {
            continue;
        }
        return Some((positions, map, fused));
    }
    None
}

/// Fuses every such chain of `module`; returns how many maps were fused into their readers.
pub fn fuse_maps(module: OperationRef) -> Result<u64, String> {
    let context = module.context();
    // SAFETY: the context outlives the pass run.
    let context = unsafe { context.to_ref() };
    let mut fused = 0;
    loop {
        let table = functions(module);
        let maps = crate::convert::tosa::ops_with_prefix(module, MapOp::NAME);
        let Some((reader, (positions, producer_map, program))) = maps
            .iter()
            .find_map(|&reader| fusable(reader, &table).map(|found| (reader, found)))
        else {
            return Ok(fused);
        };
        let name = crate::convert::general_build::add_body_function(context, module, &program)?;
        let mut inputs: Vec<Value> = reader.operands().collect();
        let inner: Vec<Value> = producer_map.operands().collect();
        for &p in positions.iter().rev() {
            inputs.splice(p..=p, inner.iter().copied());
        }
        let result: Value = reader.result(0).map_err(|e| e.to_string())?.into();
        let block = reader.block().ok_or("internal: a map outside a block")?;
        let map = MapOp::build(context, reader.location(), &inputs, result.r#type(), &name);
        let map = block.insert_operation_before(reader, map);
        let replacement: Value = map.result(0).map_err(|e| e.to_string())?.into();
        // SAFETY: both values are live and of the same type.
        unsafe { mlir_sys::mlirValueReplaceAllUsesOfWith(result.to_raw(), replacement.to_raw()) };
        crate::convert::erase_unused(vec![reader, producer_map]);
        fused += 1;
    }
}
