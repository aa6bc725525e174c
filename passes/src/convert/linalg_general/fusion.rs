//! Which elementwise generics are fused into another op's map: single-use chains, boolean and
//! integer producers recomputed in their readers, and webs of generics sharing intermediates
//! (cones).

use super::*;

/// Whether `op` is a generic with every loop parallel, one result and the identity output map.
pub(super) fn is_elementwise(op: OperationRef) -> bool {
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
    let float = element_kind(result) == Some(scalar::ScalarType::Float);
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
pub(super) fn is_two_input_sum(op: OperationRef) -> bool {
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
pub(super) fn copies_its_input(op: OperationRef) -> bool {
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
pub(super) fn reads_it(
    user: OperationRef,
    result: Value,
    covered: &BTreeSet<usize>,
    any_map: bool,
) -> bool {
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
                    let float = element_kind(result) == Some(scalar::ScalarType::Float);
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
                let float = producer.result(0).ok().and_then(|r| element_kind(r.into()))
                    == Some(scalar::ScalarType::Float);
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
