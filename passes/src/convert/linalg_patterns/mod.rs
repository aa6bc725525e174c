//! Recognition of the linalg-on-tensors decompositions of layer norm, softmax, GeLU and
//! attention, and of the head split / merge around attention, for `convert-linalg-to-ipu`.
//!
//! Frontends write the same computation in several linalg forms: named elementwise ops with
//! `linalg.broadcast` and `linalg.reduce` (linalg-on-tensors), or `linalg.generic` ops whose
//! indexing maps broadcast and whose bodies hold the arithmetic (torch-mlir, IREE), often fused
//! (a whole GeLU in one body, a sum of squares in one reduction). The matchers do not look at
//! ops directly: they look at *scalar expressions* ([`Node`]) at a point of the root's iteration
//! space. A tensor operand is an element of a tensor at an index built from the root's loop
//! indices ([`Idx::Loop`]), reduction indices ([`Idx::Red`]) and constant 0 ([`Idx::Zero`]);
//! [`Matcher::def`] expands a node into the operation defining it (through named ops,
//! broadcasts, generic bodies and reductions alike). So `x - broadcast(reduce_max(x, [2]), [2])`
//! and a generic `subf(%x, %max)` with map `(d0, d1, d2) -> (d0, d1)` for the max are the same
//! expression, and a max taken over the wrong axis is a different one.
//!
//! Every op a match looks through is recorded as interior; a match counts only if no interior
//! value is used outside the pattern (then the whole pattern can be erased).

use std::rc::Rc;

use ipu_dialects::ipu::{i64_array, op_name};
use melior::{
    ir::{
        attribute::FloatAttribute,
        block::{BlockArgument, BlockLike},
        operation::OperationLike,
        r#type::{RankedTensorType, ShapedTypeLike, TypeLike},
        Attribute, OperationRef, RegionLike, Type, Value, ValueLike,
    },
    Context,
};

use super::ir::{
    close, merge_heads_weight, produced_by, shape_of, split_heads_weight, users, DenseConstant,
};
use super::{Replacement, Rewrite};

mod ops;

use ops::{attention, gelu, head_merge, head_split, layer_norm, softmax};

const FRAC_1_SQRT_2: f64 = std::f64::consts::FRAC_1_SQRT_2;
/// sqrt(2/pi), the tanh GeLU approximation's scale.
const SQRT_2_OVER_PI: f64 = 0.797_884_560_802_865_4;
const GELU_CUBIC: f64 = 0.044_715;
/// Expansion depth limit for structural comparisons.
const MAX_DEPTH: usize = 24;

/// One index of a tensor element, in terms of the root's iteration space.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Idx {
    /// The root's loop index (its result's axis) of this number.
    Loop(usize),
    /// The index of the reduction of this id.
    Red(u32),
    /// The constant index 0 (a size-1 axis).
    Zero,
}

/// A scalar expression at a point of the root's iteration space.
#[derive(Clone)]
enum Node<'c, 'a> {
    /// `value[map]`.
    Tensor {
        value: Value<'c, 'a>,
        map: Vec<Idx>,
    },
    /// A value computed inside the body of `generic`, whose loop `k` runs at `env[k]`.
    Scalar {
        value: Value<'c, 'a>,
        generic: OperationRef<'c, 'a>,
        env: Rc<Vec<Idx>>,
    },
    Const(f64),
    /// Something no matcher can look into (a generic's output argument, a captured value).
    Opaque,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Fun {
    Add,
    Sub,
    Mul,
    Div,
    Max,
    Exp,
    Erf,
    Tanh,
    Rsqrt,
    Sqrt,
    Neg,
    Reciprocal,
    Pow,
}

impl Fun {
    /// The function of a named linalg elementwise op.
    fn of_named(name: &str) -> Option<Fun> {
        Some(match name {
            "linalg.add" => Fun::Add,
            "linalg.sub" => Fun::Sub,
            "linalg.mul" => Fun::Mul,
            "linalg.div" => Fun::Div,
            "linalg.max" => Fun::Max,
            "linalg.exp" => Fun::Exp,
            "linalg.erf" => Fun::Erf,
            "linalg.tanh" => Fun::Tanh,
            "linalg.rsqrt" => Fun::Rsqrt,
            "linalg.sqrt" => Fun::Sqrt,
            "linalg.negf" => Fun::Neg,
            "linalg.reciprocal" => Fun::Reciprocal,
            "linalg.powf" => Fun::Pow,
            _ => return None,
        })
    }

