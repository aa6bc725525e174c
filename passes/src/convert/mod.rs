//! Import of upstream models into `ipu` ops: `convert-tosa-to-ipu` ([`tosa`]) and
//! `convert-linalg-to-ipu` ([`linalg`]).
//!
//! Both passes work in two phases so that a failure leaves the IR untouched: first every op of
//! the source dialect is classified (a direct conversion, part of a recognized decomposition, or
//! an error naming the op and why), then, only if nothing failed, the [`Rewrite`]s are applied
//! in program order and the replaced ops erased.

pub use crate::ir;
mod conv;
pub(crate) mod general_build;
pub mod linalg;
mod linalg_general;
mod linalg_patterns;
mod slices;
pub mod tosa;
mod tosa_patterns;

use std::collections::BTreeMap;

use ipu_dialects::graph::scalar::ScalarProgram;
use ipu_dialects::ipu::{
    AddOp, AttentionOp, BroadcastOp, Combiner, ConcatOp, GeluOp, LayerNormOp, MatmulOp,
    RearrangeOp, ReshapeOp, SliceOp, SoftmaxOp,
};
use melior::{
    ir::{
        attribute::AttributeLike,
        block::BlockLike,
        operation::OperationBuilder,
        operation::OperationLike,
        r#type::{ShapedTypeLike, TypeLike},
        Attribute, BlockRef, Identifier, Location, Operation, OperationRef, Type, Value, ValueLike,
    },
    Context,
};

use self::ir::{key, DenseConstant};

/// Why an op cannot be converted: reported as `'<op>' op cannot be converted to ipu: <reason>`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("cannot be converted to ipu: {0}")]
pub struct Unconvertible(pub String);

