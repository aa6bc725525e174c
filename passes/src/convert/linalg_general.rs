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

/// Whether `op` is a generic with every loop parallel, one result and the identity output map.
fn is_elementwise(op: OperationRef) -> bool {
    if op_name(&op) != "linalg.generic" || op.result_count() != 1 {
        return false;
    }
    let (Some(loops), Some(maps)) = (reduction_loops(op), indexing_maps(op)) else {
        return false;
    };
    let identity: Vec<MapResult> = (0..loops.len()).map(MapResult::Dim).collect();
    !loops.iter().any(|&r| r) && maps.last() == Some(&identity)
}

/// Whether elementwise generic `producer` is fused into its users (erased with them): each is
/// a generic this import converts (not one covered by a pattern). A float result is fused
/// into its one user when that user reads it through the identity map of its loops (a value
/// several ops read is computed once; a broadcast read would recompute it per copy), or
/// through any map when the producer only copies its input (a broadcast); a boolean or
/// integer result (a mask, an index comparison: ipu tensors are floats) is recomputed in each
/// of its users, whatever map they read it through.
pub fn fused_into_user(producer: OperationRef, covered: &BTreeSet<usize>) -> bool {
    if !is_elementwise(producer) || covered.contains(&address(&producer)) {
        return false;
    }
    let Ok(result) = producer.result(0) else {
        return false;
    };
    let result: Value = result.into();
    let readers = users(result);
    let float = melior::ir::r#type::RankedTensorType::try_from(result.r#type())
        .map(|t| scalar::scalar_type(t.element()) == Some(scalar::ScalarType::Float))
        .unwrap_or(false);
    let Some(first) = readers.first() else {
        return false;
    };
    if float && readers.iter().any(|u| address(u) != address(first)) {
        return false;
    }
    let any_map = !float || copies_its_input(producer);
    readers
        .iter()
        .all(|user| reads_it(*user, result, covered, any_map))
}

/// Whether a generic adds its two inputs (`arith.addf` of its first two block arguments).
fn is_two_input_sum(op: OperationRef) -> bool {
    let Some(block) = op.region(0).ok().and_then(|r| r.first_block()) else {
        return false;
    };
    let Some(first) = block.first_operation() else {
        return false;
    };
    let argument = |i: usize| block.argument(i).ok().map(|a| key(a.into()));
    op.operand_count() == 3
        && op_name(&first) == "arith.addf"
        && first.next_in_block().map(|t| op_name(&t)) == Some("linalg.yield".into())
        && [
            first.operand(0).ok().map(key),
            first.operand(1).ok().map(key),
        ]
        .iter()
        .all(|k| k.is_some() && (*k == argument(0) || *k == argument(1)))
}

/// Whether an elementwise generic's body yields its first input unchanged.
fn copies_its_input(op: OperationRef) -> bool {
    let Some(block) = op.region(0).ok().and_then(|r| r.first_block()) else {
        return false;
    };
    let Some(terminator) = block.terminator() else {
        return false;
    };
    op.operand_count() == 2
        && terminator.operand(0).ok().map(key) == block.argument(0).ok().map(|a| key(a.into()))
}

