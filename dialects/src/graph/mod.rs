//! The program as plain data: values with shapes and element types, ops in program order.
//!
//! `ipu` IR is read into this form once ([`read`]), so planning and lowering run without an
//! MLIR context (melior handles are not `Send`) and are unit-testable on hand-built graphs.

use std::any::Any;
use std::sync::{Arc, Mutex};

use crate::ElementType as Precision;

pub mod dense;
pub mod read;
pub mod scalar;

/// A graph that breaks a rule the planner and the lowering rely on, at op `op`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("op {op}: {detail}")]
pub struct GraphError {
    pub op: usize,
    pub detail: String,
}

/// Canonical 3-axis view: leading axes fold into `batch`, rank-1 tensors are one row.
pub fn canonical_dims(shape: &[u64]) -> [u64; 3] {
    match shape.len() {
        0 => [1, 1, 1],
        1 => [1, 1, shape[0]],
        2 => [1, shape[0], shape[1]],
        rank => [
            shape[..rank - 2].iter().product(),
            shape[rank - 2],
            shape[rank - 1],
        ],
    }
}

/// Index of a value in [`Graph::values`].
pub type ValueId = usize;

/// Where a value comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Origin {
    /// A function argument: streamed in by the host.
    Argument,
    /// An `arith.constant`: written by the host at initialization. Also a parameter
    /// ([`Value::parameter`]): an argument of the entry function marked `{ipu.parameter}`,
    /// whose tensor the caller gives once, at initialization.
    Constant,
    /// The result of op `index`.
    Op(usize),
    /// The result of an op the graph does not model (kept only when read with
    /// [`read::ReadOptions::opaque`], e.g. for rewriting the `ipu` ops of one block); so read,
    /// also a block argument that is not a tensor and a value defined outside the block.
    Opaque,
}

/// One tensor value.
#[derive(Debug, Clone, PartialEq)]
pub struct Value {
    pub shape: Vec<u64>,
    pub element: Precision,
    pub origin: Origin,
    /// Largest magnitude of the value, when known (constants), for choosing FP8 scales.
    pub max_abs: Option<f64>,
    /// Power-of-two FP8 scale exponent of the value's codes (value = code * 2^scale): the
    /// `#ipu.format` scale, or for an `ipu.cast` result the cast's non-zero `scale`; 0 for
    /// f16, f32 and unplanned values.
    pub scale: i32,
    /// A constant's elements in row-major order (one element for a splat), when the graph was
    /// read with [`read::ReadOptions::decode`] (the reference evaluator); planning reads only
    /// shapes.
    pub data: Option<Arc<[f64]>>,
    /// A parameter: function argument `Some(n)` marked `{ipu.parameter}` (`PARAMETER_ATTRIBUTE`),
    /// read as a resident [`Origin::Constant`] without data: the caller gives its tensor once,
    /// at initialization, as binding `argN`, and every run reads it where it was written.
    pub parameter: Option<usize>,
}

/// The argument attribute that marks a weight argument as a parameter ([`Value::parameter`]).
pub const PARAMETER_ATTRIBUTE: &str = "ipu.parameter";

impl Value {
    /// A constant vector (a bias, a layer norm's gain or shift): the host writes it wherever
    /// an op reads it, at initialization, so no plan moves it.
    pub fn written_where_read(&self) -> bool {
        self.origin == Origin::Constant && canonical_dims(&self.shape)[..2] == [1, 1]
    }
}

impl Value {
    pub fn elements(&self) -> u64 {
        self.shape.iter().product()
    }

    /// Sets a constant's elements (row-major, or one for a splat) and its largest magnitude.
    pub fn set_data(&mut self, data: Vec<f64>) {
        self.max_abs = Some(data.iter().fold(0.0, |max: f64, x| max.max(x.abs())));
        self.data = Some(data.into());
    }
}

