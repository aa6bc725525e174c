//! The general import of `linalg.generic` ops no decomposition pattern recognized: an
//! elementwise generic (every loop parallel) becomes one `ipu.map` whose body is the generic's
//! region as a scalar program, with the single-use elementwise generics feeding it fused in
//! (a chain of elementwise ops is one kernel, not one kernel and one exchange per op); a
//! reduction over the last loop becomes `ipu.reduce` after a map of its per-element part.
//! Inputs read through broadcasting, transposing or constant-index maps are brought to the
//! iteration shape with `ipu.reshape`, `ipu.rearrange` and `ipu.broadcast`.

use std::collections::BTreeSet;

use ipu_dialects::graph::scalar::{self, ArgumentRole, Binary, ScalarOp, ScalarProgram};
use ipu_dialects::ipu::{op_name, Combiner};
use melior::ir::{
    attribute::AttributeLike, block::BlockLike, operation::OperationLike, r#type::ShapedTypeLike,
    r#type::TypeLike, OperationRef, RegionLike, Value, ValueLike,
};

use super::ir::{key, produced_by, shape_of, users};
use super::linalg_patterns::{indexing_maps, reduction_loops, MapResult};
use super::{Replacement, Rewrite, Unconvertible};
use ipu_device::kernels::spec::MAP_MAX_INPUTS;

mod fusion;
mod gelu;
mod named;
mod unit_reshapes;

pub use fusion::{absorbed_cones, fused_into_user};
use gelu::gelu_form;
pub use named::{
    broadcast_rewrite, inline_resource_constants, named_elementwise_rewrite, tosa_rewrite,
};
pub use unit_reshapes::fold_unit_reshapes;

/// One input of a map as the import brings it to the iteration shape: `value`, reshaped to
/// `pre_shape` (dropping constant-index axes), permuted by `permutation` (so its loop
/// dimensions ascend), reshaped to `expanded` (size-1 axes where it is broadcast) and
/// broadcast to the iteration shape.
#[derive(Clone)]
pub struct MapInput<'c, 'a> {
    pub value: Value<'c, 'a>,
    pub pre_shape: Option<Vec<i64>>,
    pub permutation: Option<Vec<i64>>,
    pub expanded: Vec<i64>,
}

/// The per-element part of a generic being composed: its inputs and ops.
struct Composer<'c, 'a> {
    /// Inputs by (value, map): repeated reads of one value through one map are one input.
    inputs: Vec<(Value<'c, 'a>, Vec<MapResult>)>,
    ops: Vec<ScalarOp>,
    /// Generics fused in (erased with the root).
    fused: Vec<OperationRef<'c, 'a>>,
    /// Ops the conversion must leave to others (covered by a pattern).
    covered: &'a BTreeSet<usize>,
    /// The result of the root that is converted (fused producers have one).
    used: usize,
    /// Float producers inside another op's cone ([`absorbed_cones`]), fused into it.
    absorbed: &'a BTreeSet<usize>,
    /// Each op already emitted, so a producer read twice is computed once.
    emitted: std::collections::HashMap<ScalarOp, usize>,
}

/// The scalar kind of a tensor value's elements (float, integer, boolean), if it has one.
fn element_kind(value: Value) -> Option<scalar::ScalarType> {
    let tensor = melior::ir::r#type::RankedTensorType::try_from(value.r#type()).ok()?;
    scalar::scalar_type(tensor.element())
}

fn address(op: &OperationRef) -> usize {
    op.to_raw().ptr as usize
}

fn iterators(op: OperationRef) -> Result<Vec<bool>, Unconvertible> {
    reduction_loops(op).ok_or_else(|| Unconvertible("unreadable iterator_types".into()))
}

fn maps(op: OperationRef) -> Result<Vec<Vec<MapResult>>, Unconvertible> {
    indexing_maps(op).ok_or_else(|| {
        Unconvertible(
            "an indexing map reads other than loop dimensions and constant 0 (e.g. strides or sums of dimensions)"
                .into(),
        )
    })
}

impl<'c, 'a> Composer<'c, 'a> {
    /// Appends `op` unless the same op (same operands) is already there: its id.
    fn push(&mut self, op: ScalarOp) -> usize {
        if let Some(&id) = self.emitted.get(&op) {
            return id;
        }
        self.ops.push(op.clone());
        let id = self.ops.len() - 1;
        self.emitted.insert(op, id);
        id
    }

