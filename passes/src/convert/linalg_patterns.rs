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

use std::collections::BTreeSet;
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

use super::ir::{close, produced_by, shape_of, split_heads_weight, users, DenseConstant};
use super::{Replacement, Rewrite};

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
enum MapResult {
    Dim(usize),
    Zero,
}

/// The results of each map of an `indexing_maps` attribute, read from its printed form
/// (`[affine_map<(d0, d1) -> (d0, 0)>, ...]`); `None` for anything but dims and zeros.
fn indexing_maps(op: OperationRef) -> Option<Vec<Vec<MapResult>>> {
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
fn reduction_loops(op: OperationRef) -> Option<Vec<bool>> {
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
        let inside: BTreeSet<usize> = self
            .interior
            .iter()
            .chain(std::iter::once(&self.root))
            .map(|op| op.to_raw().ptr as usize)
            .collect();
        for op in &self.interior {
            for result in op.results() {
                if users(result.into())
                    .iter()
                    .any(|user| !inside.contains(&(user.to_raw().ptr as usize)))
                {
                    return None;
                }
            }
        }
        Some(Rewrite {
            root: self.root,
            interior: self.interior,
            replacement,
            kind,
        })
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

/// The input of `softmax(x)` over the last axis whose root is `root`:
/// `exp(x - max(x)) / sum(exp(x - max(x)))` (the max over the last axis, optional), the
/// division also as a multiply by a reciprocal.
fn softmax<'c, 'a>(root: OperationRef<'c, 'a>) -> Option<Rewrite<'c, 'a>> {
    let mut matcher = Matcher::new(root);
    let input = softmax_input(&mut matcher)?;
    matcher.finish(Replacement::Softmax { input }, "softmax")
}

fn softmax_input<'c, 'a>(matcher: &mut Matcher<'c, 'a>) -> Option<Value<'c, 'a>> {
    let output = matcher.output()?;
    let rank = shape(result(matcher.root)?)?.len();
    let last = Idx::Loop(rank.checked_sub(1)?);
    let (scale, factors) = matcher.product(&output);
    let (exponential, sum) = match factors.as_slice() {
        [(e, false), (s, true)] | [(s, true), (e, false)] => (e.clone(), s.clone()),
        [(a, false), (b, false)] => {
            let mut found = None;
            for (e, r) in [(a, b), (b, a)] {
                let mark = matcher.interior.len();
                if let (
                    Some(Def::Apply(Fun::Reciprocal, arguments)),
                    Some(Def::Apply(Fun::Exp, _)),
                ) = (matcher.def(r), matcher.def(e))
                {
                    if let [s] = arguments.as_slice() {
                        found = Some((e.clone(), s.clone()));
                        break;
                    }
                }
                matcher.interior.truncate(mark);
            }
            found?
        }
        _ => return None,
    };
    if scale != 1.0 {
        return None;
    }
    let Some(Def::Apply(Fun::Exp, arguments)) = matcher.def(&exponential) else {
        return None;
    };
    let [argument] = arguments.as_slice() else {
        return None;
    };
    let x = match matcher.def(argument) {
        Some(Def::Apply(Fun::Sub, operands)) => {
            let [x, max] = operands.as_slice() else {
                return None;
            };
            let Some(Def::Reduce {
                fun: Fun::Max,
                index,
                body,
            }) = matcher.def(max)
            else {
                return None;
            };
            if !matcher.equivalent(&body, &substitute(x, last, Idx::Red(index))) {
                return None;
            }
            x.clone()
        }
        _ => argument.clone(),
    };
    let Some(Def::Reduce {
        fun: Fun::Add,
        index,
        body,
    }) = matcher.def(&sum)
    else {
        return None;
    };
    if !matcher.equivalent(&body, &substitute(&exponential, last, Idx::Red(index))) {
        return None;
    }
    let input = whole_tensor(&x, rank)?;
    (input.r#type() == result(matcher.root)?.r#type()).then_some(input)
}

/// GeLU, exact (`0.5 x (1 + erf(x / sqrt 2))`) or tanh-approximated
/// (`0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`), in any association of the products.
fn gelu<'c, 'a>(root: OperationRef<'c, 'a>) -> Option<Rewrite<'c, 'a>> {
    let mut matcher = Matcher::new(root);
    let output = matcher.output()?;
    let rank = shape(result(root)?)?.len();
    let (scale, factors) = matcher.product(&output);
    if !close(scale, 0.5) {
        return None;
    }
    let [(first, false), (second, false)] = factors.as_slice() else {
        return None;
    };
    for (x, term) in [(first, second), (second, first)] {
        let Some(input) = whole_tensor(x, rank) else {
            continue;
        };
        if input.r#type() != result(root)?.r#type() {
            continue;
        }
        let mark = matcher.interior.len();
        if let Some(tanh) = gelu_term(&mut matcher, x, term) {
            return matcher.finish(Replacement::Gelu { input, tanh }, "gelu");
        }
        matcher.interior.truncate(mark);
    }
    None
}

/// `term = 1 + erf(x / sqrt 2)` (Some(false)) or `1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))`
/// (Some(true)).
fn gelu_term<'c, 'a>(
    matcher: &mut Matcher<'c, 'a>,
    x: &Node<'c, 'a>,
    term: &Node<'c, 'a>,
) -> Option<bool> {
    let Some(Def::Apply(Fun::Add, operands)) = matcher.def(term) else {
        return None;
    };
    let inner = match operands.as_slice() {
        [Node::Const(one), inner] | [inner, Node::Const(one)] if close(*one, 1.0) => inner,
        _ => return None,
    };
    match matcher.def(inner)? {
        Def::Apply(Fun::Erf, arguments) => {
            let (scale, factors) = matcher.product(arguments.first()?);
            let [(factor, false)] = factors.as_slice() else {
                return None;
            };
            (close(scale, FRAC_1_SQRT_2) && matcher.equivalent(factor, x)).then_some(false)
        }
        Def::Apply(Fun::Tanh, arguments) => {
            cubic_argument(matcher, x, arguments.first()?).then_some(true)
        }
        _ => None,
    }
}

/// `argument = sqrt(2/pi) (x + 0.044715 x^3)`, with `x^3` as `x * x * x` or `pow(x, 3)`, and
/// the constant also distributed (`sqrt(2/pi) x + sqrt(2/pi) 0.044715 x^3`) is not accepted.
fn cubic_argument<'c, 'a>(
    matcher: &mut Matcher<'c, 'a>,
    x: &Node<'c, 'a>,
    argument: &Node<'c, 'a>,
) -> bool {
    let (outer, factors) = matcher.product(argument);
    let [(sum, false)] = factors.as_slice() else {
        return false;
    };
    if !close(outer, SQRT_2_OVER_PI) {
        return false;
    }
    let Some(Def::Apply(Fun::Add, operands)) = matcher.def(sum) else {
        return false;
    };
    let [a, b] = operands.as_slice() else {
        return false;
    };
    for (linear, cubic) in [(a, b), (b, a)] {
        if !matcher.equivalent(linear, x) {
            continue;
        }
        let (coefficient, powers) = matcher.product(cubic);
        if !close(coefficient, GELU_CUBIC) {
            continue;
        }
        let cubed = match powers.as_slice() {
            [(p, false), (q, false), (r, false)] => {
                matcher.equivalent(p, x) && matcher.equivalent(q, x) && matcher.equivalent(r, x)
            }
            [(power, false)] => is_power(matcher, power, x, 3.0),
            _ => false,
        };
        if cubed {
            return true;
        }
    }
    false
}

/// `node = pow(base, exponent)`.
fn is_power<'c, 'a>(
    matcher: &mut Matcher<'c, 'a>,
    node: &Node<'c, 'a>,
    base: &Node<'c, 'a>,
    exponent: f64,
) -> bool {
    match matcher.def(node) {
        Some(Def::Apply(Fun::Pow, arguments)) => match arguments.as_slice() {
            [actual, Node::Const(power)] => *power == exponent && matcher.equivalent(actual, base),
            _ => false,
        },
        _ => false,
    }
}

/// A constant vector along the last axis: a dense constant read at `[0, ..., 0, Loop(last)]`
/// (or at `[Loop(last)]`) holding `width` elements of `like`'s element type, as a `[width]`
/// constant.
fn last_axis_vector<'c, 'a>(
    node: &Node<'c, 'a>,
    rank: usize,
    width: i64,
    like: Type<'c>,
) -> Option<super::ir::DenseConstant<'c>> {
    let Node::Tensor { value, map } = node else {
        return None;
    };
    let (last, rest) = map.split_last()?;
    if *last != Idx::Loop(rank - 1) || rest.iter().any(|index| *index != Idx::Zero) {
        return None;
    }
    let constant = DenseConstant::of(*value)?;
    let elements: i64 = shape_of(constant.r#type())?.iter().product();
    let element = RankedTensorType::try_from(like).ok()?.element();
    if elements != width
        || RankedTensorType::try_from(constant.r#type())
            .ok()?
            .element()
            != element
    {
        return None;
    }
    let context_ref = value.r#type().context();
    // SAFETY: the context outlives the pass run.
    let context: &Context = unsafe { context_ref.to_ref() };
    let vector_type = Type::parse(context, &format!("tensor<{width}x{element}>"))?;
    Some(constant.reshaped(vector_type))
}

fn splat_vector<'c>(like: Type<'c>, width: i64, number: f64) -> Option<DenseConstant<'c>> {
    let context_ref = like.context();
    // SAFETY: the context outlives the pass run.
    let context: &Context = unsafe { context_ref.to_ref() };
    let element = RankedTensorType::try_from(like).ok()?.element();
    let attribute = Attribute::parse(
        context,
        &format!("dense<{number:.17e}> : tensor<{width}x{element}>"),
    )?;
    Some(DenseConstant { attribute })
}

/// Layer norm over the last axis of `x` (size `n`):
/// `(x - sum(x) / n) * rsqrt(sum((x - mean)^2) / n + eps) * gamma + beta` (also with
/// `/ sqrt(... + eps)`), the affine part optional, the products in any order, the sums as
/// `linalg.reduce` or generic reductions over the last axis.
fn layer_norm<'c, 'a>(root: OperationRef<'c, 'a>) -> Option<Rewrite<'c, 'a>> {
    let mut matcher = Matcher::new(root);
    let output = matcher.output()?;
    let out_type = result(root)?.r#type();
    let out_shape = shape(result(root)?)?;
    let rank = out_shape.len();
    let width = *out_shape.last()?;
    // An optional `+ beta`.
    let mut candidates = Vec::new();
    if let Some(Def::Apply(Fun::Add, operands)) = matcher.def(&output) {
        if let [a, b] = operands.as_slice() {
            for (product, beta) in [(a, b), (b, a)] {
                let mark = matcher.interior.len();
                let resolved = matcher.resolve(beta.clone());
                let vector = match resolved {
                    Node::Const(number) => splat_vector(out_type, width, number),
                    _ => last_axis_vector(&resolved, rank, width, out_type),
                };
                if let Some(beta) = vector {
                    candidates.push((product.clone(), Some(beta), matcher.interior.clone()));
                }
                matcher.interior.truncate(mark);
            }
        }
    }
    candidates.push((output, None, Vec::new()));
    for (product, beta, interior) in candidates {
        let mut attempt = Matcher {
            root,
            interior,
            next_reduction: matcher.next_reduction,
        };
        if let Some((input, gamma, epsilon)) =
            normalization(&mut attempt, &product, rank, width, out_type)
        {
            let beta = match beta {
                Some(beta) => beta,
                None => splat_vector(out_type, width, 0.0)?,
            };
            return attempt.finish(
                Replacement::LayerNorm {
                    input,
                    gamma,
                    beta,
                    epsilon,
                },
                "layer_norm",
            );
        }
    }
    None
}

/// `product = (x - mean) * rsqrt(var + eps) [* gamma]`: x, gamma (ones without one), epsilon.
fn normalization<'c, 'a>(
    matcher: &mut Matcher<'c, 'a>,
    product: &Node<'c, 'a>,
    rank: usize,
    width: i64,
    out_type: Type<'c>,
) -> Option<(Value<'c, 'a>, super::ir::DenseConstant<'c>, f64)> {
    let last = Idx::Loop(rank - 1);
    let (scale, factors) = matcher.product(product);
    let mut centered = None;
    let mut deviation = None;
    let mut gamma = None;
    for (factor, inverted) in factors {
        if !inverted && gamma.is_none() {
            if let Some(vector) = last_axis_vector(&factor, rank, width, out_type) {
                gamma = Some(vector);
                continue;
            }
        }
        let mark = matcher.interior.len();
        match matcher.def(&factor) {
            Some(Def::Apply(Fun::Sub, operands)) if !inverted && centered.is_none() => {
                centered = Some((factor, operands));
            }
            Some(Def::Apply(Fun::Rsqrt, operands)) if !inverted && deviation.is_none() => {
                deviation = Some(operands.into_iter().next()?);
            }
            Some(Def::Apply(Fun::Sqrt, operands)) if inverted && deviation.is_none() => {
                deviation = Some(operands.into_iter().next()?);
            }
            _ => {
                matcher.interior.truncate(mark);
                return None;
            }
        }
    }
    let (centered, operands) = centered?;
    let [x, mean] = operands.as_slice() else {
        return None;
    };
    let input = whole_tensor(x, rank)?;
    if input.r#type() != out_type {
        return None;
    }
    // mean = sum(x over the last axis) / n
    let (mean_scale, mean_factors) = matcher.product(mean);
    let [(sum, false)] = mean_factors.as_slice() else {
        return None;
    };
    if !close(mean_scale, 1.0 / width as f64) {
        return None;
    }
    let Some(Def::Reduce {
        fun: Fun::Add,
        index,
        body,
    }) = matcher.def(sum)
    else {
        return None;
    };
    if !matcher.equivalent(&body, &substitute(x, last, Idx::Red(index))) {
        return None;
    }
    // deviation = sum((x - mean)^2 over the last axis) / n + eps
    let Some(Def::Apply(Fun::Add, shifted)) = matcher.def(&deviation?) else {
        return None;
    };
    let (variance, epsilon) = match shifted.as_slice() {
        [Node::Const(epsilon), variance] | [variance, Node::Const(epsilon)] => {
            (variance.clone(), *epsilon)
        }
        _ => return None,
    };
    let (variance_scale, variance_factors) = matcher.product(&variance);
    let [(squares, false)] = variance_factors.as_slice() else {
        return None;
    };
    if !close(variance_scale, 1.0 / width as f64) {
        return None;
    }
    let Some(Def::Reduce {
        fun: Fun::Add,
        index,
        body,
    }) = matcher.def(squares)
    else {
        return None;
    };
    let centered_at = substitute(&centered, last, Idx::Red(index));
    let (square_scale, square_factors) = matcher.product(&body);
    let squared = match square_factors.as_slice() {
        [(a, false), (b, false)] => {
            matcher.equivalent(a, &centered_at) && matcher.equivalent(b, &centered_at)
        }
        [(power, false)] => is_power(matcher, power, &centered_at, 2.0),
        _ => false,
    };
    if !squared || square_scale != 1.0 {
        return None;
    }
    let gamma = match gamma {
        Some(gamma) if scale == 1.0 => gamma,
        Some(_) => return None,
        None => splat_vector(out_type, width, scale)?,
    };
    Some((input, gamma, epsilon))
}