/// Whether `user` is a generic this import converts that reads `result` through the
/// identity map of its loops (or through any map of loops and zeros when `any_map`).
fn reads_it(user: OperationRef, result: Value, covered: &BTreeSet<usize>, any_map: bool) -> bool {
    if op_name(&user) != "linalg.generic" || covered.contains(&address(&user)) {
        return false;
    }
    if any_map {
        return reduction_loops(user).is_some() && indexing_maps(user).is_some();
    }
    let (Some(loops), Some(user_maps)) = (reduction_loops(user), indexing_maps(user)) else {
        return false;
    };
    let inputs = user.operand_count() - user.result_count();
    let identity: Vec<MapResult> = (0..loops.len()).map(MapResult::Dim).collect();
    let producer_rank = shape_of(result.r#type()).map_or(usize::MAX, |s| s.len());
    producer_rank == loops.len()
        && (0..inputs).all(|k| {
            user.operand(k)
                .map(|v| key(v) != key(result))
                .unwrap_or(true)
                || user_maps.get(k) == Some(&identity)
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
        let boolean = melior::ir::r#type::RankedTensorType::try_from(value.r#type())
            .map(|t| scalar::scalar_type(t.element()) == Some(scalar::ScalarType::Bool))
            .unwrap_or(false);
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

/// Rewrites every f32 `arith.constant` nested in `root` whose value is a `dense_resource`
/// blob (how the PyTorch route stores weights) into a dense elements constant with the same
/// values, which the rest of the compiler reads. Returns how many were rewritten.
pub fn inline_resource_constants(root: OperationRef) -> usize {
    let mut rewritten = 0;
    for op in super::tosa::ops_with_prefix(root, "arith.constant") {
        let Ok(value) = op.attribute("value") else {
            continue;
        };
        let raw = value.to_raw();
        // SAFETY: `raw` is a live attribute; the predicate reads its kind only.
        if !unsafe { mlir_sys::mlirAttributeIsADenseResourceElements(raw) } {
            continue;
        }
        let Ok(result) = op.result(0) else {
            continue;
        };
        let r#type = result.r#type();
        let Ok(tensor) = melior::ir::r#type::RankedTensorType::try_from(r#type) else {
            continue;
        };
        if !tensor.element().is_f32() {
            continue;
        }
        let Some(shape) = shape_of(r#type) else {
            continue;
        };
        let count: i64 = shape.iter().product();
        // SAFETY: the attribute is an f32 dense resource of `count` elements (its type's);
        // each read is within it, and the new attribute copies the values it is given.
        unsafe {
            let values: Vec<f32> = (0..count as isize)
                .map(|pos| mlir_sys::mlirDenseFloatResourceElementsAttrGetValue(raw, pos))
                .collect();
            let dense = mlir_sys::mlirDenseElementsAttrFloatGet(
                r#type.to_raw(),
                count as isize,
                values.as_ptr(),
            );
            let name = mlir_sys::mlirStringRefCreateFromCString(c"value".as_ptr());
            mlir_sys::mlirOperationSetAttributeByName(op.to_raw(), name, dense);
        }
        rewritten += 1;
    }
    rewritten
}

/// The scalar op of a named elementwise linalg op (`linalg.exp`, `linalg.sub`, ...) over its
/// inputs 0 (and 1), if it is one.
fn named_body(short: &str) -> Option<ScalarProgram> {
    use scalar::Unary;
    let unary = |f: Unary| (1, vec![ScalarOp::Input(0), ScalarOp::Unary(f, 0)]);
    let binary = |f: Binary| {
        (
            2,
            vec![
                ScalarOp::Input(0),
                ScalarOp::Input(1),
                ScalarOp::Binary(f, 0, 1),
            ],
        )
    };
    let (inputs, ops) = match short {
        "exp" => unary(Unary::Exp),
        "log" => unary(Unary::Log),
        "abs" => unary(Unary::Abs),
        "ceil" => unary(Unary::Ceil),
        "floor" => unary(Unary::Floor),
        "negf" => unary(Unary::Neg),
        "sqrt" => unary(Unary::Sqrt),
        "rsqrt" => unary(Unary::Rsqrt),
        "tanh" => unary(Unary::Tanh),
        "erf" => unary(Unary::Erf),
        "reciprocal" => (
            1,
            vec![
                ScalarOp::Float(1.0f32.to_bits()),
                ScalarOp::Input(0),
                ScalarOp::Binary(Binary::Div, 0, 1),
            ],
        ),
        "square" => (
            1,
            vec![ScalarOp::Input(0), ScalarOp::Binary(Binary::Mul, 0, 0)],
        ),
        "add" => binary(Binary::Add),
        "sub" => binary(Binary::Sub),
        "mul" => binary(Binary::Mul),
        "div" => binary(Binary::Div),
        "max" => binary(Binary::Max),
        "min" => binary(Binary::Min),
        "powf" => binary(Binary::Pow),
        _ => return None,
    };
    let result = ops.len() - 1;
    Some(ScalarProgram {
        inputs,
        indices: 0,
        ops,
        result,
    })
}

/// The conversion of a named elementwise linalg op (`linalg.exp`, `linalg.sub`, ...): a map
/// of its scalar op, its inputs read as they are (named elementwise ops have the result's
/// shape); `None` when `short` is no such op.
pub fn named_elementwise_rewrite<'c, 'a>(
    op: OperationRef<'c, 'a>,
    short: &str,
) -> Option<Result<Rewrite<'c, 'a>, Unconvertible>> {
    let body = named_body(short)?;
    Some((|| {
        let shape = result_shape(op)?;
        let identity: Vec<MapResult> = (0..shape.len()).map(MapResult::Dim).collect();
        let inputs = (0..body.inputs)
            .map(|k| {
                let value: Value = op
                    .operand(k)
                    .map_err(|_| Unconvertible(format!("missing input #{k}")))?;
                map_input(value, &identity, &shape)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let replacement = if short == "add" {
            Replacement::BroadcastingAdd { inputs }
        } else {
            Replacement::Map { inputs, body }
        };
        Ok(Rewrite::single(op, replacement, "map"))
    })())
}

/// The static shape of `op`'s first result.
fn result_shape(op: OperationRef) -> Result<Vec<i64>, Unconvertible> {
    let result: Value = op
        .result(0)
        .map_err(|_| Unconvertible("it has no result".into()))?
        .into();
    shape_of(result.r#type()).ok_or_else(|| Unconvertible("the result has no static shape".into()))
}

/// A `linalg.broadcast` of any value: its input read through the map that skips the
/// broadcast `dimensions`, brought to the result (`ipu.reshape` and `ipu.broadcast`).
pub fn broadcast_rewrite<'c, 'a>(
    op: OperationRef<'c, 'a>,
    dimensions: &[i64],
) -> Result<Rewrite<'c, 'a>, Unconvertible> {
    let input: Value = op
        .operand(0)
        .map_err(|_| Unconvertible("missing input".into()))?;
    let shape = result_shape(op)?;
    let map: Vec<MapResult> = (0..shape.len())
        .filter(|d| !dimensions.contains(&(*d as i64)))
        .map(MapResult::Dim)
        .collect();
    let input = map_input(input, &map, &shape)?;
    Ok(Rewrite::single(
        op,
        Replacement::Map {
            inputs: vec![input],
            body: ScalarProgram::identity(),
        },
        "broadcast",
    ))
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
    let element_type = melior::ir::r#type::RankedTensorType::try_from(value.r#type())
        .ok()?
        .element();
    match scalar::scalar_type(element_type)? {
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

/// Whether a one-input `body` computes GeLU: `Some(false)` the exact form
/// `0.5 x (1 + erf(x / sqrt 2))`, `Some(true)` the tanh form, `None` neither. Decided by
/// evaluating the body (in f64, its constants as the f32 they are) at 2,001 points over
/// [-20, 20] and at the ends of the f16 range: every value within 2e-6 relative (1e-6 absolute
/// near 0) of the form. Frontends' expansions (IREE's f32 erf polynomial) agree to ~1e-7;
/// a body that differs anywhere on that grid (another coefficient, a missing scale) does not.
pub fn gelu_form(body: &ScalarProgram) -> Option<bool> {
    if body.inputs != 1 || body.indices != 0 {
        return None;
    }
    let exact = |x: f64| 0.5 * x * (1.0 + scalar::erf(x / std::f64::consts::SQRT_2));
    let tanh = |x: f64| {
        let inner = (2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x * x * x);
        0.5 * x * (1.0 + inner.tanh())
    };
    let points = (0..=2000)
        .map(|i| -20.0 + 40.0 * f64::from(i) / 2000.0)
        .chain([-65504.0, -100.0, 100.0, 65504.0, 1e-4, -1e-4]);
    let matches = |form: &dyn Fn(f64) -> f64| {
        points.clone().all(|x| {
            let want = form(x);
            let got = body.eval(&[x], &[]);
            (got - want).abs() <= 2e-6 * want.abs().max(0.5)
        })
    };
    if matches(&exact) {
        Some(false)
    } else if matches(&tanh) {
        Some(true)
    } else {
        None
    }
}

/// The float elementwise generics fused into another op's map although several ops read
/// them: walking back from each generic not yet placed (in reverse program order), its
/// *cone* grows by every float elementwise producer read through the identity map whose
/// readers are all in the cone already (a GeLU or a layer norm an exporter wrote as a web
/// of generics sharing intermediates: one map, the shared values computed once in its body).
/// The cone's members are erased with its root; the root converts as usual.
pub fn absorbed_cones(generics: &[OperationRef], covered: &BTreeSet<usize>) -> BTreeSet<usize> {
    let mut absorbed = BTreeSet::new();
    let mut placed = BTreeSet::new();
    for root in generics.iter().rev() {
        if op_name(root) != "linalg.generic"
            || placed.contains(&address(root))
            || covered.contains(&address(root))
        {
            continue;
        }
        let mut cone: Vec<OperationRef> = vec![*root];
        let mut members: BTreeSet<usize> = [address(root)].into();
        let mut grew = true;
        while grew {
            grew = false;
            let mut added = Vec::new();
            for member in &cone {
                let inputs = member.operand_count().saturating_sub(member.result_count());
                for k in 0..inputs {
                    let Ok(value) = member.operand(k) else {
                        continue;
                    };
                    let Some(producer) = produced_by(value, "linalg.generic") else {
                        continue;
                    };
                    let at = address(&producer);
                    // A sum of two inputs (a bias add) stays its own ipu.add: the add
                    // strategies run it in place on a GEMM's result.
                    if members.contains(&at)
                        || !is_elementwise(producer)
                        || is_two_input_sum(producer)
                        || covered.contains(&at)
                        || added.iter().any(|a: &OperationRef| address(a) == at)
                    {
                        continue;
                    }
                    let Ok(result) = producer.result(0) else {
                        continue;
                    };
                    let result: Value = result.into();
                    let float = melior::ir::r#type::RankedTensorType::try_from(result.r#type())
                        .map(|t| {
                            scalar::scalar_type(t.element()) == Some(scalar::ScalarType::Float)
                        })
                        .unwrap_or(false);
                    let readers = users(result);
                    let inside = !readers.is_empty()
                        && readers.iter().all(|u| {
                            members.contains(&address(u)) && reads_it(*u, result, covered, false)
                        });
                    // A boolean or integer producer is recomputed in its readers anyway
                    // (fused_into_user): inside the cone, the floats it reads can join too.
                    let recomputed = !float && fused_into_user(producer, covered);
                    if (float || recomputed) && inside {
                        added.push(producer);
                    }
                }
            }
            for producer in added {
                members.insert(address(&producer));
                let float = producer
                    .result(0)
                    .ok()
                    .and_then(|r| melior::ir::r#type::RankedTensorType::try_from(r.r#type()).ok())
                    .map(|t| scalar::scalar_type(t.element()) == Some(scalar::ScalarType::Float))
                    .unwrap_or(false);
                if float {
                    absorbed.insert(address(&producer));
                }
                cone.push(producer);
                grew = true;
            }
        }
        placed.extend(members);
    }
    absorbed
}

/// The conversion of a TOSA elementwise op or reduction no pattern covered: a map of its
/// scalar op over its inputs (TOSA broadcasts size-1 axes of equal-rank operands), or an
/// `ipu.reduce` over its `axis` (kept as size 1, as TOSA keeps it); `None` when `short` is
/// no such op.
pub fn tosa_rewrite<'c, 'a>(
    op: OperationRef<'c, 'a>,
    short: &str,
) -> Option<Result<Rewrite<'c, 'a>, Unconvertible>> {
    use scalar::Unary;
    let unary = |ops: Vec<ScalarOp>| (1usize, ops);
    let (inputs, ops) = match short {
        "add" | "sub" | "mul" | "maximum" | "minimum" | "pow" => {
            let f = match short {
                "add" => Binary::Add,
                "sub" => Binary::Sub,
                "mul" => Binary::Mul,
                "maximum" => Binary::Max,
                "minimum" => Binary::Min,
                _ => Binary::Pow,
            };
            (
                2,
                vec![
                    ScalarOp::Input(0),
                    ScalarOp::Input(1),
                    ScalarOp::Binary(f, 0, 1),
                ],
            )
        }
        "rsqrt" => unary(vec![ScalarOp::Input(0), ScalarOp::Unary(Unary::Rsqrt, 0)]),
        "exp" => unary(vec![ScalarOp::Input(0), ScalarOp::Unary(Unary::Exp, 0)]),
        "log" => unary(vec![ScalarOp::Input(0), ScalarOp::Unary(Unary::Log, 0)]),
        "tanh" => unary(vec![ScalarOp::Input(0), ScalarOp::Unary(Unary::Tanh, 0)]),
        "erf" => unary(vec![ScalarOp::Input(0), ScalarOp::Unary(Unary::Erf, 0)]),
        "abs" => unary(vec![ScalarOp::Input(0), ScalarOp::Unary(Unary::Abs, 0)]),
        "negate" => unary(vec![ScalarOp::Input(0), ScalarOp::Unary(Unary::Neg, 0)]),
        "reciprocal" => unary(vec![
            ScalarOp::Float(1.0f32.to_bits()),
            ScalarOp::Input(0),
            ScalarOp::Binary(Binary::Div, 0, 1),
        ]),
        "sigmoid" => unary(vec![
            ScalarOp::Input(0),
            ScalarOp::Unary(Unary::Neg, 0),
            ScalarOp::Unary(Unary::Exp, 1),
            ScalarOp::Float(1.0f32.to_bits()),
            ScalarOp::Binary(Binary::Add, 3, 2),
            ScalarOp::Binary(Binary::Div, 3, 4),
        ]),
        // select(cond, a, b): the condition is held as floats 0 and 1.
        "select" => (
            3,
            vec![
                ScalarOp::Input(0),
                ScalarOp::Float(0),
                ScalarOp::CmpF(scalar::FloatPredicate::Une, 0, 1),
                ScalarOp::Input(1),
                ScalarOp::Input(2),
                ScalarOp::Select(2, 3, 4),
            ],
        ),
        "reduce_sum" | "reduce_max" | "reduce_min" | "reduce_product" => {
            return Some(tosa_reduce(op, short));
        }
        _ => return None,
    };
    let result = ops.len() - 1;
    let body = ScalarProgram {
        inputs,
        indices: 0,
        ops,
        result,
    };
    Some((|| {
        if short == "mul" {
            let shift = op.operand(2).ok().and_then(super::ir::splat_of);
            if shift.is_some_and(|s| s != 0.0) {
                return Err(Unconvertible(
                    "a mul with a non-zero shift (integer arithmetic)".into(),
                ));
            }
        }
        let shape = result_shape(op)?;
        let inputs = (0..inputs)
            .map(|k| {
                let value: Value = op
                    .operand(k)
                    .map_err(|_| Unconvertible(format!("missing operand #{k}")))?;
                let own = shape_of(value.r#type())
                    .ok_or_else(|| Unconvertible("an operand without a static shape".into()))?;
                if own.len() != shape.len() {
                    return Err(Unconvertible(format!(
                        "operand #{k} of rank {} for a rank-{} result (TOSA broadcasts equal ranks)",
                        own.len(),
                        shape.len()
                    )));
                }
                let map: Vec<MapResult> = own
                    .iter()
                    .enumerate()
                    .map(|(axis, &size)| {
                        if size == shape[axis] {
                            MapResult::Dim(axis)
                        } else {
                            MapResult::Zero
                        }
                    })
                    .collect();
                map_input(value, &map, &shape)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let sum = short == "add"
            && (0..shape.len()).all(|a| inputs.iter().any(|i| i.expanded[a] == shape[a]));
        let replacement = if sum {
            Replacement::BroadcastingAdd { inputs }
        } else {
            Replacement::Map { inputs, body }
        };
        Ok(Rewrite::single(op, replacement, "map"))
    })())
}

/// A TOSA reduction over its `axis`, kept as size 1: the axis moved last (a transpose when it
/// is not), `ipu.reduce`, and the size-1 axis put back by a reshape.
fn tosa_reduce<'c, 'a>(
    op: OperationRef<'c, 'a>,
    short: &str,
) -> Result<Rewrite<'c, 'a>, Unconvertible> {
    let combiner = match short {
        "reduce_sum" => Combiner::Add,
        "reduce_max" => Combiner::Max,
        "reduce_min" => Combiner::Min,
        _ => Combiner::Mul,
    };
    let input: Value = op
        .operand(0)
        .map_err(|_| Unconvertible("missing input".into()))?;
    let own = shape_of(input.r#type())
        .ok_or_else(|| Unconvertible("an input without a static shape".into()))?;
    let axis = op
        .attribute("axis")
        .ok()
        .and_then(|a| melior::ir::attribute::IntegerAttribute::try_from(a).ok())
        .map(|a| a.value())
        .and_then(|a| usize::try_from(a).ok())
        .filter(|&a| a < own.len())
        .ok_or_else(|| {
            Unconvertible("expected an 'axis' attribute within the input's rank".into())
        })?;
    let mut order: Vec<usize> = (0..own.len()).filter(|&a| a != axis).collect();
    order.push(axis);
    let map: Vec<MapResult> = (0..own.len())
        .map(|a| MapResult::Dim(order.iter().position(|&o| o == a).unwrap_or(a)))
        .collect();
    let loop_shape: Vec<i64> = order.iter().map(|&a| own[a]).collect();
    let input = map_input(input, &map, &loop_shape)?;
    Ok(Rewrite::single(
        op,
        Replacement::Reduce {
            inputs: vec![input],
            body: ScalarProgram::identity(),
            combiner,
            init: ReductionInit::Identity,
            loop_shape,
            as_float: false,
        },
        "reduce",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use scalar::Unary;

    fn float(x: f32) -> ScalarOp {
        ScalarOp::Float(x.to_bits())
    }

    /// `0.5 x (1 + erf(x * c))`.
    fn erf_gelu(c: f32) -> ScalarProgram {
        ScalarProgram {
            inputs: 1,
            indices: 0,
            ops: vec![
                ScalarOp::Input(0),
                float(c),
                ScalarOp::Binary(Binary::Mul, 0, 1),
                ScalarOp::Unary(Unary::Erf, 2),
                float(1.0),
                ScalarOp::Binary(Binary::Add, 3, 4),
                float(0.5),
                ScalarOp::Binary(Binary::Mul, 0, 6),
                ScalarOp::Binary(Binary::Mul, 7, 5),
            ],
            result: 8,
        }
    }

    #[test]
    fn gelu_is_recognized_by_what_the_body_computes() {
        assert_eq!(
            gelu_form(&erf_gelu(std::f32::consts::FRAC_1_SQRT_2)),
            Some(false)
        );
        // erf(x) without the 1/sqrt(2) scale, or a slightly wrong scale, is not GeLU.
        assert_eq!(gelu_form(&erf_gelu(1.0)), None);
        assert_eq!(gelu_form(&erf_gelu(0.7)), None);
        // The tanh form: 0.5 x (1 + tanh(k (x + 0.044715 x^3))).
        let tanh = |cubic: f32| ScalarProgram {
            inputs: 1,
            indices: 0,
            ops: vec![
                ScalarOp::Input(0),
                ScalarOp::Binary(Binary::Mul, 0, 0),
                ScalarOp::Binary(Binary::Mul, 1, 0),
                float(cubic),
                ScalarOp::Binary(Binary::Mul, 2, 3),
                ScalarOp::Binary(Binary::Add, 0, 4),
                float(0.797_884_6),
                ScalarOp::Binary(Binary::Mul, 5, 6),
                ScalarOp::Unary(Unary::Tanh, 7),
                float(1.0),
                ScalarOp::Binary(Binary::Add, 8, 9),
                float(0.5),
                ScalarOp::Binary(Binary::Mul, 0, 11),
                ScalarOp::Binary(Binary::Mul, 12, 10),
            ],
            result: 13,
        };
        assert_eq!(gelu_form(&tanh(0.044_715)), Some(true));
        assert_eq!(gelu_form(&tanh(0.447_15)), None);
        // Two inputs, or element indices, are never GeLU.
        let mut two = erf_gelu(std::f32::consts::FRAC_1_SQRT_2);
        two.inputs = 2;
        assert_eq!(gelu_form(&two), None);
    }
}