/// What replaces the root op of a [`Rewrite`].
#[derive(Clone)]
pub enum Replacement<'c, 'a> {
    /// `ipu.matmul(lhs, rhs)`, plus `ipu.add` of `addend` when the source accumulated into it.
    Matmul {
        lhs: Value<'c, 'a>,
        rhs: Value<'c, 'a>,
        addend: Option<Addend<'c, 'a>>,
    },
    Add {
        lhs: Value<'c, 'a>,
        rhs: Value<'c, 'a>,
    },
    /// `ipu.rearrange` with an axis permutation.
    Transpose {
        input: Value<'c, 'a>,
        permutation: Vec<i64>,
    },
    Gelu {
        input: Value<'c, 'a>,
        tanh: bool,
    },
    Softmax {
        input: Value<'c, 'a>,
    },
    LayerNorm {
        input: Value<'c, 'a>,
        gamma: DenseConstant<'c>,
        beta: DenseConstant<'c>,
        epsilon: f64,
    },
    /// `arith.constant` holding `value` (from `tosa.const`, or a constant folded by an import).
    Constant {
        value: Attribute<'c>,
    },
    /// A `tosa.reshape` of an activation: `ipu.reshape`.
    Reshape {
        input: Value<'c, 'a>,
    },
    /// The root's result is `value` itself (an identity, e.g. a transpose with the identity
    /// permutation).
    Forward {
        value: Value<'c, 'a>,
    },
    /// `ipu.matmul(lhs, constant weight)` (a weight rearranged by the import, e.g. split into
    /// heads).
    MatmulConstant {
        lhs: Value<'c, 'a>,
        weight: Attribute<'c>,
    },
    /// `ipu.attention(query, key, value) {scale}`.
    Attention {
        query: Value<'c, 'a>,
        key: Value<'c, 'a>,
        value: Value<'c, 'a>,
        scale: f64,
    },
    /// The head merge folded into the output projection:
    /// `sum_h input[h] @ weight[h]` for `input: [H, S, Dh]`, `weight: [H, Dh, E]`, as
    /// `rearrange(ones[1, H] @ rearrange(input @ weight, [1, 0, 2]), [1, 0, 2])` (ipu has no
    /// reshape or reduction op; the ones-matmul sums the per-head products).
    HeadMerge {
        input: Value<'c, 'a>,
        weight: Attribute<'c>,
    },
    /// `ipu.map` of `body` over `inputs`, each brought to the result's shape.
    Map {
        inputs: Vec<linalg_general::MapInput<'c, 'a>>,
        body: ScalarProgram,
    },
    /// `ipu.reduce` over the last axis of the map of `body` over `inputs` (in the loop shape,
    /// the result's axes then the reduced one), combined with `init` and reshaped to the
    /// result (the reduced axis dropped).
    Reduce {
        inputs: Vec<linalg_general::MapInput<'c, 'a>>,
        body: ScalarProgram,
        combiner: Combiner,
        init: linalg_general::ReductionInit<'c, 'a>,
        loop_shape: Vec<i64>,
        /// A boolean reduction, computed (and its result held) as floats 0 and 1.
        as_float: bool,
    },
    /// `ipu.add` of two inputs brought to the result's rank but not broadcast (the add
    /// broadcasts them).
    BroadcastingAdd {
        inputs: Vec<linalg_general::MapInput<'c, 'a>>,
    },
    /// A 1x1 convolution (NHWC input, OHWI weight `[O, 1, 1, K]`): the input's rows as
    /// `[N * H * W, K]`, `ipu.matmul` with the weight as `[O, K]` transposed, plus the bias,
    /// reshaped to the result.
    Conv1x1 {
        input: Value<'c, 'a>,
        weight: DenseConstant<'c>,
        bias: Value<'c, 'a>,
    },
    /// `ipu.reshape` of `input` to the result's shape.
    IpuReshape {
        input: Value<'c, 'a>,
    },
    /// A 2-D convolution: a matmul of the input's windows `[N * OH * OW, KH * KW * C]` with
    /// the filter as `[KH * KW * C, F]`, plus the addend (the init), in the result's layout
    /// (see `convert::conv`).
    Conv2d {
        input: Value<'c, 'a>,
        filter: Value<'c, 'a>,
        addend: Option<Addend<'c, 'a>>,
        layout: conv::ConvLayout,
        strides: [i64; 2],
        dilations: [i64; 2],
    },
    /// `ipu.slice` of `input` (`tensor.extract_slice`): the window of `sizes` from `offsets` by
    /// `strides`, reshaped to the result (a rank-reducing slice drops size-1 axes).
    Slice {
        input: Value<'c, 'a>,
        offsets: Vec<i64>,
        sizes: Vec<i64>,
        strides: Vec<i64>,
    },
    /// `inputs` joined along `axis` (`tensor.concat`): a chain of two-part `ipu.concat`s.
    Concat {
        inputs: Vec<Value<'c, 'a>>,
        axis: usize,
    },
    /// `dest` with `source` written at `offsets` (`tensor.insert_slice`, unit strides): the
    /// parts of `dest` around the window sliced and joined with `source`, axis by axis. A
    /// `dest` of `None` is a `tensor.empty` (its unwritten parts zeros).
    InsertSlice {
        source: Value<'c, 'a>,
        dest: Option<Value<'c, 'a>>,
        offsets: Vec<i64>,
        sizes: Vec<i64>,
    },
}

/// A second matmul operand that is added to the product.
#[derive(Clone)]
pub enum Addend<'c, 'a> {
    Value(Value<'c, 'a>),
    /// A splat of this number in the result type (a non-zero `linalg.fill` init).
    Splat(f64),
}

/// One planned rewrite: `root`'s single result is replaced by `replacement`; `root` and
/// `interior` (ops whose results are used only inside the recognized pattern) are erased.
pub struct Rewrite<'c, 'a> {
    pub root: OperationRef<'c, 'a>,
    pub interior: Vec<OperationRef<'c, 'a>>,
    pub replacement: Replacement<'c, 'a>,
    /// Statistic name (`matmul`, `softmax`, ...).
    pub kind: &'static str,
    /// The root's result that is replaced (the others have no uses).
    pub result: usize,
}

impl<'c, 'a> Rewrite<'c, 'a> {
    /// The rewrite replacing `root` alone by `replacement`, counted as `kind`.
    pub fn single(
        root: OperationRef<'c, 'a>,
        replacement: Replacement<'c, 'a>,
        kind: &'static str,
    ) -> Rewrite<'c, 'a> {
        Rewrite {
            root,
            interior: Vec::new(),
            replacement,
            kind,
            result: 0,
        }
    }

