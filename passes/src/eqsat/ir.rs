//! Between IR and e-graph: one block's pure `ipu` ops become e-graph nodes (everything else is
//! a leaf), and the extracted program is re-materialized in the block.
//!
//! Only the uses outside the e-graph's ops (returns, calls, ops with regions, non-`ipu` ops) are
//! redirected; the input's e-graph ops keep their operands, so an input op the extracted program
//! still contains is reused as is, and the rest become dead and are erased explicitly (IRDL ops
//! are never considered dead by MLIR).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use egg::{Extractor, Id, Language};
use ipu_dialects::{
    ipu::{
        op_name, verify::verify_operation, verify::FunctionTable, AddOp, CastOp, GeluOp,
        LayerNormOp, MatmulOp, RearrangeOp, SoftmaxOp,
    },
    tensor::TensorInfo,
};
use melior::ir::{
    block::BlockLike, operation::OperationLike, BlockRef, OperationRef, Value, ValueLike,
};

use super::cost::CycleCost;
use super::language::{node_data, Attr, Data, Ipu, IpuGraph, Leaf};

/// One input op that is an e-graph node.
struct Original<'c, 'a> {
    op: OperationRef<'c, 'a>,
    position: usize,
    class: Id,
    /// The node with its children as added.
    node: Ipu,
}

/// The e-graph of one block and the way back to its IR.
pub struct BlockGraph<'c, 'a> {
    pub egraph: IpuGraph,
    block: BlockRef<'c, 'a>,
    originals: Vec<Original<'c, 'a>>,
    /// Leaf name -> (value, position of its defining op in the block, `None` if it dominates it).
    leaves: BTreeMap<String, (Value<'c, 'a>, Option<usize>)>,
    /// Raw op pointer -> position in the block.
    positions: HashMap<usize, usize>,
}

fn raw_op(op: &OperationRef) -> usize {
    op.to_raw().ptr as usize
}

fn raw_value(value: &Value) -> usize {
    value.to_raw().ptr as usize
}

