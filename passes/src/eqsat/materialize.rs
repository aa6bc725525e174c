//! Re-materializes the extracted program of a [`BlockGraph`] as IR.

use std::collections::HashMap;

use egg::{Extractor, Id, Language};
use ipu_dialects::ipu::{AddOp, CastOp, GeluOp, LayerNormOp, MatmulOp, RearrangeOp, SoftmaxOp};
use melior::{
    ir::{
        block::BlockLike, operation::OperationLike, Location, Operation, OperationRef, Type, Value,
        ValueLike,
    },
    Context,
};

use super::cost::CycleCost;
use super::ir::{uses, BlockGraph};
use super::language::{Attr, Info, Ipu, ShapeAnalysis};

/// What re-materialization did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Materialized {
    pub ops_created: u64,
    pub ops_erased: u64,
}

/// Why the extracted program could not be placed in the block (the input stays as it was).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MaterializeError {
    #[error("the extracted program uses value {leaf} before its definition")]
    Dominance { leaf: String },
    #[error("no type for an extracted {node}: its shapes do not check")]
    Type { node: String },
}

type Best<'e, 'k> = Extractor<'e, CycleCost<'k>, Ipu, ShapeAnalysis>;

fn tensor_type<'c>(context: &'c Context, info: &Info) -> Option<Type<'c>> {
    let info = ipu_dialects::tensor::TensorInfo {
        shape: info.shape.clone(),
        element: info.element,
        format: None,
    };
    Type::parse(context, &info.to_type_string())
}

fn swap_permutation(rank: usize) -> Vec<i64> {
    let mut permutation: Vec<i64> = (0..rank as i64).collect();
    permutation.swap(rank - 2, rank - 1);
    permutation
}

struct Builder<'r, 'e, 'k, 'c, 'a> {
    graph: &'r BlockGraph<'c, 'a>,
    best: &'r Best<'e, 'k>,
    context: &'c Context,
    memo: HashMap<Id, Value<'c, 'a>>,
    created: u64,
}