    /// The op id of input (`value`, `map`), added once; a splat constant is a scalar
    /// constant of the body instead (a boolean `dense<true>` mask included).
    fn input(&mut self, value: Value<'c, 'a>, map: Vec<MapResult>) -> usize {
        if let Some(leaf) = splat_leaf(value) {
            return self.push(leaf);
        }
        // A boolean tensor that is not fused (a boolean reduction's) is held as floats 0 and 1.
        let boolean = element_kind(value) == Some(scalar::ScalarType::Bool);
        let position = match self
            .inputs
            .iter()
            .position(|(v, m)| key(*v) == key(value) && *m == map)
        {
            Some(position) => position,
            None => {
                self.inputs.push((value, map));
                self.inputs.len() - 1
            }
        };
        let read = self.push(ScalarOp::Input(position));
        if boolean {
            let zero = self.push(ScalarOp::Float(0));
            return self.push(ScalarOp::CmpF(scalar::FloatPredicate::Une, read, zero));
        }
        read
    }

    /// Emits `generic`'s body (its first `inputs` block arguments are its inputs; `extra`
    /// names the op id of any further block argument it reads, e.g. a reduction's
    /// accumulator) with its inputs read through `maps`, fusing single-use elementwise
    /// producers; returns the op id of the body's result.
    fn emit(
        &mut self,
        generic: OperationRef<'c, 'a>,
        rank: usize,
        extra: Option<usize>,
        outer: Option<&[MapResult]>,
    ) -> Result<usize, Unconvertible> {
        let inputs = generic.operand_count() - generic.result_count();
        // A fused producer's loops are its result's axes, which the user reads through
        // `outer`: its inputs' maps and indices are composed with it.
        let compose = |map: &[MapResult]| -> Vec<MapResult> {
            match outer {
                None => map.to_vec(),
                Some(outer) => map
                    .iter()
                    .map(|r| match r {
                        MapResult::Dim(d) => outer.get(*d).copied().unwrap_or(MapResult::Zero),
                        MapResult::Zero => MapResult::Zero,
                    })
                    .collect(),
            }
        };
        let maps: Vec<Vec<MapResult>> = maps(generic)?.iter().map(|m| compose(m)).collect();
        let region = generic
            .region(0)
            .map_err(|_| Unconvertible("a linalg.generic without a body".into()))?;
        let block = region
            .first_block()
            .ok_or_else(|| Unconvertible("a linalg.generic without a body block".into()))?;
        let accumulator = extra.is_some();
        // A generic of several results is converted for the one that is used (`self.used`):
        // its yielded value, its accumulator block argument.
        let used = self.used;
        let roles = |i: usize| {
            if i < inputs {
                ArgumentRole::Input(i)
            } else if accumulator && i == inputs + used {
                ArgumentRole::Input(inputs)
            } else {
                ArgumentRole::Unused
            }
        };
        let own_rank = reduction_loops(generic).map_or(rank, |l| l.len());
        let program = scalar::read_block(
            block,
            inputs + usize::from(accumulator),
            own_rank,
            &roles,
            0,
        )
        .map_err(|e| {
            let at =
                e.op.map(|op| format!(" (at '{}')", op_name(&op)))
                    .unwrap_or_default();
            Unconvertible(format!("its body: {}{at}", e.message))
        })?;
        // Each input's op id in the composed program, fusing producers read by identity.
        let mut ids = Vec::with_capacity(inputs + 1);
        for (k, map) in maps.iter().enumerate().take(inputs) {
            let value: Value = generic
                .operand(k)
                .map_err(|_| Unconvertible(format!("missing input #{k}")))?;
            let producer = produced_by(value, "linalg.generic");
            let fusable = producer.filter(|p| {
                (fused_into_user(*p, self.covered) || self.absorbed.contains(&address(p)))
                    && self.inputs.len() + p.operand_count() <= MAP_MAX_INPUTS
            });
            let id = match fusable {
                Some(p) => {
                    if !self.fused.iter().any(|f| address(f) == address(&p)) {
                        self.fused.push(p);
                    }
                    let root_result = std::mem::replace(&mut self.used, 0);
                    let id = self.emit(p, rank, None, Some(map));
                    self.used = root_result;
                    id?
                }
                None => self.input(value, map.clone()),
            };
            ids.push(id);
        }
        if let Some(extra) = extra {
            ids.push(extra);
        }
        let mut new_index = Vec::with_capacity(program.ops.len());
        for op in &program.ops {
            let id = match *op {
                ScalarOp::Input(n) => ids[n],
                ScalarOp::Index(d) => {
                    let index = match compose(&[MapResult::Dim(d)])[0] {
                        MapResult::Dim(j) => ScalarOp::Index(j),
                        MapResult::Zero => ScalarOp::Int(0),
                    };
                    self.push(index)
                }
                _ => self.push(op.renumbered(|a| new_index[a])),
            };
            new_index.push(id);
        }
        Ok(new_index[program.result])
    }