/// A matmul / batch_matmul with the plain indexing maps into a zero fill: its two inputs.
fn plain_matmul<'c, 'a>(op: OperationRef<'c, 'a>) -> Option<(Value<'c, 'a>, Value<'c, 'a>)> {
    if !matches!(
        op_name(&op).as_str(),
        "linalg.matmul" | "linalg.batch_matmul"
    ) {
        return None;
    }
    if let Ok(maps) = op.attribute("indexing_maps") {
        let context_ref = op.context();
        // SAFETY: the context outlives the pass run.
        let context: &Context = unsafe { context_ref.to_ref() };
        let batched = op_name(&op) == "linalg.batch_matmul";
        if Attribute::parse(context, super::linalg::default_maps(batched)) != Some(maps) {
            return None;
        }
    }
    let init = op.operand(2).ok()?;
    if !identity_init(init, Fun::Add) {
        return None;
    }
    Some((op.operand(0).ok()?, op.operand(1).ok()?))
}

/// Scaled dot-product attention over heads:
/// `batch_matmul(softmax(batch_matmul(q, transpose(k, [0, 2, 1])) * c), v)` with a constant
/// `c` (or a division by one; none: scale 1) becomes `ipu.attention(q, k, v) {scale = c}`.
/// The root is the last batch_matmul.
fn attention<'c, 'a>(root: OperationRef<'c, 'a>) -> Option<Rewrite<'c, 'a>> {
    let (probs, value) = plain_matmul(root)?;
    if op_name(&root) != "linalg.batch_matmul" {
        return None;
    }
    let softmax_root = super::ir::producer(probs)?;
    let mut inner = Matcher::new(softmax_root);
    let logits = if op_name(&softmax_root) == "linalg.softmax" {
        let rank = shape(probs)?.len() as i64;
        (ipu_dialects::ipu::int_attribute(&softmax_root, "dimension")? == rank - 1)
            .then(|| softmax_root.operand(0).ok())??
    } else {
        softmax_input(&mut inner)?
    };
    let mut matcher = Matcher::new(root);
    matcher.take(softmax_root);
    matcher.interior.extend(inner.interior);
    let rank = shape(logits)?.len();
    let (scale, factors) = matcher.product(&Node::Tensor {
        value: logits,
        map: identity(rank),
    });
    let [(scores, false)] = factors.as_slice() else {
        return None;
    };
    let scores = whole_tensor(scores, rank)?;
    let scores_op = super::ir::producer(scores)?;
    let (query, transposed_key) = plain_matmul(scores_op)?;
    matcher.take(scores_op);
    let transpose = produced_by(transposed_key, "linalg.transpose")?;
    if i64_array(transpose.attribute("permutation").ok()?)? != [0, 2, 1] {
        return None;
    }
    matcher.take(transpose);
    let key = transpose.operand(0).ok()?;
    for operand in [query, key, value] {
        if shape(operand)?.len() != 3 {
            return None;
        }
    }
    matcher.finish(
        Replacement::Attention {
            query,
            key,
            value,
            scale,
        },
        "attention",
    )
}

