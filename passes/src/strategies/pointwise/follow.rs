//! In-place and ranged plans made concrete on the home of the operand they follow: the
//! beam knows the homes, the strategy knows what an elementwise op does on one.

use ipu_device::kernels::spec::{ElementOrder, KernelSpec};
use ipu_device::{cost, Target};

use super::in_place_position;
use crate::tiling::layout::{block_size, canonical_dims, Shards};
use crate::tiling::{Candidate, Graph, Need, Op, ValueFormat, ValueId};

/// Candidate `candidate` of elementwise `op`, which follows operand `position` with kernel
/// `spec`, on the homes `home_of` gives: the followed operand's home as its need and its
/// result's (an in-place plan runs on the first full-size operand on the device,
/// [`in_place_position`]; it reads the home's blocks row-major, a home in another order is
/// converted first; a ranged plan reads the ranges in their AMP-output order), and the kernel
/// sized for the home's block and priced by the device cost model. `None` when the followed
/// operand has no home yet.
pub fn on_home<'h>(
    candidate: &Candidate,
    position: usize,
    spec: &KernelSpec,
    (graph, op): (&Graph, &Op),
    home_of: impl Fn(ValueId) -> Option<&'h Need>,
    target: &Target,
) -> Option<Candidate> {
    let in_place = candidate.plan.is_in_place();
    let position = if in_place {
        in_place_position(graph, op, |v| home_of(v).is_some()).unwrap_or(position)
    } else {
        position
    };
    let home = home_of(*op.operands.get(position)?)?;
    let mut concrete = candidate.clone();
    // Read where it lives, in the op's own element type (and FP8 scale): a home in another
    // encoding (a host operand an FP8 product read first, homed as its codes) is converted on
    // its owners first, never computed on in that encoding.
    let own = candidate.needs.get(position)?.format;
    let mut format = ValueFormat {
        precision: own.precision,
        scale: own.scale,
        ..home.format
    };
    // In place on row-major blocks (converted first when the home is in another order),
    // unless the candidate asks for the home's own order (a GeLU of a product in waves, whose
    // placeholders are in AMP-output order: an elementwise kernel runs in any order).
    if in_place && own.order == ElementOrder::RowMajor {
        (format.order, format.transposed) = (ElementOrder::RowMajor, false);
    }
    let followed = Need {
        shards: home.shards.clone(),
        format,
    };
    concrete.needs[position] = followed.clone();
    let elements = u32::try_from(
        home.shards.padded_block_bytes() / u64::from(home.shards.element_bytes.max(1)),
    )
    .unwrap_or(u32::MAX)
    .next_multiple_of(16);
    let mut spec = spec.clone();
    match &mut spec {
        KernelSpec::Gelu { elements: e, .. } | KernelSpec::AddGroupBias { elements: e, .. } => {
            *e = elements
        }
        KernelSpec::Add {
            rows, cols, b_rows, ..
        } => {
            let other = 1 - position.min(1);
            let block = |axis: usize| block_size(home.shards.dims[axis], home.shards.parts[axis]);
            let (r, c) = (
                u32::try_from(block(0) * block(1)).unwrap_or(u32::MAX),
                u32::try_from(block(2)).unwrap_or(u32::MAX),
            );
            (*rows, *cols) = (r, c);
            let full = op.operands.get(other).is_some_and(|&v| {
                canonical_dims(&graph.values[v].shape)
                    == canonical_dims(&graph.values[op.results[0]].shape)
            });
            *b_rows = if full { r } else { 1 };
            if let Some(need) = concrete.needs.get_mut(other) {
                *need = other_operand_need(need, &followed, full);
            }
        }
        _ => {}
    }
    let result = candidate.output.format;
    (format.precision, format.scale) = (result.precision, result.scale);
    concrete.output = Need { format, ..followed };
    concrete.tiles = home
        .shards
        .owners
        .iter()
        .flatten()
        .max()
        .map_or(1, |&t| t + 1);
    concrete.compute_cycles = cost::kernel_cycles(&spec, target);
    concrete.kernels = vec![spec];
    Some(concrete)
}

/// What an in-place add reads of its other operand on the followed home `followed`: the
/// same blocks when it is full-size (fetched onto them), else a row vector whose column
/// blocks every tile of the column reads (the lowering broadcasts it down the column). The
/// operands agree in element type (the followed one's).
fn other_operand_need(need: &Need, followed: &Need, full: bool) -> Need {
    if full {
        return followed.clone();
    }
    let home = &followed.shards;
    let columns = home.parts[2].max(1);
    let mut owners = vec![crate::tiling::layout::Owners::new(); columns as usize];
    for (block, tiles) in home.owners.iter().enumerate() {
        let column = &mut owners[block % columns as usize];
        column.extend(tiles.iter().copied());
        column.sort_unstable();
        column.dedup();
    }
    Need {
        shards: Shards {
            dims: [1, 1, home.dims[2]],
            parts: [1, 1, columns],
            element_bytes: need.shards.element_bytes,
            owners: owners.into(),
        },
        format: ValueFormat {
            precision: followed.format.precision,
            scale: followed.format.scale,
            ..need.format
        },
    }
}