    /// The composed program returning op `result`, and its inputs brought to `shape`.
    fn finish(
        self,
        result: usize,
        shape: &[i64],
    ) -> Result<
        (
            Vec<MapInput<'c, 'a>>,
            ScalarProgram,
            Vec<OperationRef<'c, 'a>>,
        ),
        Unconvertible,
    > {
        if self.inputs.len() > MAP_MAX_INPUTS {
            return Err(Unconvertible(format!(
                "it reads {} distinct inputs; a map kernel reads at most {MAP_MAX_INPUTS}",
                self.inputs.len()
            )));
        }
        let indices = if self.ops.iter().any(|op| matches!(op, ScalarOp::Index(_))) {
            shape.len()
        } else {
            0
        };
        let program = ScalarProgram {
            inputs: self.inputs.len(),
            indices,
            ops: self.ops,
            result,
        }
        .pruned();
        program
            .types()
            .map_err(|e| Unconvertible(format!("its body is ill-typed: {e}")))?;
        let inputs = self
            .inputs
            .iter()
            .map(|(value, map)| map_input(*value, map, shape))
            .collect::<Result<Vec<_>, _>>()?;
        Ok((inputs, program, self.fused))
    }
}

/// How input `value`, read through `map` in a loop nest of `shape`, is brought to `shape`.
pub(super) fn map_input<'c, 'a>(
    value: Value<'c, 'a>,
    map: &[MapResult],
    shape: &[i64],
) -> Result<MapInput<'c, 'a>, Unconvertible> {
    let own = shape_of(value.r#type())
        .ok_or_else(|| Unconvertible("an input without a static shape".into()))?;
    if own.len() != map.len() {
        return Err(Unconvertible(format!(
            "an input of rank {} read through a map of {} results",
            own.len(),
            map.len()
        )));
    }
    // Constant-index axes must be size 1 (a slice of a larger axis is not elementwise).
    let mut dims = Vec::new();
    for (axis, result) in map.iter().enumerate() {
        match result {
            MapResult::Zero if own[axis] == 1 => {}
            MapResult::Zero => {
                return Err(Unconvertible(format!(
                    "an input of shape {own:?} is read at constant index 0 of axis {axis} (size {}): a slice, not a broadcast",
                    own[axis]
                )))
            }
            MapResult::Dim(d) => dims.push((*d, own[axis])),
        }
    }
    let pre_shape: Vec<i64> = dims.iter().map(|&(_, size)| size).collect();
    let mut order: Vec<usize> = (0..dims.len()).collect();
    order.sort_by_key(|&i| dims[i].0);
    let permutation = (order.iter().enumerate().any(|(i, &o)| i != o))
        .then(|| order.iter().map(|&o| o as i64).collect::<Vec<_>>());
    let mut expanded = vec![1i64; shape.len()];
    for &(d, size) in &dims {
        if d >= shape.len() {
            return Err(Unconvertible(format!(
                "a map reads loop d{d} of {}",
                shape.len()
            )));
        }
        if size != shape[d] && size != 1 {
            return Err(Unconvertible(format!(
                "an input axis of size {size} is read along loop d{d} of size {}",
                shape[d]
            )));
        }
        expanded[d] = size;
    }
    Ok(MapInput {
        value,
        pre_shape: (pre_shape != own && permutation.is_some()).then_some(pre_shape),
        permutation,
        expanded,
    })
}

/// The loop sizes of `generic`, from the shapes its maps read.
fn loop_shape(generic: OperationRef, loops: usize) -> Result<Vec<i64>, Unconvertible> {
    let maps = maps(generic)?;
    let mut shape = vec![None; loops];
    for (k, map) in maps.iter().enumerate() {
        let value: Value = generic
            .operand(k)
            .map_err(|_| Unconvertible(format!("missing operand #{k}")))?;
        let Some(own) = shape_of(value.r#type()) else {
            continue;
        };
        for (axis, result) in map.iter().enumerate() {
            if let (MapResult::Dim(d), Some(&size)) = (result, own.get(axis)) {
                if *d < loops && (shape[*d].is_none() || shape[*d] == Some(1)) {
                    shape[*d] = Some(size);
                }
            }
        }
    }
    shape
        .into_iter()
        .enumerate()
        .map(|(d, s)| {
            s.ok_or_else(|| Unconvertible(format!("no operand gives the size of loop d{d}")))
        })
        .collect()
}

/// The conversion of a `linalg.generic` no pattern covers: a map (elementwise) or a
/// reduction over its last loop.
pub fn generic_rewrite<'c, 'a>(
    op: OperationRef<'c, 'a>,
    covered: &'a BTreeSet<usize>,
    absorbed: &'a BTreeSet<usize>,
) -> Result<Rewrite<'c, 'a>, Unconvertible> {
    // Of several results only one may be used (frontends compute an unused argmax beside a
    // max): that one is converted.
    let used_results: Vec<usize> = (0..op.result_count())
        .filter(|&r| {
            op.result(r)
                .map(|v| super::ir::has_uses(v.into()))
                .unwrap_or(false)
        })
        .collect();
    let used = match used_results[..] {
        [] => 0,
        [one] => one,
        _ => {
            return Err(Unconvertible(format!(
            "results {used_results:?} are used; the import converts generics with one used result"
        )))
        }
    };
    let inputs_count = op.operand_count() - op.result_count();
    let loops = iterators(op)?;
    let maps = maps(op)?;
    let output_map = maps.get(inputs_count + used).cloned().unwrap_or_default();
    let shape = loop_shape(op, loops.len())?;
    let mut composer = Composer {
        inputs: Vec::new(),
        ops: Vec::new(),
        fused: Vec::new(),
        covered,
        used,
        absorbed,
        emitted: std::collections::HashMap::new(),
    };
    let reductions: Vec<usize> = (0..loops.len()).filter(|&d| loops[d]).collect();
    let result_value: Value = op
        .result(used)
        .map_err(|_| Unconvertible("missing result".into()))?
        .into();
    if reductions.is_empty() {
        super::ir::check_ipu_tensor(result_value, "the result").map_err(Unconvertible)?;
        let identity: Vec<MapResult> = (0..loops.len()).map(MapResult::Dim).collect();
        if output_map != identity {
            return Err(Unconvertible(
                "an elementwise generic whose output map is not the identity (a transposed write)"
                    .into(),
            ));
        }
        let result = composer.emit(op, loops.len(), None, None)?;
        let (inputs, body, fused) = composer.finish(result, &shape)?;
        // A sum of two inputs whose own shapes broadcast to the result is an `ipu.add` (which
        // broadcasts like NumPy: a bias stays a vector, and the add strategies apply).
        let sum = [
            ScalarOp::Input(0),
            ScalarOp::Input(1),
            ScalarOp::Binary(Binary::Add, 0, 1),
        ];
        // A body that computes GeLU (exact or tanh form), however the exporter expanded it
        // (IREE writes erf as an f32 polynomial of erfc), is ipu.gelu: recognized by what the
        // body computes, not by its ops.
        if let [input] = &inputs[..] {
            let whole = input.expanded == shape && input.permutation.is_none();
            if whole && body.indices == 0 {
                if let Some(tanh) = gelu_form(&body) {
                    return Ok(Rewrite {
                        root: op,
                        interior: fused,
                        replacement: Replacement::Gelu {
                            input: input.value,
                            tanh,
                        },
                        kind: "gelu",
                        result: 0,
                    });
                }
            }
        }
        let covers = |axis: usize| inputs.iter().any(|i| i.expanded[axis] == shape[axis]);
        if body.ops == sum && inputs.len() == 2 && (0..shape.len()).all(covers) {
            return Ok(Rewrite {
                root: op,
                interior: fused,
                replacement: Replacement::BroadcastingAdd { inputs },
                kind: "add",
                result: 0,
            });
        }
        return Ok(Rewrite {
            root: op,
            interior: fused,
            replacement: Replacement::Map { inputs, body },
            kind: "map",
            result: 0,
        });
    }
    // One reduction loop, anywhere: the loops are reordered so it is last (ipu.reduce works
    // on the last axis); the result keeps the other loops in order, the reduced one dropped
    // or kept as size 1 (read at index 0) anywhere.
    let &[reduced] = &reductions[..] else {
        return Err(Unconvertible(format!(
            "a reduction over loops {reductions:?}; the import converts reductions over one loop"
        )));
    };
    let kept: Vec<usize> = (0..loops.len()).filter(|&d| d != reduced).collect();
    let written: Vec<usize> = output_map
        .iter()
        .filter_map(|r| match r {
            MapResult::Dim(d) => Some(*d),
            MapResult::Zero => None,
        })
        .collect();
    let zeros = output_map.len() - written.len();
    if written != kept || zeros > 1 {
        return Err(Unconvertible(format!(
            "a reduction over loop {reduced} with output map {output_map:?}; the import converts reductions whose result keeps the other loops in order"
        )));
    }
    let mut order = kept.clone();
    order.push(reduced);
    // Loop d of the generic is loop `position of d in order` of the reordered nest.
    let reorder: Vec<MapResult> = (0..loops.len())
        .map(|d| MapResult::Dim(order.iter().position(|&o| o == d).unwrap_or(d)))
        .collect();
    let shape: Vec<i64> = order.iter().map(|&d| shape[d]).collect();
    let reordered = (order != (0..loops.len()).collect::<Vec<_>>()).then_some(&reorder[..]);
    // The accumulator is an extra input of the composed program: the body must combine it
    // with an expression of the inputs.
    let accumulator = usize::MAX - 1;
    composer.ops.push(ScalarOp::Input(accumulator));
    let accumulator_id = composer.ops.len() - 1;
    let yielded = composer.emit(op, loops.len(), Some(accumulator_id), reordered)?;
    // A boolean reduction (all / any: `andi` / `ori` of i1) runs on floats 0 and 1 as a min
    // or a max; its result is a float tensor its readers compare with 0.
    let mut as_float = false;
    let (combiner, element) = match composer.ops[yielded] {
        ScalarOp::IntBinary(f @ (scalar::IntBinary::And | scalar::IntBinary::Or), a, b) => {
            let other = if a == accumulator_id { b } else { a };
            if a != accumulator_id && b != accumulator_id {
                return Err(Unconvertible(
                    "a reduction whose body does not combine the accumulator with one value".into(),
                ));
            }
            composer.ops.push(ScalarOp::Float(1.0f32.to_bits()));
            composer.ops.push(ScalarOp::Float(0.0f32.to_bits()));
            let n = composer.ops.len();
            composer.ops.push(ScalarOp::Select(other, n - 2, n - 1));
            as_float = true;
            let combiner = if f == scalar::IntBinary::And {
                Combiner::Min
            } else {
                Combiner::Max
            };
            (combiner, composer.ops.len() - 1)
        }
        ScalarOp::Binary(f, a, b) => {
            let combiner = match f {
                Binary::Add => Combiner::Add,
                Binary::Mul => Combiner::Mul,
                Binary::Max | Binary::MaxNum => Combiner::Max,
                Binary::Min | Binary::MinNum => Combiner::Min,
                _ => {
                    return Err(Unconvertible(format!(
                        "a reduction combining with {}",
                        f.mlir()
                    )))
                }
            };
            let other = if a == accumulator_id {
                b
            } else if b == accumulator_id {
                a
            } else {
                return Err(Unconvertible(
                    "a reduction whose body does not combine the accumulator with one value".into(),
                ));
            };
            (combiner, other)
        }
        _ => {
            return Err(Unconvertible(
                "a reduction whose body is not add, mul, max or min of the accumulator and a value"
                    .into(),
            ))
        }
    };
    // The per-element part must not read the accumulator.
    let mut cone = vec![element];
    let mut seen = BTreeSet::new();
    while let Some(n) = cone.pop() {
        if n == accumulator_id {
            return Err(Unconvertible(
                "a reduction whose per-element part reads the accumulator".into(),
            ));
        }
        if seen.insert(n) {
            cone.extend(composer.ops[n].operands());
        }
    }
    // The accumulator op is dead in the element program: make it a harmless constant.
    composer.ops[accumulator_id] = ScalarOp::Float(0);
    let init: Value = op
        .operand(inputs_count + used)
        .map_err(|_| Unconvertible("a reduction without an init".into()))?;
    let init = reduction_init(init, combiner)?;
    if !as_float {
        super::ir::check_ipu_tensor(result_value, "the result").map_err(Unconvertible)?;
    }
    let (inputs, body, fused) = composer.finish(element, &shape)?;
    Ok(Rewrite {
        root: op,
        interior: fused,
        replacement: Replacement::Reduce {
            inputs,
            body,
            combiner,
            init,
            loop_shape: shape,
            as_float,
        },
        kind: "reduce",
        result: used,
    })
}

/// What a reduction's init adds: nothing when it is the combiner's identity, else the
/// constant or the tensor to combine with the reduced value.
#[derive(Clone)]
pub enum ReductionInit<'c, 'a> {
    Identity,
    Splat(f64),
    Tensor(Value<'c, 'a>),
}

fn reduction_init<'c, 'a>(
    init: Value<'c, 'a>,
    combiner: Combiner,
) -> Result<ReductionInit<'c, 'a>, Unconvertible> {
    if let Some(fill) = produced_by(init, "linalg.fill") {
        let value: Value = fill
            .operand(0)
            .map_err(|_| Unconvertible("a fill without a value".into()))?;
        // A float, or a boolean (true is 1, as the boolean reductions compute).
        let attribute =
            produced_by(value, "arith.constant").and_then(|c| c.attribute("value").ok());
        let number = attribute
            .and_then(|a| melior::ir::attribute::FloatAttribute::try_from(a).ok())
            .map(|a| a.value())
            .or_else(|| {
                attribute
                    .and_then(|a| melior::ir::attribute::IntegerAttribute::try_from(a).ok())
                    .map(|i| if i.value() != 0 { 1.0 } else { 0.0 })
            })
            .ok_or_else(|| Unconvertible("the reduction's fill value is not a constant".into()))?;
        let identity = combiner.identity();
        // Frontends fill a max with the lowest finite float, not -inf: the same for finite data.
        let is_identity = number == identity
            || (combiner == Combiner::Max && number <= -3.0e38)
            || (combiner == Combiner::Min && number >= 3.0e38);
        return Ok(if is_identity {
            ReductionInit::Identity
        } else {
            ReductionInit::Splat(number)
        });
    }
    if produced_by(init, "tensor.empty").is_some() {
        return Err(Unconvertible(
            "a reduction into an uninitialized tensor.empty".into(),
        ));
    }
    Ok(ReductionInit::Tensor(init))
}

/// The map body `a <combiner> b` of two inputs.
pub fn combine_body(combiner: Combiner) -> ScalarProgram {
    let f = match combiner {
        Combiner::Add => Binary::Add,
        Combiner::Mul => Binary::Mul,
        Combiner::Max => Binary::Max,
        Combiner::Min => Binary::Min,
    };
    ScalarProgram {
        inputs: 2,
        indices: 0,
        ops: vec![
            ScalarOp::Input(0),
            ScalarOp::Input(1),
            ScalarOp::Binary(f, 0, 1),
        ],
        result: 2,
    }
}

/// The static shape of `op`'s first result.
fn result_shape(op: OperationRef) -> Result<Vec<i64>, Unconvertible> {
    let result: Value = op
        .result(0)
        .map_err(|_| Unconvertible("it has no result".into()))?
        .into();
    shape_of(result.r#type()).ok_or_else(|| Unconvertible("the result has no static shape".into()))
}

/// A splat `arith.constant` tensor as the scalar constant of its element type.
fn splat_leaf(value: Value) -> Option<ScalarOp> {
    use melior::ir::attribute::{FloatAttribute, IntegerAttribute};
    let constant = produced_by(value, "arith.constant")?;
    let raw = constant.attribute("value").ok()?.to_raw();
    // SAFETY: `raw` is a live attribute; the splat element is read only from a dense
    // elements attribute that is a splat.
    let element = unsafe {
        if !mlir_sys::mlirAttributeIsADenseElements(raw)
            || !mlir_sys::mlirDenseElementsAttrIsSplat(raw)
        {
            return None;
        }
        melior::ir::Attribute::from_raw(mlir_sys::mlirDenseElementsAttrGetSplatValue(raw))
    };
    match element_kind(value)? {
        scalar::ScalarType::Float => FloatAttribute::try_from(element)
            .ok()
            .map(|f| ScalarOp::Float((f.value() as f32).to_bits())),
        scalar::ScalarType::Int => IntegerAttribute::try_from(element)
            .ok()
            .map(|i| ScalarOp::Int(i.value())),
        scalar::ScalarType::Bool => IntegerAttribute::try_from(element)
            .ok()
            .map(|i| ScalarOp::Bool(i.value() != 0)),
    }
}