/// The head split of a projection at batch 1:
/// `collapse_shape(transpose(expand_shape(batch_matmul(x, W), [1, S, H, Dh]), [0, 2, 1, 3]),
/// [H, S, Dh])` with `x: [1, S, D]` and a constant f32 `W: [1, D, H * Dh]` becomes
/// `ipu.matmul(x, W')`, `W'[h, d, j] = W[0, d, h * Dh + j]` (`[H, D, Dh]`; the batch axis of
/// `x` broadcasts against the heads). The root is the collapse_shape.
fn head_split<'c, 'a>(root: OperationRef<'c, 'a>) -> Option<Rewrite<'c, 'a>> {
    let output = result(root)?;
    let out_shape = shape(output)?;
    let [heads, s, dh] = out_shape.as_slice() else {
        return None;
    };
    let mut matcher = Matcher::new(root);
    let transpose = produced_by(root.operand(0).ok()?, "linalg.transpose")?;
    if i64_array(transpose.attribute("permutation").ok()?)? != [0, 2, 1, 3]
        || shape(result(transpose)?)? != [1, *heads, *s, *dh]
    {
        return None;
    }
    matcher.take(transpose);
    let split = produced_by(transpose.operand(0).ok()?, "tensor.expand_shape")?;
    if shape(result(split)?)? != [1, *s, *heads, *dh] {
        return None;
    }
    matcher.take(split);
    let projection_op = super::ir::producer(split.operand(0).ok()?)?;
    let (x, weight) = plain_matmul(projection_op)?;
    matcher.take(projection_op);
    let d = *shape(x)?.last()?;
    if shape(x)? != [1, *s, d] || shape(weight)? != [1, d, heads * dh] {
        return None;
    }
    let weight = split_heads_weight(root, weight, *heads, d, *dh)?;
    matcher.finish(Replacement::MatmulConstant { lhs: x, weight }, "head_split")
}

