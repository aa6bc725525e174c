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
    graph::{
        read::{read_block, FunctionGraph, ReadError, ReadOptions},
        OpKind, ValueId,
    },
    ipu::{verify::verify_operation, verify::FunctionTable},
    tensor::{ElementType, TensorInfo},
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

fn is_swap_of_last_two(permutation: &[usize]) -> bool {
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
            source == expected
        })
}

/// A node kind (children and attribute leaf filled in later), its attribute leaf and the
/// attributes the node represents.
type NodeOf = (Ipu, Option<Attr>, &'static [&'static str]);

/// The node graph op `kind` becomes (a cast's attribute takes `result`, its result element),
/// or `None` for an op that stays a leaf (attention, repeat, any other rearrange).
fn node_of(kind: &OpKind, result: ElementType) -> Option<NodeOf> {
    let zero = Id::from(0usize);
    Some(match kind {
        OpKind::Matmul {
            transpose_lhs,
            transpose_rhs,
        } => {
            let node = match (transpose_lhs, transpose_rhs) {
                (false, false) => Ipu::Matmul([zero; 2]),
                (true, false) => Ipu::MatmulTl([zero; 2]),
                (false, true) => Ipu::MatmulTr([zero; 2]),
                (true, true) => Ipu::MatmulTt([zero; 2]),
            };
            (node, None, &["transpose_lhs", "transpose_rhs"])
        }
        OpKind::Add => (Ipu::Add([zero; 2]), None, &[]),
        OpKind::Softmax => (Ipu::Softmax(zero), None, &[]),
        OpKind::Gelu { tanh: true } => (Ipu::GeluTanh(zero), None, &["approximate"]),
        OpKind::Gelu { tanh: false } => (Ipu::Gelu(zero), None, &["approximate"]),
        OpKind::LayerNorm { epsilon } => (
            Ipu::LayerNorm([zero; 4]),
            Some(Attr::Epsilon(epsilon.to_bits())),
            &["epsilon"],
        ),
        OpKind::Cast { scale } => (
            Ipu::Cast([zero; 2]),
            Some(Attr::CastTo {
                element: result,
                scale: *scale,
            }),
            &["scale"],
        ),
        OpKind::Rearrange {
            permutation: Some(permutation),
        } if is_swap_of_last_two(permutation) => (Ipu::Transpose(zero), None, &["permutation"]),
        _ => return None,
    })
}

/// The node kind and attribute leaf of graph op `kind` when its IR op `op` may be in the
/// e-graph, `None` when the op stays a leaf. Beyond what the op computes (read once, by the
/// graph reader), the e-graph holds only ops it can rebuild as they are: no attributes but
/// those the node represents (plans and estimates belong to the op instance), no regions, one
/// result, the op verifies, unformatted tensors throughout, and a matmul's result element that
/// of its operands.
fn eligible(op: OperationRef, kind: &OpKind) -> Option<(Ipu, Option<Attr>)> {
    if op.region_count() != 0 || op.result_count() != 1 {
        return None;
    }
    let result = unformatted(op.result(0).ok()?.into())?;
    let (node, attr, allowed) = node_of(kind, result.element)?;
    for (attribute, _) in op.attributes() {
        if !allowed.contains(&attribute.as_string_ref().as_str().unwrap_or("")) {
            return None;
        }
    }
    if verify_operation(op, &FunctionTable::new()).is_err() {
        return None;
    }
    let mut operands = Vec::new();
    for operand in op.operands() {
        operands.push(unformatted(operand)?);
    }
    let mixed = operands
        .iter()
        .any(|operand| operand.element != result.element);
    if node.matmul_flags().is_some() && mixed {
        return None;
    }
    Some((node, attr))
}

/// A graph op that is an e-graph node: its IR op, its operand and result values in the graph,
/// and its node kind and attribute leaf.
struct NodeOp<'c, 'a, 'g> {
    op: OperationRef<'c, 'a>,
    operands: &'g [ValueId],
    result: ValueId,
    kind: Ipu,
    attr: Option<Attr>,
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
    /// Adds every pure `ipu` op of `block` (a block of `owner`) to a new e-graph. The block is
    /// read by the graph reader with other ops kept opaque: their results, like block
    /// arguments, constants and values from elsewhere, are leaves.
    pub fn new(
        owner: OperationRef<'c, 'a>,
        block: BlockRef<'c, 'a>,
    ) -> Result<Self, ReadError<'c, 'a>> {
        // No function table: a repeat's body (a function other threads may be rewriting) is
        // not read, so every `ipu.repeat` is opaque, a leaf either way.
        let read = read_block(
            owner,
            block,
            &BTreeMap::new(),
            ReadOptions {
                opaque: true,
                ..ReadOptions::default()
            },
        )?;
        let mut graph = BlockGraph {
            egraph: IpuGraph::default(),
            block,
            originals: Vec::new(),
            leaves: BTreeMap::new(),
            positions: HashMap::new(),
        };
        let mut next = block.first_operation();
        let mut position = 0;
        while let Some(op) = next {
            graph.positions.insert(raw_op(&op), position);
            next = op.next_in_block();
            position += 1;
        }
        let mut classes: HashMap<ValueId, Id> = HashMap::new();
        let mut leaf_names: HashMap<usize, String> = HashMap::new();
        for (index, graph_op) in read.graph.ops.iter().enumerate() {
            let op = read.ops[index];
            if let Some((kind, attr)) = eligible(op, &graph_op.kind) {
                let node = NodeOp {
                    op,
                    operands: &graph_op.operands,
                    result: graph_op.results[0],
                    kind,
                    attr,
                };
                graph.add_op(&read, node, &mut classes, &mut leaf_names);
            }
        }
        Ok(graph)
    }

    fn add_op(
        &mut self,
        read: &FunctionGraph<'c, 'a>,
        node: NodeOp<'c, 'a, '_>,
        classes: &mut HashMap<ValueId, Id>,
        leaf_names: &mut HashMap<usize, String>,
    ) {
        let NodeOp {
            op,
            operands,
            result,
            kind,
            attr,
        } = node;
        let mut children = Vec::new();
        if let Some(attr) = attr {
            children.push(self.egraph.add(Ipu::Attr(attr)));
        }
        for (index, &id) in operands.iter().enumerate() {
            let Ok(operand) = op.operand(index) else {
                return;
            };
            // The reader looks through a conversion a planner inserted (its operand stands for
            // its result); the e-graph does not: the conversion's result is a leaf.
            let child = if raw_value(&read.values[id]) == raw_value(&operand) {
                classes.get(&id).copied()
            } else {
                None
            };
            children.push(child.unwrap_or_else(|| self.leaf(operand, leaf_names)));
        }
        let mut index = 0;
        let node = kind.map_children(|_| {
            let id = children.get(index).copied().unwrap_or(Id::from(0usize));
            index += 1;
            id
        });
        let Some(&result_value) = read.values.get(result) else {
            return;
        };
        let expected = unformatted(result_value);
        let data = node_data(&node, |id| &self.egraph[id].data);
        let agrees = matches!((&data, &expected), (Data::Tensor(info), Some(expected)) if info.shape == expected.shape && info.element == expected.element);
        let position = self.positions.get(&raw_op(&op)).copied();
        let class = if let (Some(position), true) = (position, index == children.len() && agrees) {
            let class = self.egraph.add(node.clone());
            self.originals.push(Original {
                op,
                position,
                class,
                node,
            });
            class
        } else {
            self.leaf(result_value, leaf_names)
        };
        classes.insert(result, class);
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
            None => (Vec::new(), ElementType::F32),
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