impl<'c, 'a> Builder<'_, '_, '_, 'c, 'a> {
    /// Checks that every leaf the program of `class` uses is defined before `position`.
    fn check(
        &self,
        class: Id,
        position: usize,
        seen: &mut Vec<Id>,
    ) -> Result<(), MaterializeError> {
        let class = self.graph.egraph.find(class);
        if seen.contains(&class) || self.memo.contains_key(&class) {
            return Ok(());
        }
        seen.push(class);
        let node = self.best.find_best_node(class);
        if let Ipu::Leaf(leaf) = node {
            match self.graph.leaf_value(&leaf.name) {
                Some((_, defined_at)) if defined_at.is_none_or(|at| at < position) => {}
                _ => {
                    return Err(MaterializeError::Dominance {
                        leaf: leaf.to_string(),
                    })
                }
            }
        }
        for &child in node.children() {
            self.check(child, position, seen)?;
        }
        Ok(())
    }

    /// The value of `class`, building its ops before `before` (at `position`) as needed.
    fn value(
        &mut self,
        class: Id,
        before: OperationRef<'c, 'a>,
        position: usize,
        location: Location<'c>,
    ) -> Result<Value<'c, 'a>, MaterializeError> {
        let class = self.graph.egraph.find(class);
        if let Some(value) = self.memo.get(&class) {
            return Ok(*value);
        }
        let node = self.best.find_best_node(class).clone();
        let value = match &node {
            Ipu::Leaf(leaf) => match self.graph.leaf_value(&leaf.name) {
                Some((value, _)) => value,
                None => {
                    return Err(MaterializeError::Dominance {
                        leaf: leaf.to_string(),
                    })
                }
            },
            _ => {
                let mut operands = Vec::new();
                let mut attr = None;
                for &child in node.children() {
                    match &self.graph.egraph[child].data {
                        super::language::Data::Attr(value) => attr = Some(*value),
                        _ => operands.push(self.value(child, before, position, location)?),
                    }
                }
                if let Some(reused) = self.graph.reusable(class, &node, &operands, position) {
                    reused
                } else {
                    let operation = self.build(class, &node, &operands, attr, location)?;
                    let block = self.graph.block();
                    let inserted = block.insert_operation_before(before, operation);
                    self.created += 1;
                    inserted
                        .result(0)
                        .map_err(|_| MaterializeError::Type {
                            node: node.to_string(),
                        })?
                        .into()
                }
            }
        };
        self.memo.insert(class, value);
        Ok(value)
    }

    fn build(
        &self,
        class: Id,
        node: &Ipu,
        operands: &[Value<'c, 'a>],
        attr: Option<Attr>,
        location: Location<'c>,
    ) -> Result<Operation<'c>, MaterializeError> {
        let type_error = || MaterializeError::Type {
            node: node.to_string(),
        };
        let info = self.graph.egraph[class]
            .data
            .tensor()
            .ok_or_else(type_error)?;
        let result = tensor_type(self.context, info).ok_or_else(type_error)?;
        let operand = |index: usize| operands.get(index).copied().ok_or_else(type_error);
        let context = self.context;
        Ok(match node {
            Ipu::Matmul(_) | Ipu::MatmulTl(_) | Ipu::MatmulTr(_) | Ipu::MatmulTt(_) => {
                let (transpose_lhs, transpose_rhs) = node.matmul_flags().ok_or_else(type_error)?;
                MatmulOp::build(
                    context,
                    location,
                    operand(0)?,
                    operand(1)?,
                    result,
                    transpose_lhs,
                    transpose_rhs,
                )
            }
            Ipu::Add(_) => AddOp::build(location, operand(0)?, operand(1)?, result),
            Ipu::Gelu(_) => GeluOp::build(context, location, operand(0)?, result, false),
            Ipu::GeluTanh(_) => GeluOp::build(context, location, operand(0)?, result, true),
            Ipu::Softmax(_) => SoftmaxOp::build(location, operand(0)?, result),
            Ipu::LayerNorm(_) => {
                let Some(Attr::Epsilon(bits)) = attr else {
                    return Err(type_error());
                };
                let epsilon = f64::from_bits(bits);
                LayerNormOp::build(
                    context,
                    location,
                    operand(0)?,
                    operand(1)?,
                    operand(2)?,
                    result,
                    epsilon,
                )
            }
            Ipu::Cast(_) => {
                let Some(Attr::CastTo { scale, .. }) = attr else {
                    return Err(type_error());
                };
                CastOp::build(context, location, operand(0)?, result, scale)
            }
            Ipu::Transpose(_) => {
                let permutation = swap_permutation(info.shape.len());
                RearrangeOp::build(context, location, operand(0)?, result, Some(&permutation))
            }
            Ipu::Attr(_) | Ipu::Leaf(_) => return Err(type_error()),
        })
    }
}

/// Replaces the block's program by the one `best` extracts: builds each root's program before
/// its first outside user, redirects the outside uses, and erases the input ops left dead.
pub fn materialize<'c, 'a>(
    graph: &BlockGraph<'c, 'a>,
    best: &Best<'_, '_>,
    context: &'c Context,
) -> Result<Materialized, MaterializeError> {
    let roots = graph.roots();
    let mut builder = Builder {
        graph,
        best,
        context,
        memo: HashMap::new(),
        created: 0,
    };
    // Check everything first, so a failure leaves the block untouched.
    for &(position, index) in &roots {
        builder.check(graph.original_class(index), position, &mut Vec::new())?;
    }
    // Insertion points are found before anything is inserted (insertion shifts positions).
    let targets: Vec<_> = roots
        .iter()
        .filter_map(|&(position, index)| Some((position, index, graph.op_at(position)?)))
        .collect();
    for (position, index, before) in targets {
        let original = graph.original_op(index);
        let value = builder.value(
            graph.original_class(index),
            before,
            position,
            original.location(),
        )?;
        let Ok(old) = original.result(0) else {
            continue;
        };
        let old: Value = old.into();
        if old == value {
            continue;
        }
        for (user, operand) in uses(old) {
            if !graph.is_original(&user) {
                // SAFETY: `user` is live and `operand` is one of its operand indices.
                unsafe {
                    mlir_sys::mlirOperationSetOperand(
                        user.to_raw(),
                        operand as isize,
                        value.to_raw(),
                    )
                };
            }
        }
    }
    let created = builder.created;
    let erased = graph.erase_dead();
    Ok(Materialized {
        ops_created: created,
        ops_erased: erased,
    })
}