/// The head merge into the output projection at batch 1:
/// `batch_matmul(collapse_shape(transpose(expand_shape(a, [1, H, S, Dh]), [0, 2, 1, 3]),
/// [1, S, H * Dh]), W)` with `a: [H, S, Dh]` and a constant `W: [1, H * Dh, E]`: the sum over
/// heads of `a[h] @ W[h * Dh .. (h + 1) * Dh]` (see [`Replacement::HeadMerge`]).
fn head_merge<'c, 'a>(root: OperationRef<'c, 'a>) -> Option<Rewrite<'c, 'a>> {
    let (merged, weight) = plain_matmul(root)?;
    let mut matcher = Matcher::new(root);
    let merge = produced_by(merged, "tensor.collapse_shape")?;
    matcher.take(merge);
    let transpose = produced_by(merge.operand(0).ok()?, "linalg.transpose")?;
    if i64_array(transpose.attribute("permutation").ok()?)? != [0, 2, 1, 3] {
        return None;
    }
    matcher.take(transpose);
    let unmerge = produced_by(transpose.operand(0).ok()?, "tensor.expand_shape")?;
    matcher.take(unmerge);
    let input = unmerge.operand(0).ok()?;
    let in_shape = shape(input)?;
    let [heads, s, dh] = in_shape.as_slice() else {
        return None;
    };
    let e = *shape(weight)?.last()?;
    if shape(result(unmerge)?)? != [1, *heads, *s, *dh]
        || shape(merged)? != [1, *s, heads * dh]
        || shape(weight)? != [1, heads * dh, e]
    {
        return None;
    }
    let context_ref = root.context();
    // SAFETY: the context outlives the pass run.
    let context: &Context = unsafe { context_ref.to_ref() };
    let per_head = Type::parse(
        context,
        &format!(
            "tensor<{heads}x{dh}x{e}x{}>",
            RankedTensorType::try_from(weight.r#type()).ok()?.element()
        ),
    )?;
    let weight = DenseConstant::of(weight)?.reshaped(per_head).attribute;
    matcher.finish(Replacement::HeadMerge { input, weight }, "head_merge")
}

/// A `linalg.generic` computing `a + b` of two inputs whose indexing maps broadcast the way
/// NumPy does (trailing axes aligned, size-1 axes read at 0), as frontends emit a bias add:
/// its inputs.
pub(super) fn broadcasting_add<'c, 'a>(
    op: OperationRef<'c, 'a>,
) -> Option<(Value<'c, 'a>, Value<'c, 'a>)> {
    let mut matcher = Matcher::new(op);
    let output = matcher.output()?;
    let rank = shape(result(op)?)?.len();
    let Some(Def::Apply(Fun::Add, arguments)) = matcher.def(&output) else {
        return None;
    };
    if !matcher.interior.is_empty() {
        return None;
    }
    let aligned = |node: &Node<'c, 'a>| -> Option<Value<'c, 'a>> {
        let Node::Tensor { value, map } = node else {
            return None;
        };
        let value_shape = shape(*value)?;
        let offset = rank.checked_sub(map.len())?;
        (value_shape.len() == map.len()
            && map.iter().enumerate().all(|(axis, index)| {
                *index == Idx::Loop(offset + axis)
                    || (*index == Idx::Zero && value_shape[axis] == 1)
            }))
        .then_some(*value)
    };
    match arguments.as_slice() {
        [a, b] => Some((aligned(a)?, aligned(b)?)),
        _ => None,
    }
}