/// The semantic op kinds the planner knows.
#[derive(Debug, Clone, PartialEq)]
pub enum OpKind {
    Matmul {
        transpose_lhs: bool,
        transpose_rhs: bool,
    },
    Add,
    Gelu {
        tanh: bool,
    },
    Softmax,
    LayerNorm {
        epsilon: f64,
    },
    Attention {
        causal: bool,
        /// The score scale; `None` means `1/sqrt(head dim)`.
        scale: Option<f64>,
    },
    /// A user-written cast (kept as an op; the planner prices it).
    Cast {
        scale: i64,
    },
    /// A user-written rearrange (layout or axis permutation).
    Rearrange {
        permutation: Option<Vec<usize>>,
    },
    /// The same elements in another shape (row-major order kept).
    Reshape,
    /// Elementwise with a scalar body (`ipu.map`): the inputs broadcast to the result.
    Map {
        /// The body function's name (for messages).
        name: String,
        body: Arc<scalar::ScalarProgram>,
    },
    /// NumPy broadcasting to the result's shape (`ipu.broadcast`).
    Broadcast,
    /// A strided window (`ipu.slice`): result[i] = input[offsets + i * strides] per axis.
    Slice {
        offsets: Vec<u64>,
        strides: Vec<u64>,
    },
    /// The two operands joined along `axis` (`ipu.concat`).
    Concat {
        axis: usize,
    },
    /// Reduction over the last axis, kept as size 1 (`ipu.reduce`).
    Reduce {
        combiner: crate::ipu::Combiner,
    },
    /// `count` iterations of `body`, planned once. The op's operands are the carried values;
    /// `iterated` are the per-iteration stacks (leading axis `count`), iteration i's body
    /// reading slice i as its arguments after the carried ones.
    Repeat {
        count: u64,
        name: String,
        body: Box<Graph>,
        iterated: Vec<ValueId>,
    },
}

impl OpKind {
    /// The op's name in the IR, for messages.
    pub fn name(&self) -> &'static str {
        match self {
            OpKind::Matmul { .. } => "ipu.matmul",
            OpKind::Add => "ipu.add",
            OpKind::Gelu { .. } => "ipu.gelu",
            OpKind::Softmax => "ipu.softmax",
            OpKind::LayerNorm { .. } => "ipu.layer_norm",
            OpKind::Attention { .. } => "ipu.attention",
            OpKind::Cast { .. } => "ipu.cast",
            OpKind::Rearrange { .. } => "ipu.rearrange",
            OpKind::Reshape => "ipu.reshape",
            // A scan is a repeat over per-iteration stacks.
            OpKind::Repeat { iterated, .. } if !iterated.is_empty() => "ipu.scan",
            OpKind::Repeat { .. } => "ipu.repeat",
            OpKind::Map { .. } => "ipu.map",
            OpKind::Reduce { .. } => "ipu.reduce",
            OpKind::Broadcast => "ipu.broadcast",
            OpKind::Slice { .. } => "ipu.slice",
            OpKind::Concat { .. } => "ipu.concat",
        }
    }
}

/// One op: operands and results are value ids.
#[derive(Debug, Clone, PartialEq)]
pub struct Op {
    pub kind: OpKind,
    pub operands: Vec<ValueId>,
    pub results: Vec<ValueId>,
    /// The op's location as MLIR prints it (`loc("model.mlir":4:8)`); empty for ops built by
    /// hand. See [`Graph::describe_op`].
    pub location: String,
}

impl Op {
    /// Every value the op reads: its operands, then a repeat's per-iteration stacks.
    pub fn reads(&self) -> impl Iterator<Item = &ValueId> + '_ {
        let iterated = match &self.kind {
            OpKind::Repeat { iterated, .. } => iterated.as_slice(),
            _ => &[],
        };
        self.operands.iter().chain(iterated)
    }
}

/// A program in topological (program) order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Graph {
    pub values: Vec<Value>,
    pub ops: Vec<Op>,
    /// In a repeat or scan body: how many of its arguments (the first) are carried device
    /// values, not host tensors (the others are slices of a scan's stacks, streamed from the
    /// host); 0 for a function.
    pub carried: usize,
    /// Values returned by the program (they stay live to the end).
    pub outputs: Vec<ValueId>,
    /// Whole-graph analyses, computed once on first use (see [`Analyses`]).
    pub analyses: Analyses,
}

/// Whole-graph analyses that per-op questions share (e.g. which values the split GEMM
/// lowering holds as ranges), so asking for every op of a long program stays linear. Each is
/// keyed by a name and a precision and recorded with the graph's size: a graph grown after an
/// analysis recomputes it. (Edits that keep the counts must use a new graph.) Clones and
/// comparisons ignore them.
#[derive(Default)]
pub struct Analyses {
    results: Mutex<Vec<AnalysisEntry>>,
}

