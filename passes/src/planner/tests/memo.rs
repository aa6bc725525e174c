//! The per-graph memo of op candidates (`candidates::memoized`).

use std::sync::Arc;

use super::*;

#[test]
fn one_question_is_answered_once_and_others_get_their_own_lists() {
    let target = Target::c600();
    let graph = mlp(197, 768, 3072);
    let options = options(1472);
    let first = candidates::memoized(&graph, 0, &options, &target);
    // The same lists `candidates` generates, in the same order.
    let direct = candidates::candidates(&graph, 0, &options, &target);
    assert!(!direct.is_empty());
    assert_eq!(first.len(), direct.len());
    assert!(first.iter().zip(&direct).all(|(a, b)| **a == *b));
    // Asked again, and from other threads at once: the same lists, not generated again.
    assert!(Arc::ptr_eq(
        &first,
        &candidates::memoized(&graph, 0, &options, &target)
    ));
    let fresh = mlp(197, 768, 3072);
    let answers: Vec<_> = std::thread::scope(|scope| {
        let asks: Vec<_> = (0..4)
            .map(|_| scope.spawn(|| candidates::memoized(&fresh, 0, &options, &target)))
            .collect();
        asks.into_iter()
            .map(|ask| ask.join().expect("asks"))
            .collect()
    });
    assert!(answers.iter().all(|a| Arc::ptr_eq(a, &answers[0])));
    assert!(
        !Arc::ptr_eq(&answers[0], &first),
        "another graph has its own memo"
    );
    // Another op, another option or another target table is another question.
    let other_op = candidates::memoized(&graph, 2, &options, &target);
    assert!(!Arc::ptr_eq(&other_op, &first));
    let fewer_tiles = super::options(736);
    let narrower = candidates::memoized(&graph, 0, &fewer_tiles, &target);
    assert!(!Arc::ptr_eq(&narrower, &first));
    assert_eq!(
        narrower.len(),
        candidates::candidates(&graph, 0, &fewer_tiles, &target).len()
    );
    let tighter = PlannerOptions {
        total_budget: options.total_budget / 2,
        ..options.clone()
    };
    assert!(!Arc::ptr_eq(
        &candidates::memoized(&graph, 0, &tighter, &target),
        &first
    ));
    let mut slower = Target::c600();
    slower.exchange.bytes_per_cycle.value = 2;
    assert!(!Arc::ptr_eq(
        &candidates::memoized(&graph, 0, &options, &slower),
        &first
    ));
    // Constraints do not change what is generated (the beam filters afterwards).
    let pinned = PlannerOptions {
        constraints: Constraints::parse(r#"{"ops": [{"op": 0, "kind": "gemm_general"}]}"#)
            .expect("parses"),
        ..options.clone()
    };
    assert!(Arc::ptr_eq(
        &candidates::memoized(&graph, 0, &pinned, &target),
        &first
    ));
    // ... except a GEMM in waves pinned whole, a candidate of its own: another question.
    let waves = PlannerOptions {
        constraints: Constraints::parse(
            r#"{"ops": [{"op": 0, "kind": "gemm_waves", "params": {"grid": [2, 2], "tiles": 4}}]}"#,
        )
        .expect("parses"),
        ..options.clone()
    };
    assert!(!Arc::ptr_eq(
        &candidates::memoized(&graph, 0, &waves, &target),
        &first
    ));
}
