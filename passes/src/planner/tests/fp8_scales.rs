//! FP8 operand scales: chosen from data ranges at their boundaries, propagated, pinned.

use super::*;

/// The scales GEMM candidates give their operands for a calibrated argument of
/// `max_abs` (lhs) and a constant of 0.5 (rhs), under `fp8_scale`.
fn gemm_operand_scales(max_abs: f64, fp8_scale: Option<i64>) -> Vec<(i64, i64)> {
    let mut graph = Graph::default();
    let x = graph.add_value(vec![32, 64], Precision::F16, Origin::Argument);
    let w = graph.add_value(vec![64, 32], Precision::F16, Origin::Constant);
    graph.values[x].max_abs = Some(max_abs);
    graph.values[w].max_abs = Some(0.5);
    let y = graph.add_op(
        OpKind::Matmul {
            transpose_lhs: false,
            transpose_rhs: false,
        },
        vec![x, w],
        vec![32, 32],
        Precision::F16,
    );
    graph.outputs.push(y);
    let mut options = options(4);
    options.precision = PrecisionPolicy::Fp8;
    options.fp8_scale = fp8_scale;
    let candidates = candidates::candidates(&graph, 0, &options, &Target::c600());
    assert!(!candidates.is_empty());
    candidates
        .iter()
        .map(|candidate| {
            let scales = (
                candidate.needs[0].format.scale,
                candidate.needs[1].format.scale,
            );
            let recorded = candidate
                .plan
                .scales()
                .expect("FP8 plans record their scales");
            assert_eq!((i64::from(recorded.lhs), i64::from(recorded.rhs)), scales);
            scales
        })
        .collect()
}

#[test]
fn fp8_scales_of_calibrated_operands_follow_the_rule_at_its_boundaries() {
    // 240 * 2^s is the largest magnitude scale s holds (F143's largest finite value is 240):
    // exactly there the scale is s, just above it s + 1.
    for s in -31i64..=30 {
        let edge = 240.0 * 2f64.powi(s as i32);
        let above = f64::from_bits(edge.to_bits() + 1);
        assert_eq!(cost::fp8_scale_for(edge), s, "max_abs = 240 * 2^{s}");
        assert_eq!(cost::fp8_scale_for(above), s + 1, "just above 240 * 2^{s}");
        assert_eq!(cost::fp8_scale_for(edge * 0.75), s, "inside scale {s}");
        for (max_abs, expected) in [(edge, s), (above, s + 1)] {
            for (lhs, rhs) in gemm_operand_scales(max_abs, None) {
                assert_eq!(lhs, cost::fp8_scale_for(max_abs));
                assert_eq!(lhs, expected);
                assert_eq!(rhs, -8, "0.5 / 2^-8 = 128 <= 240 < 0.5 / 2^-9");
            }
        }
    }
    // Clamped to the device's exponent range; no range (0 or unknown): 0.
    assert_eq!(cost::fp8_scale_for(240.0 * 2f64.powi(40)), 31);
    assert_eq!(cost::fp8_scale_for(240.0 * 2f64.powi(-40)), -31);
    assert_eq!(cost::fp8_scale_for(0.0), 0);
    assert_eq!(cost::fp8_scale_for(f64::INFINITY), 0);
    // A given scale overrides every range.
    for scales in gemm_operand_scales(1000.0, Some(-2)) {
        assert_eq!(scales, (-2, -2));
    }
}

#[test]
fn ranges_propagate_through_matmul_add_and_gelu() {
    let mut graph = mlp(16, 64, 512);
    graph.values[0].max_abs = Some(2.0);
    graph.values[1].max_abs = Some(0.25);
    graph.values[2].max_abs = Some(0.5);
    ranges::propagate(&mut graph);
    // h = x @ w1 with K = 64: 64 * 2 * 0.25; GeLU keeps it.
    assert_eq!(graph.values[3].max_abs, Some(32.0));
    assert_eq!(graph.values[4].max_abs, Some(32.0));
    // y = g @ w2 has K = 512 > MATMUL_BOUND_MAX_K: the worst-case bound is not used.
    assert_eq!(graph.values[5].max_abs, None);
    // GeLU of small data is bounded by its negative lobe; add sums the bounds.
    let mut graph = Graph::default();
    let x = graph.add_value(vec![4, 8], Precision::F16, Origin::Argument);
    let b = graph.add_value(vec![8], Precision::F16, Origin::Constant);
    graph.values[x].max_abs = Some(0.01);
    graph.values[b].max_abs = Some(1.5);
    let g = graph.add_op(
        OpKind::Gelu { tanh: false },
        vec![x],
        vec![4, 8],
        Precision::F16,
    );
    let s = graph.add_op(OpKind::Add, vec![g, b], vec![4, 8], Precision::F16);
    let u = graph.add_op(OpKind::Add, vec![s, x], vec![4, 8], Precision::F16);
    let unknown = graph.add_value(vec![4, 8], Precision::F16, Origin::Argument);
    let v = graph.add_op(OpKind::Add, vec![u, unknown], vec![4, 8], Precision::F16);
    ranges::propagate(&mut graph);
    assert_eq!(graph.values[g].max_abs, Some(ranges::GELU_NEGATIVE_BOUND));
    assert_eq!(graph.values[s].max_abs, Some(0.17 + 1.5));
    assert_eq!(graph.values[u].max_abs, Some(0.17 + 1.5 + 0.01));
    assert_eq!(graph.values[v].max_abs, None);
}

#[test]
fn pinned_scales_reproduce_calibrated_ones() {
    let target = Target::c600();
    let mut graph = mlp(32, 64, 128);
    graph.values[0].max_abs = Some(3.0);
    let mut options = options(8);
    options.precision = PrecisionPolicy::Fp8;
    let planned = plan(&graph, &options, &target).expect("plans");
    let plans: Vec<(String, OperatorPlan)> = planned.finalists[0]
        .plans
        .iter()
        .enumerate()
        .map(|(index, candidate)| (index.to_string(), candidate.plan.clone()))
        .collect();
    assert_eq!(
        plans[0].1.scales().map(|s| i64::from(s.lhs)),
        Some(cost::fp8_scale_for(3.0))
    );
    // Without the range, the dump as constraints gives back the same scales and plans.
    graph.values[0].max_abs = None;
    let mut pinned = options.clone();
    pinned.constraints = Constraints::parse(&Constraints::dump(&plans)).expect("parses");
    let replanned = plan(&graph, &pinned, &target).expect("replans");
    for (index, candidate) in replanned.finalists[0].plans.iter().enumerate() {
        assert_eq!(candidate.plan, plans[index].1);
    }
    assert_eq!(replanned.finalists[0].plans[0].needs[0].format.scale, -6);
    let derived =
        derive(&graph, &options, &target, &[pinned.constraints.clone()]).expect("derives");
    assert_eq!(derived[0].plans[0].needs[0].format.scale, -6);
    assert_eq!(derived[0].estimate, planned.finalists[0].estimate);
}