    /// The function of a scalar op in a generic body.
    fn of_scalar(name: &str) -> Option<Fun> {
        Some(match name {
            "arith.addf" => Fun::Add,
            "arith.subf" => Fun::Sub,
            "arith.mulf" => Fun::Mul,
            "arith.divf" => Fun::Div,
            "arith.maximumf" | "arith.maxnumf" => Fun::Max,
            "math.exp" => Fun::Exp,
            "math.erf" => Fun::Erf,
            "math.tanh" => Fun::Tanh,
            "math.rsqrt" => Fun::Rsqrt,
            "math.sqrt" => Fun::Sqrt,
            "arith.negf" => Fun::Neg,
            "math.powf" => Fun::Pow,
            _ => return None,
        })
    }

    fn commutative(self) -> bool {
        matches!(self, Fun::Add | Fun::Mul | Fun::Max)
    }
}

/// What defines a node.
enum Def<'c, 'a> {
    Apply(Fun, Vec<Node<'c, 'a>>),
    /// `fun` over the reduction index `Red(index)` of `body`.
    Reduce {
        fun: Fun,
        index: u32,
        body: Node<'c, 'a>,
    },
}

/// One result of an indexing map: a loop dimension or the constant 0.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum MapResult {
    Dim(usize),
    Zero,
}

/// The results of each map of an `indexing_maps` attribute, read from its printed form
/// (`[affine_map<(d0, d1) -> (d0, 0)>, ...]`); `None` for anything but dims and zeros.
pub(super) fn indexing_maps(op: OperationRef) -> Option<Vec<Vec<MapResult>>> {
    let text = op.attribute("indexing_maps").ok()?.to_string();
    let mut maps = Vec::new();
    for part in text.split("affine_map<").skip(1) {
        let results = part.split("->").nth(1)?;
        let inner = results.trim().strip_prefix('(')?;
        let inner = &inner[..inner.find(')')?];
        let mut map = Vec::new();
        for result in inner.split(',').map(str::trim).filter(|r| !r.is_empty()) {
            if result == "0" {
                map.push(MapResult::Zero);
            } else {
                map.push(MapResult::Dim(result.strip_prefix('d')?.parse().ok()?));
            }
        }
        maps.push(map);
    }
    Some(maps)
}

/// Whether each loop of a generic is a reduction.
pub(super) fn reduction_loops(op: OperationRef) -> Option<Vec<bool>> {
    let text = op.attribute("iterator_types").ok()?.to_string();
    let inner = text.trim().strip_prefix('[')?.strip_suffix(']')?;
    Some(
        inner
            .split(',')
            .map(str::trim)
            .filter(|part| !part.is_empty())
            .map(|part| part.contains("reduction"))
            .collect(),
    )
}

fn result<'c, 'a>(op: OperationRef<'c, 'a>) -> Option<Value<'c, 'a>> {
    op.result(0).ok().map(Value::from)
}