    /// The rewrite of a transpose `root` of `input` by `permutation`: the input itself for the
    /// identity permutation, else an `ipu.rearrange`.
    pub fn transpose(
        root: OperationRef<'c, 'a>,
        input: Value<'c, 'a>,
        permutation: Vec<i64>,
    ) -> Rewrite<'c, 'a> {
        if permutation
            .iter()
            .enumerate()
            .all(|(index, &axis)| axis == index as i64)
        {
            return Rewrite::single(root, Replacement::Forward { value: input }, "identity");
        }
        Rewrite::single(
            root,
            Replacement::Transpose { input, permutation },
            "rearrange",
        )
    }

    /// The rewrite of a matched pattern, if no value of its `interior` ops is used outside
    /// the pattern (the interior is erased with the root).
    pub fn contained(
        root: OperationRef<'c, 'a>,
        interior: Vec<OperationRef<'c, 'a>>,
        replacement: Replacement<'c, 'a>,
        kind: &'static str,
    ) -> Option<Rewrite<'c, 'a>> {
        let inside: std::collections::BTreeSet<usize> = interior
            .iter()
            .chain(std::iter::once(&root))
            .map(|op| op.to_raw().ptr as usize)
            .collect();
        for op in &interior {
            for result in op.results() {
                if ir::users(result.into())
                    .iter()
                    .any(|user| !inside.contains(&(user.to_raw().ptr as usize)))
                {
                    return None;
                }
            }
        }
        Some(Rewrite {
            root,
            interior,
            replacement,
            kind,
            result: 0,
        })
    }
}

/// The checked plan of a conversion: the rewrites, and ops erased once they have no uses
/// (shape constants, zero points, destination tensors).
#[derive(Default)]
pub struct Plan<'c, 'a> {
    pub rewrites: Vec<Rewrite<'c, 'a>>,
    pub erase_if_unused: Vec<OperationRef<'c, 'a>>,
}

/// Applies `plan`: builds each replacement before its root (in program order, so every input is
/// already final), redirects the root's uses, then erases the replaced ops, users first.
/// Returns the count of rewrites per kind.
pub fn apply<'c, 'a>(
    context: &'c Context,
    plan: Plan<'c, 'a>,
) -> Result<BTreeMap<&'static str, u64>, String> {
    let mut replaced: BTreeMap<usize, Value<'c, 'a>> = BTreeMap::new();
    let mut counts = BTreeMap::new();
    let mut erase: Vec<OperationRef<'c, 'a>> = Vec::new();
    for rewrite in &plan.rewrites {
        let root = rewrite.root;
        let block = root
            .block()
            .ok_or("internal: a converted op is not in a block")?;
        let result = root
            .result(rewrite.result)
            .map_err(|error| error.to_string())?;
        // A boolean reduction's value is a float tensor of its shape (its readers, converted
        // too, compare it with 0).
        let result_type = match &rewrite.replacement {
            Replacement::Reduce { as_float: true, .. } => {
                let shape = ir::shape_of(result.r#type()).ok_or("internal: unranked reduction")?;
                let dims: String = shape.iter().map(|d| format!("{d}x")).collect();
                Type::parse(context, &format!("tensor<{dims}f32>"))
                    .ok_or("internal: a boolean reduction's float type")?
            }
            _ => result.r#type(),
        };
        let builder = ReplacementBuilder {
            context,
            block,
            root,
            location: root.location(),
            result_type,
            replaced: &replaced,
        };
        let value = builder.build(&rewrite.replacement)?;
        // SAFETY: both values are live and of the same type; the root is erased below, after
        // every rewrite has been built.
        unsafe { mlir_sys::mlirValueReplaceAllUsesOfWith(result.to_raw(), value.to_raw()) };
        replaced.insert(key(result.into()), value);
        if let (Replacement::Constant { .. }, Some(created)) =
            (&rewrite.replacement, ir::producer(value))
        {
            // A weight whose only users were ops of a recognized pattern ends up unused.
            erase.push(created);
        }
        erase.push(root);
        erase.extend(rewrite.interior.iter().copied());
        *counts.entry(rewrite.kind).or_insert(0) += 1;
    }
    erase.extend(plan.erase_if_unused.iter().copied());
    let blocks: Vec<BlockRef<'c, 'a>> = plan
        .rewrites
        .iter()
        .filter_map(|r| r.root.block())
        .collect();
    erase_users_first(erase);
    // Reshapes a replacement looked through (a kept axis dropped and added again), the
    // intermediate joins of a chain of inserts into one tensor and the zeros they started
    // from may be left without uses: erased too (IRDL ops declare no side effects, so
    // canonicalize keeps them).
    let mut dead = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for block in blocks {
        if !seen.insert(block.to_raw().ptr as usize) {
            continue;
        }
        let mut next = block.first_operation();
        while let Some(op) = next {
            next = op.next_in_block();
            let name = ipu_dialects::ipu::op_name(&op);
            if [
                ReshapeOp::NAME,
                SliceOp::NAME,
                ConcatOp::NAME,
                BroadcastOp::NAME,
                "arith.constant",
            ]
            .contains(&name.as_str())
            {
                dead.push(op);
            }
        }
    }
    erase_users_first(dead);
    Ok(counts)
}

