//! The extraction cost: cycles of each node from the device cost models at `tiles` tiles (the
//! same target table the planner reads), with explicit tie-breaks.
//!
//! | node | cycles |
//! |---|---|
//! | matmul (any flags) | `ideal_gemm_cycles(M, N, K * batch)` over the tiles; flags are free |
//! | `t` | a row-major copy of the tensor's bytes, its elements spread over the tiles |
//! | add, gelu, cast | the vector kernel on `ceil(elements / tiles)` elements |
//! | softmax, layer_norm | the row kernel on `ceil(rows / tiles)` rows |
//! | leaves, attributes | 0 |

use egg::{CostFunction, Id, Language};
use ipu_device::{
    cost::{
        add_cycles, cast_cycles, gelu_cycles, ideal_gemm_cycles, layer_norm_cycles,
        rearrange_cycles, softmax_cycles,
    },
    kernels::spec::{ElementOrder, GeluForm},
    target::Target,
};

use super::language::{node_data, Data, Ipu, IpuGraph};

fn narrow(value: u64) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}

/// Cycles of one node, given its children's data and its own (`None` when it has no cost).
pub fn node_cycles<'d>(
    node: &Ipu,
    child: impl Fn(Id) -> &'d Data,
    tiles: u32,
    target: &Target,
) -> u64 {
    let own = node_data(node, &child);
    let Some(result) = own.tensor() else { return 0 };
    let tiles64 = u64::from(tiles.max(1));
    let per_tile = |count: u64| narrow(count.div_ceil(tiles64));
    let elements = result.elements();
    match node {
        Ipu::Leaf(_) | Ipu::Attr(_) => 0,
        Ipu::Matmul([a, _])
        | Ipu::MatmulTl([a, _])
        | Ipu::MatmulTr([a, _])
        | Ipu::MatmulTt([a, _]) => {
            let Some(lhs) = child(*a).tensor() else {
                return 0;
            };
            let (transpose_lhs, _) = node.matmul_flags().unwrap_or((false, false));
            let rank = lhs.shape.len();
            let k = if transpose_lhs {
                lhs.shape[rank - 2]
            } else {
                lhs.shape[rank - 1]
            };
            let (rows, n) = result.rows_and_columns();
            ideal_gemm_cycles(rows, n, k.max(0) as u64, result.element, tiles, target)
        }
        Ipu::Transpose(_) => rearrange_cycles(
            ElementOrder::RowMajor,
            result.element,
            per_tile(elements),
            1,
            target,
        ),
        Ipu::Add(_) => add_cycles(result.element, per_tile(elements), 1, target),
        Ipu::Gelu(_) => gelu_cycles(GeluForm::Erf, per_tile(elements), target),
        Ipu::GeluTanh(_) => gelu_cycles(GeluForm::Tanh, per_tile(elements), target),
        Ipu::Cast([_, a]) => {
            let Some(input) = child(*a).tensor() else {
                return 0;
            };
            cast_cycles(input.element, result.element, per_tile(elements), target)
        }
        Ipu::Softmax(_) | Ipu::LayerNorm(_) => {
            let (rows, columns) = result.rows_and_columns();
            let (rows, columns) = (per_tile(rows), narrow(columns));
            if matches!(node, Ipu::Softmax(_)) {
                softmax_cycles(result.element, rows, columns, target)
            } else {
                layer_norm_cycles(result.element, rows, columns, target)
            }
        }
    }
}

/// An extraction cost: cycles first, then op count, then a preference for the operand order
/// of the input program (a commuted add whose operands are out of insertion order costs one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Cost {
    pub cycles: u64,
    pub ops: u64,
    pub reordered: u64,
}

impl Cost {
    fn plus(self, other: Cost) -> Cost {
        Cost {
            cycles: self.cycles.saturating_add(other.cycles),
            ops: self.ops.saturating_add(other.ops),
            reordered: self.reordered.saturating_add(other.reordered),
        }
    }
}

/// The cycle cost function over an e-graph.
pub struct CycleCost<'g> {
    pub egraph: &'g IpuGraph,
    pub tiles: u32,
    pub target: &'g Target,
}

impl CycleCost<'_> {
    /// The cost of `node` alone (not its children).
    pub fn own(&self, node: &Ipu) -> Cost {
        let egraph = self.egraph;
        let cycles = node_cycles(node, |id| &egraph[id].data, self.tiles, self.target);
        let is_op = !matches!(node, Ipu::Leaf(_) | Ipu::Attr(_));
        let reordered = match node {
            Ipu::Add([a, b]) if egraph.find(*a) > egraph.find(*b) => 1,
            _ => 0,
        };
        Cost {
            cycles,
            ops: u64::from(is_op),
            reordered,
        }
    }
}

impl CostFunction<Ipu> for CycleCost<'_> {
    type Cost = Cost;

    fn cost<C>(&mut self, enode: &Ipu, mut costs: C) -> Cost
    where
        C: FnMut(Id) -> Cost,
    {
        enode
            .children()
            .iter()
            .fold(self.own(enode), |total, &child| total.plus(costs(child)))
    }
}