fn shape(value: Value) -> Option<Vec<i64>> {
    shape_of(value.r#type())
}

fn identity(rank: usize) -> Vec<Idx> {
    (0..rank).map(Idx::Loop).collect()
}

/// The body block of a single-region op (raw, for identity comparisons) and its yielded value.
fn body_yield<'c, 'a>(op: OperationRef<'c, 'a>) -> Option<(usize, Value<'c, 'a>)> {
    let region = op.region(0).ok()?;
    let block = region.first_block()?;
    let terminator = block.terminator()?;
    if terminator.operand_count() != 1 {
        return None;
    }
    // SAFETY: the yielded value lives as long as the op's body, which is part of the IR.
    let value = unsafe { Value::from_raw(terminator.operand(0).ok()?.to_raw()) };
    Some((block.to_raw().ptr as usize, value))
}

/// `value` as (owner block address, argument number) if it is a block argument.
fn block_argument(value: Value) -> Option<(usize, usize)> {
    // Checked first: melior's failing `try_from` prints the value (see `ir::producer`).
    // SAFETY: `value` is live; the predicate only reads its kind.
    if !unsafe { mlir_sys::mlirValueIsABlockArgument(value.to_raw()) } {
        return None;
    }
    let argument = BlockArgument::try_from(value).ok()?;
    Some((
        argument.owner().to_raw().ptr as usize,
        argument.argument_number(),
    ))
}

/// The float value of a scalar `arith.constant`.
fn scalar_constant(value: Value) -> Option<f64> {
    let constant = produced_by(value, "arith.constant")?;
    FloatAttribute::try_from(constant.attribute("value").ok()?)
        .ok()
        .map(|attribute| attribute.value())
}

/// Whether `init` holds the identity of `fun` everywhere (a fill or a splat constant).
fn identity_init(init: Value, fun: Fun) -> bool {
    let number = match produced_by(init, "linalg.fill") {
        Some(fill) => fill.operand(0).ok().and_then(scalar_constant),
        None => DenseConstant::of(init).and_then(|constant| constant.splat()),
    };
    match (fun, number) {
        (Fun::Add, Some(number)) => number == 0.0,
        (Fun::Max, Some(number)) => number == f64::NEG_INFINITY || number <= -3.0e38,
        _ => false,
    }
}

/// A match in progress: the root and the ops looked through so far.
pub(super) struct Matcher<'c, 'a> {
    root: OperationRef<'c, 'a>,
    interior: Vec<OperationRef<'c, 'a>>,
    next_reduction: u32,
}

impl<'c, 'a> Matcher<'c, 'a> {
    fn new(root: OperationRef<'c, 'a>) -> Self {
        Matcher {
            root,
            interior: Vec::new(),
            next_reduction: 0,
        }
    }

    fn take(&mut self, op: OperationRef<'c, 'a>) {
        if op != self.root && !self.interior.contains(&op) {
            self.interior.push(op);
        }
    }

    fn fresh_reduction(&mut self) -> u32 {
        self.next_reduction += 1;
        self.next_reduction
    }

    /// The root's result at the root's own loop indices.
    fn output(&self) -> Option<Node<'c, 'a>> {
        let value = result(self.root)?;
        Some(Node::Tensor {
            map: identity(shape(value)?.len()),
            value,
        })
    }

    /// Looks through splat constants, broadcasts and copying generics.
    fn resolve(&mut self, node: Node<'c, 'a>) -> Node<'c, 'a> {
        let mut node = node;
        for _ in 0..MAX_DEPTH {
            let Node::Tensor { value, map } = &node else {
                return node;
            };
            if let Some(splat) = DenseConstant::of(*value).and_then(|constant| constant.splat()) {
                return Node::Const(splat);
            }
            if let Some(broadcast) = produced_by(*value, "linalg.broadcast") {
                let Some(dimensions) = broadcast.attribute("dimensions").ok().and_then(i64_array)
                else {
                    return node;
                };
                let Ok(input) = broadcast.operand(0) else {
                    return node;
                };
                let kept = map
                    .iter()
                    .enumerate()
                    .filter(|(axis, _)| !dimensions.contains(&(*axis as i64)))
                    .map(|(_, index)| *index)
                    .collect();
                self.take(broadcast);
                node = Node::Tensor {
                    value: input,
                    map: kept,
                };
                continue;
            }
            if let Some(generic) = produced_by(*value, "linalg.generic") {
                // A generic that only copies (broadcasts) its single input.
                if generic.operand_count() == 2 && generic.result_count() == 1 {
                    if let (Some((block, yielded)), Some(env)) =
                        (body_yield(generic), generic_env(generic, map, &mut 0))
                    {
                        let parallel = reduction_loops(generic)
                            .is_some_and(|loops| loops.iter().all(|reduction| !reduction));
                        if parallel && block_argument(yielded) == Some((block, 0)) {
                            if let Some(copied) = input_node(generic, 0, &env) {
                                self.take(generic);
                                node = copied;
                                continue;
                            }
                        }
                    }
                }
            }
            return node;
        }
        node
    }

    /// The operation defining `node`, recording the ops it looks through.
    fn def(&mut self, node: &Node<'c, 'a>) -> Option<Def<'c, 'a>> {
        match self.resolve(node.clone()) {
            Node::Const(_) | Node::Opaque => None,
            Node::Scalar {
                value,
                generic,
                env,
            } => {
                let op = super::ir::producer(value)?;
                let fun = Fun::of_scalar(&op_name(&op))?;
                let arguments = op
                    .operands()
                    .map(|operand| scalar_node(generic, &env, operand).map(splat_folded))
                    .collect::<Option<Vec<_>>>()?;
                Some(Def::Apply(fun, arguments))
            }
            Node::Tensor { value, map } => {
                let op = super::ir::producer(value)?;
                let name = op_name(&op);
                if let Some(fun) = Fun::of_named(&name) {
                    let inputs = op.operand_count().checked_sub(1)?;
                    let result_shape = shape(value)?;
                    let mut arguments = Vec::new();
                    for index in 0..inputs {
                        let input = op.operand(index).ok()?;
                        if shape(input)? != result_shape {
                            return None;
                        }
                        arguments.push(splat_folded(Node::Tensor {
                            value: input,
                            map: map.clone(),
                        }));
                    }
                    self.take(op);
                    return Some(Def::Apply(fun, arguments));
                }
                match name.as_str() {
                    "linalg.reduce" => self.reduce_def(op, &map),
                    "linalg.generic" => self.generic_def(op, &map),
                    _ => None,
                }
            }
        }
    }

    /// `linalg.reduce ins(x) outs(init) dimensions = [d] (addf | maximumf)`.
    fn reduce_def(&mut self, op: OperationRef<'c, 'a>, map: &[Idx]) -> Option<Def<'c, 'a>> {
        let dimensions = i64_array(op.attribute("dimensions").ok()?)?;
        let [dimension] = dimensions.as_slice() else {
            return None;
        };
        if op.operand_count() != 2 {
            return None;
        }
        let (input, init) = (op.operand(0).ok()?, op.operand(1).ok()?);
        let (block, yielded) = body_yield(op)?;
        let combine = super::ir::producer(yielded)?;
        let fun = Fun::of_scalar(&op_name(&combine))?;
        let mut arguments: Vec<_> = combine
            .operands()
            .map(block_argument)
            .collect::<Option<_>>()?;
        arguments.sort();
        if !matches!(fun, Fun::Add | Fun::Max)
            || arguments != [(block, 0), (block, 1)]
            || !identity_init(init, fun)
        {
            return None;
        }
        let index = self.fresh_reduction();
        let mut input_map = map.to_vec();
        if *dimension as usize > input_map.len() {
            return None;
        }
        input_map.insert(*dimension as usize, Idx::Red(index));
        self.take(op);
        Some(Def::Reduce {
            fun,
            index,
            body: Node::Tensor {
                value: input,
                map: input_map,
            },
        })
    }

    /// A `linalg.generic` with one result: elementwise (its yielded expression) or a reduction
    /// over one loop (`yield combine(expression, %out)` into an identity init).
    fn generic_def(&mut self, op: OperationRef<'c, 'a>, map: &[Idx]) -> Option<Def<'c, 'a>> {
        if op.result_count() != 1 {
            return None;
        }
        let inputs = op.operand_count() - 1;
        let mut fresh = self.next_reduction;
        let env = generic_env(op, map, &mut fresh)?;
        let reductions: Vec<u32> = env
            .iter()
            .filter_map(|index| match index {
                Idx::Red(id) if *id > self.next_reduction => Some(*id),
                _ => None,
            })
            .collect();
        self.next_reduction = fresh;
        let (block, yielded) = body_yield(op)?;
        let env = Rc::new(env);
        match reductions.as_slice() {
            [] => {
                let node = scalar_node(op, &env, yielded)?;
                if let Node::Scalar { .. } = node {
                    let def = self.def(&node)?;
                    self.take(op);
                    Some(def)
                } else {
                    None
                }
            }
            [index] => {
                let combine = super::ir::producer(yielded)?;
                let fun = Fun::of_scalar(&op_name(&combine))?;
                if !matches!(fun, Fun::Add | Fun::Max) {
                    return None;
                }
                let (a, b) = (combine.operand(0).ok()?, combine.operand(1).ok()?);
                let output = (block, inputs);
                let body = if block_argument(b) == Some(output) {
                    a
                } else if block_argument(a) == Some(output) {
                    b
                } else {
                    return None;
                };
                if !identity_init(op.operand(inputs).ok()?, fun) {
                    return None;
                }
                let body = scalar_node(op, &env, body)?;
                self.take(op);
                Some(Def::Reduce {
                    fun,
                    index: *index,
                    body,
                })
            }
            _ => None,
        }
    }

    /// `node` as a product: its constant factor and its other factors, each with whether it
    /// divides (`a / b` is `a * b^-1`). Looks through the node's own multiply and through nested
    /// multiplies and divisions whose value is used once.
    fn product(&mut self, node: &Node<'c, 'a>) -> (f64, Vec<(Node<'c, 'a>, bool)>) {
        let mut constant = 1.0;
        let mut factors = Vec::new();
        let mut pending = vec![(node.clone(), false, true)];
        while let Some((factor, inverted, first)) = pending.pop() {
            let factor = self.resolve(factor);
            if let Node::Const(number) = factor {
                constant *= if inverted { 1.0 / number } else { number };
                continue;
            }
            if first || single_use(&factor) {
                let mark = self.interior.len();
                match self.def(&factor) {
                    Some(Def::Apply(Fun::Mul, arguments)) if arguments.len() == 2 => {
                        pending.push((arguments[1].clone(), inverted, false));
                        pending.push((arguments[0].clone(), inverted, false));
                        continue;
                    }
                    Some(Def::Apply(Fun::Div, arguments)) if arguments.len() == 2 => {
                        pending.push((arguments[1].clone(), !inverted, false));
                        pending.push((arguments[0].clone(), inverted, false));
                        continue;
                    }
                    _ => self.interior.truncate(mark),
                }
            }
            factors.push((factor, inverted));
        }
        (constant, factors)
    }

    /// Whether `a` and `b` are the same expression (identical, or structurally equal with the
    /// reduction indices of `a` renamed to those of `b` by `renames`).
    fn equivalent(&mut self, a: &Node<'c, 'a>, b: &Node<'c, 'a>) -> bool {
        let mark = self.interior.len();
        let same = self.equivalent_at(a, b, &mut Vec::new(), 0);
        if !same {
            self.interior.truncate(mark);
        }
        same
    }

    fn equivalent_at(
        &mut self,
        a: &Node<'c, 'a>,
        b: &Node<'c, 'a>,
        renames: &mut Vec<(u32, u32)>,
        depth: usize,
    ) -> bool {
        if depth > MAX_DEPTH {
            return false;
        }
        let (a, b) = (self.resolve(a.clone()), self.resolve(b.clone()));
        let same_index = |x: &Idx, y: &Idx, renames: &[(u32, u32)]| match (x, y) {
            (Idx::Red(i), Idx::Red(j)) => i == j || renames.contains(&(*i, *j)),
            _ => x == y,
        };
        let same_indices = |x: &[Idx], y: &[Idx], renames: &[(u32, u32)]| {
            x.len() == y.len() && x.iter().zip(y).all(|(i, j)| same_index(i, j, renames))
        };
        match (&a, &b) {
            (Node::Const(x), Node::Const(y)) => return (x - y).abs() <= 1e-7 * x.abs().max(1.0),
            (Node::Opaque, _) | (_, Node::Opaque) => return false,
            (Node::Tensor { value: x, map: mx }, Node::Tensor { value: y, map: my }) if x == y => {
                return same_indices(mx, my, renames);
            }
            (
                Node::Scalar {
                    value: x,
                    generic: gx,
                    env: ex,
                },
                Node::Scalar {
                    value: y,
                    generic: gy,
                    env: ey,
                },
            ) if x == y && gx == gy => return same_indices(ex, ey, renames),
            _ => {}
        }
        match (self.def(&a), self.def(&b)) {
            (Some(Def::Apply(fa, xa)), Some(Def::Apply(fb, xb))) => {
                if fa != fb || xa.len() != xb.len() {
                    return false;
                }
                let pairwise = |matcher: &mut Self, xb: &[Node<'c, 'a>], renames: &mut _| {
                    xa.iter()
                        .zip(xb)
                        .all(|(x, y)| matcher.equivalent_at(x, y, renames, depth + 1))
                };
                if pairwise(self, &xb, renames) {
                    return true;
                }
                if fa.commutative() && xb.len() == 2 {
                    let swapped = [xb[1].clone(), xb[0].clone()];
                    return pairwise(self, &swapped, renames);
                }
                false
            }
            (
                Some(Def::Reduce {
                    fun: fa,
                    index: ia,
                    body: ba,
                }),
                Some(Def::Reduce {
                    fun: fb,
                    index: ib,
                    body: bb,
                }),
            ) => {
                if fa != fb {
                    return false;
                }
                renames.push((ia, ib));
                self.equivalent_at(&ba, &bb, renames, depth + 1)
            }
            _ => false,
        }
    }

    /// Finishes the match if no interior value escapes the pattern.
    fn finish(
        self,
        replacement: Replacement<'c, 'a>,
        kind: &'static str,
    ) -> Option<Rewrite<'c, 'a>> {
        Rewrite::contained(self.root, self.interior, replacement, kind)
    }
}

/// A splat constant tensor as its number; any other node unchanged.
fn splat_folded<'c, 'a>(node: Node<'c, 'a>) -> Node<'c, 'a> {
    match &node {
        Node::Tensor { value, .. } => {
            match DenseConstant::of(*value).and_then(|constant| constant.splat()) {
                Some(number) => Node::Const(number),
                None => node,
            }
        }
        _ => node,
    }
}

/// Whether the value behind `node` has a single use (so flattening it into a product loses
/// nothing another user needs).
fn single_use(node: &Node) -> bool {
    match node {
        Node::Tensor { value, .. } | Node::Scalar { value, .. } => users(*value).len() == 1,
        _ => false,
    }
}

/// The loop environment of `generic` when its result is read at `map`: loop `k` runs at the
/// index its output map gives it; a reduction loop gets a fresh reduction index.
fn generic_env(generic: OperationRef, map: &[Idx], fresh: &mut u32) -> Option<Vec<Idx>> {
    let maps = indexing_maps(generic)?;
    let reductions = reduction_loops(generic)?;
    let output = maps.last()?;
    if output.len() != map.len() {
        return None;
    }
    let mut env: Vec<Option<Idx>> = vec![None; reductions.len()];
    for (axis, result) in output.iter().enumerate() {
        match result {
            MapResult::Dim(loop_) => *env.get_mut(*loop_)? = Some(map[axis]),
            MapResult::Zero => {}
        }
    }
    env.iter()
        .zip(&reductions)
        .map(|(index, reduction)| match (index, reduction) {
            (Some(index), false) => Some(*index),
            (None, true) => {
                *fresh += 1;
                Some(Idx::Red(*fresh))
            }
            _ => None,
        })
        .collect()
}

/// Input `index` of `generic` read at its loop environment `env`.
fn input_node<'c, 'a>(
    generic: OperationRef<'c, 'a>,
    index: usize,
    env: &[Idx],
) -> Option<Node<'c, 'a>> {
    let maps = indexing_maps(generic)?;
    let map = maps
        .get(index)?
        .iter()
        .map(|result| match result {
            MapResult::Dim(loop_) => env.get(*loop_).copied(),
            MapResult::Zero => Some(Idx::Zero),
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Node::Tensor {
        value: generic.operand(index).ok()?,
        map,
    })
}

/// A value used in `generic`'s body as a node: an input argument is the input tensor at its
/// indexing map; a float constant is a constant; an op result in the body is a scalar node.
fn scalar_node<'c, 'a>(
    generic: OperationRef<'c, 'a>,
    env: &Rc<Vec<Idx>>,
    value: Value<'c, 'a>,
) -> Option<Node<'c, 'a>> {
    let (block, _) = body_yield(generic)?;
    if let Some((owner, number)) = block_argument(value) {
        if owner != block {
            return Some(Node::Opaque);
        }
        if number < generic.operand_count() - generic.result_count() {
            return input_node(generic, number, env);
        }
        return Some(Node::Opaque);
    }
    if let Some(number) = scalar_constant(value) {
        return Some(Node::Const(number));
    }
    let op = super::ir::producer(value)?;
    let in_body = op
        .block()
        .is_some_and(|owner| owner.to_raw().ptr as usize == block);
    Some(if in_body {
        Node::Scalar {
            value,
            generic,
            env: env.clone(),
        }
    } else {
        Node::Opaque
    })
}

/// `node` with index `from` replaced by `to` (the same expression at another point).
fn substitute<'c, 'a>(node: &Node<'c, 'a>, from: Idx, to: Idx) -> Node<'c, 'a> {
    let swap = |indices: &[Idx]| {
        indices
            .iter()
            .map(|index| if *index == from { to } else { *index })
            .collect::<Vec<_>>()
    };
    match node {
        Node::Tensor { value, map } => Node::Tensor {
            value: *value,
            map: swap(map),
        },
        Node::Scalar {
            value,
            generic,
            env,
        } => Node::Scalar {
            value: *value,
            generic: *generic,
            env: Rc::new(swap(env)),
        },
        other => other.clone(),
    }
}

/// The tensor of a node that is a whole tensor at the root's loop indices (rank `rank`).
fn whole_tensor<'c, 'a>(node: &Node<'c, 'a>, rank: usize) -> Option<Value<'c, 'a>> {
    match node {
        Node::Tensor { value, map } if *map == identity(rank) => Some(*value),
        _ => None,
    }
}

/// The pattern whose root is `op`, if any.
pub(super) fn recognize<'c, 'a>(op: OperationRef<'c, 'a>) -> Option<Rewrite<'c, 'a>> {
    match op_name(&op).as_str() {
        "linalg.matmul" | "linalg.batch_matmul" => attention(op).or_else(|| head_merge(op)),
        "tensor.collapse_shape" => head_split(op),
        "linalg.fill" | "linalg.broadcast" | "linalg.transpose" | "linalg.reduce"
        | "linalg.softmax" => None,
        name if name.starts_with("linalg.") => {
            layer_norm(op).or_else(|| softmax(op)).or_else(|| gelu(op))
        }
        _ => None,
    }
}