fn unformatted(value: Value) -> Option<TensorInfo> {
    TensorInfo::from_type(value.r#type())
        .ok()
        .filter(|info| info.format.is_none())
}

fn is_swap_of_last_two(permutation: &[i64]) -> bool {
    let rank = permutation.len();
    rank >= 2
        && permutation.iter().enumerate().all(|(axis, &source)| {
            let expected = if axis == rank - 2 {
                rank - 1
            } else if axis == rank - 1 {
                rank - 2
            } else {
                axis
            };
            source == expected as i64
        })
}

/// The node kind of an op the e-graph may hold (children and attribute leaves filled in later),
/// or `None` for an op that stays a leaf.
fn kind_of(op: OperationRef) -> Option<(Ipu, Option<Attr>)> {
    let name = op_name(&op);
    let allowed: &[&str] = match name.as_str() {
        MatmulOp::NAME => &["transpose_lhs", "transpose_rhs"],
        AddOp::NAME | SoftmaxOp::NAME => &[],
        GeluOp::NAME => &["approximate"],
        LayerNormOp::NAME => &["epsilon"],
        CastOp::NAME => &["scale"],
        RearrangeOp::NAME => &["permutation"],
        _ => return None,
    };
    // Other attributes (plans, estimates) belong to this op instance: keep it as it is.
    for (attribute, _) in op.attributes() {
        if !allowed.contains(&attribute.as_string_ref().as_str().unwrap_or("")) {
            return None;
        }
    }
    if op.region_count() != 0
        || op.result_count() != 1
        || verify_operation(op, &FunctionTable::new()).is_err()
    {
        return None;
    }
    let result = unformatted(op.result(0).ok()?.into())?;
    let mut operands = Vec::new();
    for operand in op.operands() {
        operands.push(unformatted(operand)?);
    }
    let zero = Id::from(0usize);
    let kind = if let Ok(matmul) = MatmulOp::try_from(op) {
        if operands
            .iter()
            .any(|operand| operand.element != result.element)
        {
            return None;
        }
        match (matmul.transpose_lhs(), matmul.transpose_rhs()) {
            (false, false) => (Ipu::Matmul([zero; 2]), None),
            (true, false) => (Ipu::MatmulTl([zero; 2]), None),
            (false, true) => (Ipu::MatmulTr([zero; 2]), None),
            (true, true) => (Ipu::MatmulTt([zero; 2]), None),
        }
    } else if let Ok(gelu) = GeluOp::try_from(op) {
        if gelu.approximate() == "tanh" {
            (Ipu::GeluTanh(zero), None)
        } else {
            (Ipu::Gelu(zero), None)
        }
    } else if let Ok(norm) = LayerNormOp::try_from(op) {
        (
            Ipu::LayerNorm([zero; 4]),
            Some(Attr::Epsilon(norm.epsilon()?.to_bits())),
        )
    } else if let Ok(cast) = CastOp::try_from(op) {
        (
            Ipu::Cast([zero; 2]),
            Some(Attr::CastTo {
                element: result.element,
                scale: cast.scale(),
            }),
        )
    } else if let Ok(rearrange) = RearrangeOp::try_from(op) {
        if !is_swap_of_last_two(&rearrange.permutation()?) {
            return None;
        }
        (Ipu::Transpose(zero), None)
    } else if name == AddOp::NAME {
        (Ipu::Add([zero; 2]), None)
    } else {
        (Ipu::Softmax(zero), None)
    };
    Some(kind)
}

/// The ops using `value`, with the operand index of each use.
pub(super) fn uses<'c, 'a>(value: Value<'c, 'a>) -> Vec<(OperationRef<'c, 'a>, usize)> {
    let mut found = Vec::new();
    // SAFETY: the value is live; the use list is walked without modifying the IR.
    unsafe {
        let mut operand = mlir_sys::mlirValueGetFirstUse(value.to_raw());
        while !mlir_sys::mlirOpOperandIsNull(operand) {
            let owner = OperationRef::from_raw(mlir_sys::mlirOpOperandGetOwner(operand));
            found.push((
                owner,
                mlir_sys::mlirOpOperandGetOperandNumber(operand) as usize,
            ));
            operand = mlir_sys::mlirOpOperandGetNextUse(operand);
        }
    }
    found
}

impl<'c, 'a> BlockGraph<'c, 'a> {
    /// Adds every pure `ipu` op of `block` to a new e-graph.
    pub fn new(block: BlockRef<'c, 'a>) -> Self {
        let mut graph = BlockGraph {
            egraph: IpuGraph::default(),
            block,
            originals: Vec::new(),
            leaves: BTreeMap::new(),
            positions: HashMap::new(),
        };
        let mut classes: HashMap<usize, Id> = HashMap::new();
        let mut leaf_names: HashMap<usize, String> = HashMap::new();
        let mut next = block.first_operation();
        let mut position = 0;
        while let Some(op) = next {
            graph.positions.insert(raw_op(&op), position);
            if let Some((kind, attr)) = kind_of(op) {
                graph.add_op(op, position, kind, attr, &mut classes, &mut leaf_names);
            }
            next = op.next_in_block();
            position += 1;
        }
        graph
    }

    fn add_op(
        &mut self,
        op: OperationRef<'c, 'a>,
        position: usize,
        kind: Ipu,
        attr: Option<Attr>,
        classes: &mut HashMap<usize, Id>,
        leaf_names: &mut HashMap<usize, String>,
    ) {
        let mut children = Vec::new();
        if let Some(attr) = attr {
            children.push(self.egraph.add(Ipu::Attr(attr)));
        }
        for operand in op.operands() {
            let id = match classes.get(&raw_value(&operand)) {
                Some(id) => *id,
                None => self.leaf(operand, leaf_names),
            };
            children.push(id);
        }
        let mut index = 0;
        let node = kind.map_children(|_| {
            let id = children.get(index).copied().unwrap_or(Id::from(0usize));
            index += 1;
            id
        });
        let Ok(result) = op.result(0) else { return };
        let result: Value = result.into();
        let expected = unformatted(result);
        let data = node_data(&node, |id| &self.egraph[id].data);
        let agrees = matches!((&data, &expected), (Data::Tensor(info), Some(expected)) if info.shape == expected.shape && info.element == expected.element);
        let class = if index == children.len() && agrees {
            let class = self.egraph.add(node.clone());
            self.originals.push(Original {
                op,
                position,
                class,
                node,
            });
            class
        } else {
            self.leaf(result, leaf_names)
        };
        classes.insert(raw_value(&result), class);
    }

    fn leaf(&mut self, value: Value<'c, 'a>, leaf_names: &mut HashMap<usize, String>) -> Id {
        let count = leaf_names.len();
        let name = leaf_names
            .entry(raw_value(&value))
            .or_insert_with(|| format!("v{count}"))
            .clone();
        let info = unformatted(value);
        let (shape, element) = match info {
            Some(info) => (info.shape, info.element),
            // Operands of e-graph ops are checked to be tensors; this is never reached.
            None => (Vec::new(), ipu_dialects::tensor::ElementType::F32),
        };
        let defined_at =
            crate::ir::producer(value).and_then(|op| self.positions.get(&raw_op(&op)).copied());
        self.leaves.insert(name.clone(), (value, defined_at));
        let splat_bits = crate::ir::splat_of(value).map(f64::to_bits);
        self.egraph.add(Ipu::Leaf(Leaf {
            name,
            shape,
            element,
            splat_bits,
        }))
    }

    /// The number of input ops in the e-graph.
    pub fn op_count(&self) -> usize {
        self.originals.len()
    }

    pub(super) fn is_original(&self, op: &OperationRef) -> bool {
        self.originals
            .iter()
            .any(|original| raw_op(&original.op) == raw_op(op))
    }

    /// The position in the block of the op (or its ancestor in the block) that `op` is.
    fn block_position(&self, op: OperationRef<'c, 'a>) -> Option<usize> {
        let mut current = Some(op);
        while let Some(candidate) = current {
            if let Some(position) = self.positions.get(&raw_op(&candidate)) {
                return Some(*position);
            }
            current = candidate.parent_operation();
        }
        None
    }

    /// Input ops whose result is used outside the e-graph, each with the position of its first
    /// such user, in that order.
    pub(super) fn roots(&self) -> Vec<(usize, usize)> {
        let mut roots = Vec::new();
        for (index, original) in self.originals.iter().enumerate() {
            let Ok(result) = original.op.result(0) else {
                continue;
            };
            let outside = uses(result.into())
                .into_iter()
                .filter(|(user, _)| !self.is_original(user));
            let first = outside
                .filter_map(|(user, _)| self.block_position(user))
                .min();
            if let Some(first) = first {
                roots.push((first, index));
            }
        }
        roots.sort();
        roots
    }

    /// Cycles of the input program.
    pub fn cost_before(&self, cost: &CycleCost) -> u64 {
        self.originals
            .iter()
            .map(|original| cost.own(&original.node).cycles)
            .sum()
    }

    /// Cycles of the extracted program: each class reachable from a root once (it is a DAG).
    pub fn cost_after(
        &self,
        extractor: &Extractor<CycleCost, Ipu, super::language::ShapeAnalysis>,
        cost: &CycleCost,
    ) -> u64 {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<Id> = self
            .roots()
            .iter()
            .map(|(_, index)| self.originals[*index].class)
            .collect();
        let mut reachable = 0u64;
        while let Some(class) = stack.pop() {
            let class = self.egraph.find(class);
            if !seen.insert(class) {
                continue;
            }
            let node = extractor.find_best_node(class);
            reachable = reachable.saturating_add(cost.own(node).cycles);
            stack.extend(node.children().iter().copied());
        }
        reachable
    }
}

impl<'c, 'a> BlockGraph<'c, 'a> {
    pub(super) fn block(&self) -> BlockRef<'c, 'a> {
        self.block
    }

    pub(super) fn leaf_value(&self, name: &str) -> Option<(Value<'c, 'a>, Option<usize>)> {
        self.leaves.get(name).copied()
    }

    pub(super) fn original_class(&self, index: usize) -> Id {
        self.originals[index].class
    }

    pub(super) fn original_op(&self, index: usize) -> OperationRef<'c, 'a> {
        self.originals[index].op
    }

    pub(super) fn op_at(&self, position: usize) -> Option<OperationRef<'c, 'a>> {
        let mut next = self.block.first_operation();
        for _ in 0..position {
            next = next?.next_in_block();
        }
        next
    }

    /// An input op of `class` that is `node` on exactly `operands` and precedes `position`.
    pub(super) fn reusable(
        &self,
        class: Id,
        node: &Ipu,
        operands: &[Value<'c, 'a>],
        position: usize,
    ) -> Option<Value<'c, 'a>> {
        let canonical = node.clone().map_children(|id| self.egraph.find(id));
        self.originals.iter().find_map(|original| {
            let same_node = self.egraph.find(original.class) == class
                && original
                    .node
                    .clone()
                    .map_children(|id| self.egraph.find(id))
                    == canonical;
            let same_operands = original.op.operands().eq(operands.iter().copied());
            (same_node && same_operands && original.position < position)
                .then(|| original.op.result(0).ok().map(Value::from))
                .flatten()
        })
    }

    /// Erases the input ops whose results have no uses left, users first. Returns how many.
    pub(super) fn erase_dead(&self) -> u64 {
        let mut erased = 0;
        for original in self.originals.iter().rev() {
            let Ok(result) = original.op.result(0) else {
                continue;
            };
            if uses(result.into()).is_empty() {
                // SAFETY: the op is live, unused, and no reference to it is used afterwards.
                unsafe { mlir_sys::mlirOperationDestroy(original.op.to_raw()) };
                erased += 1;
            }
        }
        erased
    }
}