type AnalysisEntry = (
    &'static str,
    Precision,
    [usize; 3],
    Arc<dyn Any + Send + Sync>,
);

impl Analyses {
    /// The analysis `name` at `precision` of `graph`, computed by `compute` when missing.
    pub fn get<T: Any + Send + Sync>(
        graph: &Graph,
        name: &'static str,
        precision: Precision,
        compute: impl FnOnce() -> T,
    ) -> Arc<T> {
        let size = [graph.values.len(), graph.ops.len(), graph.outputs.len()];
        let stored = |results: &[AnalysisEntry]| {
            results
                .iter()
                .find(|(n, p, s, _)| *n == name && *p == precision && *s == size)
                .and_then(|(.., result)| result.clone().downcast::<T>().ok())
        };
        if let Some(found) = stored(&graph.analyses.lock()) {
            return found;
        }
        let result = Arc::new(compute());
        let mut results = graph.analyses.lock();
        // Another asker may have finished first: every asker gets the first result stored
        // (an analysis holding state, like a memo, must be one per graph).
        if let Some(stored) = stored(&results) {
            return stored;
        }
        results.retain(|(n, p, ..)| !(*n == name && *p == precision));
        results.push((name, precision, size, result.clone()));
        result
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<AnalysisEntry>> {
        // A poisoned lock only means a panic elsewhere while computing; the entries are whole.
        self.results
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Clone for Analyses {
    fn clone(&self) -> Analyses {
        Analyses::default()
    }
}

impl PartialEq for Analyses {
    fn eq(&self, _: &Analyses) -> bool {
        true
    }
}

impl std::fmt::Debug for Analyses {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Analyses")
    }
}

impl Graph {
    /// Whether value `v` comes from the host: a constant, or an argument that is not a
    /// carried value of a body (arguments are the first values: an argument's id is its
    /// position).
    pub fn from_host(&self, v: ValueId) -> bool {
        match self.values[v].origin {
            Origin::Constant => true,
            Origin::Argument => v >= self.carried,
            Origin::Op(_) | Origin::Opaque => false,
        }
    }

    pub fn add_value(&mut self, shape: Vec<u64>, element: Precision, origin: Origin) -> ValueId {
        self.values.push(Value {
            shape,
            element,
            origin,
            max_abs: None,
            scale: 0,
            data: None,
            parameter: None,
        });
        self.values.len() - 1
    }

    /// Adds a constant holding `data` (row-major; one element for a splat).
    pub fn add_constant(&mut self, shape: Vec<u64>, element: Precision, data: Vec<f64>) -> ValueId {
        let id = self.add_value(shape, element, Origin::Constant);
        self.values[id].set_data(data);
        id
    }

    /// The argument values, in order.
    pub fn arguments(&self) -> Vec<ValueId> {
        (0..self.values.len())
            .filter(|&id| self.values[id].origin == Origin::Argument)
            .collect()
    }

    /// Where op `index` is, for messages: its location, or `op <index>` for a hand-built op.
    pub fn describe_op(&self, index: usize) -> String {
        match self.ops.get(index) {
            Some(op) if !op.location.is_empty() => op.location.clone(),
            _ => format!("op {index}"),
        }
    }

    /// Adds an op with one result of `shape` and `element`; returns the result id.
    pub fn add_op(
        &mut self,
        kind: OpKind,
        operands: Vec<ValueId>,
        shape: Vec<u64>,
        element: Precision,
    ) -> ValueId {
        let index = self.ops.len();
        let result = self.add_value(shape, element, Origin::Op(index));
        self.ops.push(Op {
            kind,
            operands,
            results: vec![result],
            location: String::new(),
        });
        result
    }

    /// Adds an op with one result per `(shape, element)` (an `ipu.repeat` carrying several
    /// values); returns the result ids.
    pub fn add_op_results(
        &mut self,
        kind: OpKind,
        operands: Vec<ValueId>,
        results: Vec<(Vec<u64>, Precision)>,
    ) -> Vec<ValueId> {
        let index = self.ops.len();
        let ids: Vec<ValueId> = results
            .into_iter()
            .map(|(shape, element)| self.add_value(shape, element, Origin::Op(index)))
            .collect();
        self.ops.push(Op {
            kind,
            operands,
            results: ids.clone(),
            location: String::new(),
        });
        ids
    }

    /// The index of `op` when it is one of this graph's ops (by address: O(1)).
    pub fn index_of(&self, op: &Op) -> Option<usize> {
        let size = std::mem::size_of::<Op>().max(1);
        let offset = (std::ptr::from_ref(op) as usize).checked_sub(self.ops.as_ptr() as usize)?;
        let index = offset / size;
        (offset % size == 0 && index < self.ops.len()).then_some(index)
    }

    /// Index of the last op reading each value (`None`: never read); program outputs are
    /// read "after" the last op.
    pub fn last_uses(&self) -> Vec<Option<usize>> {
        let mut last = vec![None; self.values.len()];
        for (index, op) in self.ops.iter().enumerate() {
            for &operand in op.reads() {
                last[operand] = Some(index);
            }
        }
        for &output in &self.outputs {
            last[output] = Some(self.ops.len());
        }
        last
    }

    /// Checks operand ids, topological order and the shape rules the planner relies on.
    pub fn check(&self) -> Result<(), GraphError> {
        for (index, op) in self.ops.iter().enumerate() {
            for &operand in op.reads() {
                let Some(value) = self.values.get(operand) else {
                    return Err(GraphError {
                        op: index,
                        detail: format!("operand %{operand} does not exist"),
                    });
                };
                if let Origin::Op(producer) = value.origin {
                    if producer >= index {
                        return Err(GraphError {
                            op: index,
                            detail: format!(
                                "operand %{operand} is produced by op {producer}, not before it"
                            ),
                        });
                    }
                }
            }
            if let OpKind::Repeat { body, .. } = &op.kind {
                body.check()?;
            }
        }
        Ok(())
    }
}

/// The `[batch, m, k, n]` sizes of a matmul, with batch the product of the result's leading
/// axes. `rhs_batched` says whether the right operand has its own batch axes (otherwise it is
/// one weight matrix shared by every batch, and batch folds into the rows).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MatmulDims {
    pub batch: u64,
    pub m: u64,
    pub k: u64,
    pub n: u64,
    pub rhs_batched: bool,
}

impl MatmulDims {
    pub fn of(graph: &Graph, op: &Op) -> Result<MatmulDims, GraphError> {
        let OpKind::Matmul {
            transpose_lhs,
            transpose_rhs,
        } = op.kind
        else {
            return Err(GraphError {
                op: 0,
                detail: "not a matmul".into(),
            });
        };
        let lhs = &graph.values[op.operands[0]].shape;
        let rhs = &graph.values[op.operands[1]].shape;
        if lhs.len() < 2 || rhs.len() < 2 {
            return Err(GraphError {
                op: 0,
                detail: "matmul operands must have rank >= 2".into(),
            });
        }
        let (m, k) = if transpose_lhs {
            (lhs[lhs.len() - 1], lhs[lhs.len() - 2])
        } else {
            (lhs[lhs.len() - 2], lhs[lhs.len() - 1])
        };
        let n = if transpose_rhs {
            rhs[rhs.len() - 2]
        } else {
            rhs[rhs.len() - 1]
        };
        let batch: u64 = lhs[..lhs.len() - 2]
            .iter()
            .product::<u64>()
            .max(rhs[..rhs.len() - 2].iter().product());
        let rhs_batched = rhs[..rhs.len() - 2].iter().product::<u64>() > 1;
        Ok(MatmulDims {
            batch,
            m,
            k,
            n,
            rhs_batched,
        })
    }
}

#[cfg(test)]
mod analyses_tests {
    use super::*;

    /// Askers that all miss and compute at once get the one result stored first.
    #[test]
    fn concurrent_askers_of_one_analysis_share_the_first_result() {
        let mut graph = Graph::default();
        graph.add_value(vec![4, 4], Precision::F16, Origin::Argument);
        let askers = 4;
        let all_computing = std::sync::Barrier::new(askers);
        let results: Vec<Arc<Mutex<u32>>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..askers)
                .map(|_| {
                    scope.spawn(|| {
                        Analyses::get(&graph, "test-state", Precision::F16, || {
                            all_computing.wait();
                            Mutex::new(0u32)
                        })
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("asks"))
                .collect()
        });
        assert!(results.iter().all(|r| Arc::ptr_eq(r, &results[0])));
        // Asked again: the stored one, not computed again.
        let again = Analyses::get(&graph, "test-state", Precision::F16, || Mutex::new(1u32));
        assert!(Arc::ptr_eq(&again, &results[0]));
    }
}