/// Builds one rewrite's replacement ops before its root, reading every input through the
/// values earlier rewrites replaced.
struct ReplacementBuilder<'c, 'a, 'r> {
    context: &'c Context,
    block: BlockRef<'c, 'a>,
    root: OperationRef<'c, 'a>,
    location: Location<'c>,
    /// Type of the root's result, which the replacement's value takes.
    result_type: Type<'c>,
    /// Values replaced so far, by [`key`] of the replaced value.
    replaced: &'r BTreeMap<usize, Value<'c, 'a>>,
}

impl<'c, 'a> ReplacementBuilder<'c, 'a, '_> {
    /// `value`, or the value that replaced it in an earlier rewrite.
    fn remap(&self, value: Value<'c, 'a>) -> Value<'c, 'a> {
        self.replaced.get(&key(value)).copied().unwrap_or(value)
    }

    /// Inserts `op` before the root and returns its first result.
    fn insert(&self, op: Operation<'c>) -> Result<Value<'c, 'a>, String> {
        let inserted = self.block.insert_operation_before(self.root, op);
        Ok(inserted
            .result(0)
            .map_err(|error| error.to_string())?
            .into())
    }

    /// Inserts an `arith.constant` holding `value` before the root.
    fn insert_constant(&self, value: Attribute<'c>) -> Result<Value<'c, 'a>, String> {
        self.insert(constant(self.context, self.location, value))
    }

    /// Builds `replacement` and returns the value that replaces the root's result.
    fn build(&self, replacement: &Replacement<'c, 'a>) -> Result<Value<'c, 'a>, String> {
        let (context, location, result_type) = (self.context, self.location, self.result_type);
        Ok(match replacement {
            Replacement::Matmul { lhs, rhs, addend } => self.matmul(*lhs, *rhs, addend.as_ref())?,
            Replacement::Add { lhs, rhs } => self.insert(AddOp::build(
                location,
                self.remap(*lhs),
                self.remap(*rhs),
                result_type,
            ))?,
            Replacement::Transpose { input, permutation } => {
                self.rearrange(self.remap(*input), permutation)?
            }
            Replacement::Gelu { input, tanh } => self.insert(GeluOp::build(
                context,
                location,
                self.remap(*input),
                result_type,
                *tanh,
            ))?,
            Replacement::Softmax { input } => {
                self.insert(SoftmaxOp::build(location, self.remap(*input), result_type))?
            }
            Replacement::LayerNorm {
                input,
                gamma,
                beta,
                epsilon,
            } => self.layer_norm(*input, gamma, beta, *epsilon)?,
            Replacement::Constant { value } => self.insert_constant(*value)?,
            Replacement::Reshape { input } => {
                let input = self.remap(*input);
                self.ipu_reshape(input, result_type)?
            }
            Replacement::Forward { value } => self.remap(*value),
            Replacement::MatmulConstant { lhs, weight } => {
                let weight = self.insert_constant(*weight)?;
                self.insert(MatmulOp::build(
                    context,
                    location,
                    self.remap(*lhs),
                    weight,
                    result_type,
                    false,
                    false,
                ))?
            }
            Replacement::Attention {
                query,
                key,
                value,
                scale,
            } => self.insert(AttentionOp::build(
                context,
                location,
                self.remap(*query),
                self.remap(*key),
                self.remap(*value),
                result_type,
                false,
                Some(*scale),
            ))?,
            Replacement::HeadMerge { input, weight } => self.head_merge(*input, *weight)?,
            Replacement::Map { inputs, body } => {
                let shape =
                    ir::shape_of(result_type).ok_or("internal: map to an unranked tensor")?;
                self.map(inputs, body, &shape)?
            }
            Replacement::Reduce {
                inputs,
                body,
                combiner,
                init,
                loop_shape,
                ..
            } => self.reduce(inputs, body, *combiner, init, loop_shape)?,
            Replacement::BroadcastingAdd { inputs } => {
                let shape =
                    ir::shape_of(result_type).ok_or("internal: add to an unranked tensor")?;
                // ipu.add reads a full-size operand and a full-size one or a row vector; any
                // other broadcast is explicit.
                let operand = |input| -> Result<Value<'c, 'a>, String> {
                    let value = self.map_input(input, &shape, false)?;
                    let own = ir::shape_of(value.r#type()).unwrap_or_default();
                    let rows: i64 = own[..own.len().saturating_sub(1)].iter().product();
                    if own == shape || rows == 1 {
                        Ok(value)
                    } else {
                        self.map_input(input, &shape, true)
                    }
                };
                let (lhs, rhs) = (operand(&inputs[0])?, operand(&inputs[1])?);
                self.insert(AddOp::build(location, lhs, rhs, result_type))?
            }
            Replacement::Conv1x1 {
                input,
                weight,
                bias,
            } => self.conv_1x1(*input, weight, *bias)?,
            Replacement::IpuReshape { input } => {
                let input = self.remap(*input);
                self.ipu_reshape(input, result_type)?
            }
            Replacement::Conv2d {
                input,
                filter,
                addend,
                layout,
                strides,
                dilations,
            } => {
                let product = self.conv2d(*input, *filter, *layout, (*strides, *dilations))?;
                match addend {
                    None => product,
                    Some(addend) => {
                        let addend = match addend {
                            Addend::Value(value) => self.remap(*value),
                            Addend::Splat(number) => {
                                self.insert_constant(splat(result_type, *number)?)?
                            }
                        };
                        self.add_broadcasting(product, addend)?
                    }
                }
            }
            Replacement::Slice {
                input,
                offsets,
                sizes,
                strides,
            } => {
                let input = self.remap(*input);
                let window = self.slice(input, offsets, sizes, strides)?;
                self.ipu_reshape(window, result_type)?
            }
            Replacement::Concat { inputs, axis } => {
                let mut joined = self.remap(inputs[0]);
                for input in &inputs[1..] {
                    joined = self.concat(joined, self.remap(*input), *axis)?;
                }
                joined
            }
            Replacement::InsertSlice {
                source,
                dest,
                offsets,
                sizes,
            } => {
                let dest = match dest {
                    Some(dest) => self.remap(*dest),
                    None => self.insert_constant(splat(result_type, 0.0)?)?,
                };
                let source = self.remap(*source);
                let source = self.ipu_reshape(source, self.tensor_type(sizes)?)?;
                self.insert_slice(dest, source, offsets, 0)?
            }
        })
    }

    /// `ipu.matmul(lhs, rhs)`, plus `ipu.add` of the addend when there is one.
    fn matmul(
        &self,
        lhs: Value<'c, 'a>,
        rhs: Value<'c, 'a>,
        addend: Option<&Addend<'c, 'a>>,
    ) -> Result<Value<'c, 'a>, String> {
        // ipu.matmul broadcasts leading axes itself: an operand broadcast only over them (a
        // weight copied per batch for a batch_matmul) is read un-broadcast.
        let leading_only = |value: Value<'c, 'a>| {
            let Some(broadcast) = ir::produced_by(value, BroadcastOp::NAME) else {
                return value;
            };
            let Ok(input) = broadcast.operand(0) else {
                return value;
            };
            let (own, wide) = (ir::shape_of(input.r#type()), ir::shape_of(value.r#type()));
            match (own, wide) {
                (Some(own), Some(wide))
                    if own.len() >= 2 && own[own.len() - 2..] == wide[wide.len() - 2..] =>
                {
                    input
                }
                _ => value,
            }
        };
        // A vector operand (linalg.vecmat, linalg.matvec) is a one-row / one-column matrix;
        // the product is reshaped to the result.
        let (mut lhs, mut rhs) = (leading_only(self.remap(lhs)), leading_only(self.remap(rhs)));
        let rank = |value: Value<'c, 'a>| ir::shape_of(value.r#type()).map_or(0, |s| s.len());
        let (vector_lhs, vector_rhs) = (rank(lhs) == 1, rank(rhs) == 1);
        if vector_lhs {
            let k = ir::shape_of(lhs.r#type()).unwrap_or_default()[0];
            lhs = self.ipu_reshape(lhs, self.tensor_type_like(&[1, k], lhs.r#type())?)?;
        }
        if vector_rhs {
            let k = ir::shape_of(rhs.r#type()).unwrap_or_default()[0];
            rhs = self.ipu_reshape(rhs, self.tensor_type_like(&[k, 1], rhs.r#type())?)?;
        }
        let product_type = if vector_lhs || vector_rhs {
            let (a, b) = (
                ir::shape_of(lhs.r#type()).unwrap_or_default(),
                ir::shape_of(rhs.r#type()).unwrap_or_default(),
            );
            self.tensor_type(&[a[a.len() - 2], b[b.len() - 1]])?
        } else {
            self.result_type
        };
        let product = self.insert(MatmulOp::build(
            self.context,
            self.location,
            lhs,
            rhs,
            product_type,
            false,
            false,
        ))?;
        let product = self.ipu_reshape(product, self.result_type)?;
        let Some(addend) = addend else {
            return Ok(product);
        };
        let addend = match addend {
            Addend::Value(value) => self.remap(*value),
            Addend::Splat(number) => self.insert_constant(splat(self.result_type, *number)?)?,
        };
        self.insert(AddOp::build(
            self.location,
            product,
            addend,
            self.result_type,
        ))
    }

    /// `ipu.layer_norm` of `input` with gamma and beta as constants.
    fn layer_norm(
        &self,
        input: Value<'c, 'a>,
        gamma: &DenseConstant<'c>,
        beta: &DenseConstant<'c>,
        epsilon: f64,
    ) -> Result<Value<'c, 'a>, String> {
        let gamma = self.insert_constant(gamma.attribute)?;
        let beta = self.insert_constant(beta.attribute)?;
        self.insert(LayerNormOp::build(
            self.context,
            self.location,
            self.remap(input),
            gamma,
            beta,
            self.result_type,
            epsilon,
        ))
    }

    /// The head merge (see [`Replacement::HeadMerge`]): per-head products, rearranged by
    /// row, summed over heads by a ones-matmul and rearranged back.
    fn head_merge(
        &self,
        input: Value<'c, 'a>,
        weight: Attribute<'c>,
    ) -> Result<Value<'c, 'a>, String> {
        let (context, location, result_type) = (self.context, self.location, self.result_type);
        let input = self.remap(input);
        let heads =
            ir::shape_of(input.r#type()).ok_or("internal: head merge of an unranked tensor")?;
        let out = ir::shape_of(result_type).ok_or("internal: head merge to an unranked tensor")?;
        let (head_count, sequence, width) = (heads[0], heads[1], out[2]);
        let element = melior::ir::r#type::RankedTensorType::try_from(result_type)
            .map_err(|_| "internal: head merge result is not a ranked tensor")?
            .element();
        let tensor = |shape: &[i64]| -> Result<Type<'c>, String> {
            let dims: Vec<String> = shape.iter().map(i64::to_string).collect();
            Type::parse(context, &format!("tensor<{}x{element}>", dims.join("x")))
                .ok_or_else(|| "internal: head merge type".to_string())
        };
        let weight = self.insert_constant(weight)?;
        let per_head = self.insert(MatmulOp::build(
            context,
            location,
            input,
            weight,
            tensor(&[head_count, sequence, width])?,
            false,
            false,
        ))?;
        let by_row = self.insert(RearrangeOp::build(
            context,
            location,
            per_head,
            tensor(&[sequence, head_count, width])?,
            Some(&[1, 0, 2]),
        ))?;
        let ones = self.insert_constant(splat(tensor(&[1, head_count])?, 1.0)?)?;
        let summed = self.insert(MatmulOp::build(
            context,
            location,
            ones,
            by_row,
            tensor(&[sequence, 1, width])?,
            false,
            false,
        ))?;
        self.insert(RearrangeOp::build(
            context,
            location,
            summed,
            result_type,
            Some(&[1, 0, 2]),
        ))
    }
}

/// Erases `ops` that no longer have uses, repeating while erasing one frees another (a pattern's
/// interior ops use each other in any order).
/// Erases the ops of `ops` that have no uses, users first (until nothing more can go).
pub(crate) fn erase_unused(ops: Vec<OperationRef>) {
    erase_users_first(ops)
}

fn erase_users_first(mut ops: Vec<OperationRef>) {
    let mut seen = std::collections::BTreeSet::new();
    ops.retain(|op| seen.insert(op.to_raw().ptr as usize));
    loop {
        let before = ops.len();
        ops.retain(|op| {
            if op.results().any(|result| ir::has_uses(result.into())) {
                return true;
            }
            // SAFETY: the op has no uses left and is not referenced by any later step.
            unsafe {
                mlir_sys::mlirOperationRemoveFromParent(op.to_raw());
                mlir_sys::mlirOperationDestroy(op.to_raw());
            }
            false
        });
        if ops.len() == before {
            break;
        }
    }
}

pub(crate) fn constant<'c>(
    context: &'c Context,
    location: melior::ir::Location<'c>,
    value: Attribute<'c>,
) -> melior::ir::Operation<'c> {
    OperationBuilder::new("arith.constant", location)
        .add_attributes(&[(Identifier::new(context, "value"), value)])
        .add_results(&[value_type(value)])
        .build()
        .expect("arith.constant with a typed attribute always builds")
}

fn value_type(attribute: Attribute) -> Type {
    // SAFETY: every attribute we build a constant from is a typed (dense elements) attribute.
    unsafe { Type::from_raw(mlir_sys::mlirAttributeGetType(attribute.to_raw())) }
}

/// A dense splat of `number` with `r#type` (a float tensor type).
pub(crate) fn splat(r#type: Type, number: f64) -> Result<Attribute, String> {
    let context = r#type.context();
    // SAFETY: the context outlives the pass run.
    let context: &Context = unsafe { context.to_ref() };
    // Infinities and NaNs have no decimal literal: their bits (the element type's width).
    let literal = if number.is_finite() {
        format!("{number:.17e}")
    } else {
        let element = melior::ir::r#type::RankedTensorType::try_from(r#type)
            .map_err(|_| format!("internal: a splat of {number} into {}", r#type))?
            .element();
        if element.is_f16() {
            format!("0x{:04X}", half::f16::from_f64(number).to_bits())
        } else {
            format!("0x{:08X}", (number as f32).to_bits())
        }
    };
    Attribute::parse(
        context,
        &format!("dense<{literal}> : {type}", type = r#type),
    )
    .ok_or_else(|| format!("internal: cannot build a splat of {number} : {}", r#type))
}

/// Registers `convert-tosa-to-ipu` and `convert-linalg-to-ipu`.
pub fn register(registry: &mut crate::Registry) {
    registry.register::<tosa::ConvertTosaToIpu>();
    registry.register::<linalg::ConvertLinalgToIpu>();
}
