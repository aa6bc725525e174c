//! Planner unit tests: cost terms against the target table's formulas, seeded coverage
//! properties of layouts, recomputation of finalists' costs, budgets, constraints, repeats.

use std::sync::Arc;

use ipu_dialects::plan::{AttentionPlan, AttentionSchedule, OperatorPlan};

use ipu_device::{kernels::spec::ElementOrder, MemoryClass, Precision, Target};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::cost::{conversion_cycles, ValueFormat};
use super::layout::{block_range, for_each_transfer, split_is_exact_cover, PhaseLoad, Shards};
use super::*;

fn mlp(tokens: u64, hidden: u64, inner: u64) -> Graph {
    let mut graph = Graph::default();
    let x = graph.add_value(vec![tokens, hidden], Precision::F16, Origin::Argument);
    let w1 = graph.add_value(vec![hidden, inner], Precision::F16, Origin::Constant);
    let w2 = graph.add_value(vec![inner, hidden], Precision::F16, Origin::Constant);
    let h = graph.add_op(
        OpKind::Matmul {
            transpose_lhs: false,
            transpose_rhs: false,
        },
        vec![x, w1],
        vec![tokens, inner],
        Precision::F16,
    );
    let g = graph.add_op(
        OpKind::Gelu { tanh: true },
        vec![h],
        vec![tokens, inner],
        Precision::F16,
    );
    let y = graph.add_op(
        OpKind::Matmul {
            transpose_lhs: false,
            transpose_rhs: false,
        },
        vec![g, w2],
        vec![tokens, hidden],
        Precision::F16,
    );
    graph.outputs.push(y);
    graph
}

fn options(tiles: u32) -> PlannerOptions {
    PlannerOptions::new(tiles, &Target::c600())
}

#[test]
fn gemm_term_is_the_calibrated_call() {
    // The output-stationary strategy prices a grid by its GEMM calls: one 64 x 64 call per K
    // block, each the calibrated call of the cost table.
    let target = Target::c600();
    for rows in [1u32, 16, 32, 100] {
        let grid = crate::strategies::gemm::GemmGrid::planned(rows, 64, 64, 1, 1).unwrap();
        assert_eq!((grid.kb, grid.cb, grid.k_steps), (64, 64, 1));
        assert_eq!(
            grid.calls_cycles(Precision::F16, &target),
            294 + 64 * u64::from(rows) + 4 * 940
        );
        let standard = ipu_device::cost::gemm_call_cycles(
            Precision::F16,
            MemoryClass::Standard,
            64,
            64,
            rows,
            &target,
        );
        assert_eq!(standard, 294 + 64 * u64::from(rows) + 4 * 1063);
    }
}

#[test]
fn exchange_and_conversion_terms_are_the_table_formulas() {
    let target = Target::c600();
    let mut load = PhaseLoad::new(8);
    load.add_transfer(0, &[2, 4], 400);
    load.add_transfer(1, &[4], 100);
    // Bus 0 (logical 0 and 1) sends 500 bytes; tile 4 receives 500: 600 + 500 / 4.
    assert_eq!(load.max_bus_out(), 500);
    assert_eq!(load.max_tile_in(), 500);
    assert_eq!(load.cycles(&target), 600 + 125);
    assert_eq!(PhaseLoad::new(8).cycles(&target), 0);
    let f16 = ValueFormat::row_major(Precision::F16);
    let f8 = ValueFormat::row_major(Precision::F8E4M3);
    // Cast: (input + output bytes) / 8 + 11.
    assert_eq!(
        conversion_cycles(&f16, &f8, 800, 800, &target),
        ((800 * 3) / 8 + 11, 0)
    );
    // Row-major to AMP-left: 4 cycles per element + 11.
    let amp = ValueFormat {
        order: ElementOrder::AmpLeft,
        ..f16
    };
    assert_eq!(
        conversion_cycles(&f16, &amp, 100, 100, &target),
        (4 * 100 + 11, 0)
    );
}

/// Seeded property: every split the planner may choose covers each element exactly once
/// and blocks are disjoint.
#[test]
fn layouts_cover_every_element_once() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for _ in 0..300 {
        let dims = [
            rng.random_range(1..4u64),
            rng.random_range(1..40u64),
            rng.random_range(1..40u64),
        ];
        let parts = [0, 1, 2].map(|axis| rng.random_range(1..=dims[axis].min(9) as u32));
        if !(0..3).all(|axis| split_is_exact_cover(dims[axis], parts[axis])) {
            continue;
        }
        let shards = Shards::homed(dims, parts, 2, 0);
        let mut seen = vec![0u8; (dims[0] * dims[1] * dims[2]) as usize];
        for block in 0..shards.owners.len() {
            let ranges = shards.block_ranges(block);
            assert!(
                ranges.iter().all(|(lo, hi)| lo < hi),
                "empty block {block} in {dims:?} / {parts:?}"
            );
            for a in ranges[0].0..ranges[0].1 {
                for b in ranges[1].0..ranges[1].1 {
                    for c in ranges[2].0..ranges[2].1 {
                        seen[((a * dims[1] + b) * dims[2] + c) as usize] += 1;
                    }
                }
            }
        }
        assert!(seen.iter().all(|&count| count == 1), "{dims:?} / {parts:?}");
        // Moving to another blocking delivers exactly the bytes each tile lacks.
        let other_parts = [0, 1, 2].map(|axis| rng.random_range(1..=dims[axis].min(5) as u32));
        if (0..3).all(|axis| split_is_exact_cover(dims[axis], other_parts[axis])) {
            let other = Shards::homed(dims, other_parts, 2, 0);
            let mut received = 0u64;
            for_each_transfer(&shards, &other, |_, receivers, bytes| {
                received += bytes * receivers.len() as u64
            });
            let mut resident = 0u64;
            for block in 0..other.owners.len() {
                let tile = other.owners[block][0] as usize;
                if tile < shards.owners.len() {
                    let (mine, theirs) = (other.block_ranges(block), shards.block_ranges(tile));
                    resident += (0..3)
                        .map(|axis| {
                            mine[axis]
                                .1
                                .min(theirs[axis].1)
                                .saturating_sub(mine[axis].0.max(theirs[axis].0))
                        })
                        .product::<u64>()
                        * 2;
                }
            }
            assert_eq!(received + resident, dims.iter().product::<u64>() * 2);
        }
    }
    assert_eq!(block_range(10, 4, 3), (9, 10));
}

/// Seeded property over real plans: each GEMM candidate's output blocks are disjoint, cover
/// the result once and have one home each; each grid tile reads exactly one block per operand.
#[test]
fn gemm_plans_cover_the_output_once() {
    let target = Target::c600();
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for _ in 0..12 {
        let (m, k, n) = (
            rng.random_range(1..200u64),
            rng.random_range(16..300u64),
            rng.random_range(16..300u64),
        );
        let mut graph = Graph::default();
        let a = graph.add_value(vec![m, k], Precision::F16, Origin::Argument);
        let b = graph.add_value(vec![k, n], Precision::F16, Origin::Constant);
        graph.add_op(
            OpKind::Matmul {
                transpose_lhs: false,
                transpose_rhs: false,
            },
            vec![a, b],
            vec![m, n],
            Precision::F16,
        );
        let tiles = [4u32, 16, 64][rng.random_range(0..3)];
        for candidate in candidates::candidates(&graph, 0, &options(tiles), &target) {
            let output = &candidate.output.shards;
            let mut homes: Vec<u32> = output
                .owners
                .iter()
                .map(|owners| {
                    assert_eq!(owners.len(), 1);
                    owners[0]
                })
                .collect();
            let covered: u64 = (0..output.owners.len())
                .map(|block| {
                    output
                        .block_ranges(block)
                        .iter()
                        .map(|(lo, hi)| hi - lo)
                        .product::<u64>()
                })
                .sum();
            assert_eq!(covered, m * n, "{}", candidate.plan);
            homes.sort_unstable();
            homes.dedup();
            assert_eq!(
                homes.len(),
                output.owners.len(),
                "two blocks share a home in {}",
                candidate.plan
            );
            for need in &candidate.needs {
                let mut readers: Vec<u32> = need.shards.owners.iter().flatten().copied().collect();
                readers.sort_unstable();
                let count = readers.len();
                readers.dedup();
                assert_eq!(
                    readers.len(),
                    count,
                    "a tile reads two blocks in {}",
                    candidate.plan
                );
                assert_eq!(count as u32, candidate.tiles);
            }
        }
    }
}

#[test]
fn finalists_costs_equal_a_recomputation() {
    let target = Target::c600();
    let graph = mlp(128, 256, 512);
    let options = options(64);
    let planned = plan(&graph, &options, &target).expect("plans");
    assert!(!planned.finalists.is_empty());
    for finalist in &planned.finalists {
        let chosen: Vec<(usize, Arc<Candidate>)> = finalist
            .choices
            .iter()
            .enumerate()
            .map(|(op, &c)| (c, planned.candidates[op][c].clone()))
            .collect();
        let again = evaluate(&graph, &chosen, &options, &target).expect("evaluates");
        assert_eq!(again.estimate, finalist.estimate);
        assert_eq!(again.ops, finalist.ops);
        let sum: u64 = finalist.ops.iter().map(|op| op.cycles).sum();
        assert_eq!(sum, finalist.estimate.cycles);
        assert!(finalist.estimate.peak_total <= options.total_budget);
    }
    // Best first.
    let cycles: Vec<u64> = planned
        .finalists
        .iter()
        .map(|f| f.estimate.cycles)
        .collect();
    assert!(cycles.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn a_graph_that_cannot_fit_names_the_class_and_shortfall() {
    let target = Target::c600();
    let graph = mlp(4096, 4096, 4096);
    let error = plan(&graph, &options(1), &target).expect_err("does not fit one tile");
    match error {
        PlannerError::OutOfMemory {
            op,
            short,
            needed,
            budget,
            ..
        } => {
            assert_eq!(op, 0);
            assert_eq!(needed - budget, short);
            assert!(short > 0);
        }
        other => panic!("expected out of memory, got {other}"),
    }
}

#[test]
fn constraints_pin_plans_and_dumps_reproduce_them() {
    let target = Target::c600();
    let graph = mlp(64, 128, 256);
    let mut options = options(16);
    options.constraints = Constraints::parse(r#"{"ops": [{"op": 0, "kind": "gemm_output_stationary", "params": {"grid": [1, 4, 4, 1], "weights": "standard"}}]}"#).expect("parses");
    let planned = plan(&graph, &options, &target).expect("plans");
    let best = &planned.finalists[0];
    let OperatorPlan::Gemm(gemm) = &best.plans[0].plan else {
        panic!("not a GEMM plan: {}", best.plans[0].plan);
    };
    assert_eq!(
        (
            gemm.grid.batch,
            gemm.grid.rows,
            gemm.grid.cols,
            gemm.grid.k_split
        ),
        (1, 4, 4, 1)
    );
    assert_eq!(gemm.weights, ipu_dialects::format::Memory::Standard);
    let dump = Constraints::dump(
        &best
            .plans
            .iter()
            .enumerate()
            .map(|(i, c)| (i.to_string(), c.plan.clone()))
            .collect::<Vec<_>>(),
    );
    options.constraints = Constraints::parse(&dump).expect("dump parses");
    let again = plan(&graph, &options, &target).expect("plans");
    assert_eq!(again.finalists[0].estimate, best.estimate);
    assert!(again.candidates.iter().all(|c| c.len() == 1));
    assert!(Constraints::parse("{\"ops\": [{}]}").is_err());
}

#[test]
fn repeat_bodies_are_planned_once() {
    let target = Target::c600();
    let body = {
        let mut body = Graph::default();
        let x = body.add_value(vec![64, 64], Precision::F16, Origin::Argument);
        let y = body.add_op(
            OpKind::Gelu { tanh: true },
            vec![x],
            vec![64, 64],
            Precision::F16,
        );
        body.outputs.push(y);
        body
    };
    let mut graph = Graph::default();
    let x = graph.add_value(vec![64, 64], Precision::F16, Origin::Argument);
    let y = graph.add_op(
        OpKind::Repeat {
            count: 10,
            name: "layer".into(),
            body: Box::new(body),
        },
        vec![x],
        vec![64, 64],
        Precision::F16,
    );
    graph.outputs.push(y);
    let planned = plan(&graph, &options(16), &target).expect("plans");
    let best = &planned.finalists[0];
    let body_plan = best.bodies.get(&0).expect("body planned");
    assert_eq!(body_plan.plans.len(), 1);
    assert!(best.estimate.cycles >= 10 * body_plan.estimate.cycles);
}

#[test]
fn attention_and_row_ops_have_plans() {
    let target = Target::c600();
    let mut graph = Graph::default();
    let q = graph.add_value(vec![4, 128, 64], Precision::F16, Origin::Argument);
    let a = graph.add_op(
        OpKind::Attention {
            causal: true,
            scale: None,
        },
        vec![q, q, q],
        vec![4, 128, 64],
        Precision::F16,
    );
    let gamma = graph.add_value(vec![64], Precision::F16, Origin::Constant);
    let n = graph.add_op(
        OpKind::LayerNorm { epsilon: 1e-5 },
        vec![a, gamma, gamma],
        vec![4, 128, 64],
        Precision::F16,
    );
    let s = graph.add_op(OpKind::Softmax, vec![n], vec![4, 128, 64], Precision::F16);
    graph.outputs.push(s);
    let planned = plan(&graph, &options(64), &target).expect("plans");
    let kinds: Vec<&str> = planned.candidates[0]
        .iter()
        .map(|c| c.plan.kind())
        .collect();
    assert!(kinds.contains(&"attention_blocked"), "{kinds:?}");
    assert!(planned.finalists[0].estimate.cycles > 0);
}

#[test]
fn screened_mappings_are_permutations() {
    for tiles in [1u32, 2, 16, 64, 1472] {
        for mapping in expand::mappings(tiles, 64, 100) {
            assert!(
                mapping.is_permutation(),
                "{} on {tiles} tiles",
                mapping.name
            );
            assert_eq!(mapping.tiles.len(), tiles as usize);
        }
    }
    assert!(expand::mappings(1472, 64, 100).len() >= 9);
    assert_eq!(expand::mappings(1472, 64, 1).len(), 1);
}

/// Under the grid order the expanded plan's physical model equals the planner's analytical
/// estimate (logical pairs 2k, 2k + 1 are physical pairs), and the physical schedule of every
/// phase is hazard-free and no shorter than its busiest endpoint.
#[test]
fn expansion_under_the_grid_order_reproduces_the_estimate() {
    let target = Target::c600();
    for (tiles, graph) in [(64, mlp(128, 256, 512)), (16, mlp(64, 128, 256))] {
        let planned = plan(&graph, &options(tiles), &target).expect("plans");
        for finalist in &planned.finalists {
            let expanded = expand::expand(&graph, finalist, &expand::Mapping::identity(tiles));
            let (cycles, exchange, _) = expand::model(&expanded, &target);
            assert_eq!(exchange, finalist.estimate.exchange_cycles);
            assert_eq!(cycles, finalist.estimate.cycles);
            for phase in &expanded.phases {
                let schedule =
                    crate::exchange::schedule_phase(&phase.transfers, &target).expect("schedules");
                crate::exchange::check_schedule(&phase.transfers, &schedule, &target)
                    .expect("hazard-free");
                let (bus, tile) = expand::physical_loads(&phase.transfers, &target);
                assert!(schedule.horizon * 4 >= bus.max(tile));
            }
        }
    }
}

#[test]
fn large_gemms_stream_k_panels_to_fit() {
    let target = Target::c600();
    let mut graph = Graph::default();
    let a = graph.add_value(vec![4096, 4096], Precision::F16, Origin::Argument);
    let b = graph.add_value(vec![4096, 4096], Precision::F16, Origin::Constant);
    let c = graph.add_op(
        OpKind::Matmul {
            transpose_lhs: false,
            transpose_rhs: false,
        },
        vec![a, b],
        vec![4096, 4096],
        Precision::F16,
    );
    graph.outputs.push(c);
    let planned = plan(&graph, &options(1472), &target).expect("fits by streaming");
    let best = &planned.finalists[0];
    // The split GEMM streams K in panels inside the op (its phases are internal).
    assert!(matches!(&best.plans[0].plan, OperatorPlan::Gemm(gemm) if gemm.k_steps > 1));
    assert!(best.plans[0].internal_phases.len() > 1);
    assert!(best.estimate.peak_interleaved <= options(1472).interleaved_budget);
    let ideal =
        ipu_device::cost::ideal_gemm_cycles(4096, 4096, 4096, Precision::F16, 1472, &target);
    assert!(best.estimate.cycles >= ideal);
}

/// Seeded property over every op kind's candidates: the result's blocks are disjoint, cover
/// it exactly once and each has one home; no tile is home to two blocks.
#[test]
fn every_plan_covers_its_result_once() {
    let target = Target::c600();
    let mut rng = ChaCha8Rng::seed_from_u64(23);
    for _ in 0..8 {
        let (b, s, d) = (
            rng.random_range(1..5u64),
            rng.random_range(8..80u64),
            rng.random_range(16..96u64),
        );
        let mut graph = Graph::default();
        let x = graph.add_value(vec![b, s, d], Precision::F16, Origin::Argument);
        let bias = graph.add_value(vec![d], Precision::F16, Origin::Constant);
        graph.add_op(OpKind::Add, vec![x, bias], vec![b, s, d], Precision::F16);
        graph.add_op(
            OpKind::Gelu { tanh: false },
            vec![x],
            vec![b, s, d],
            Precision::F16,
        );
        graph.add_op(OpKind::Softmax, vec![x], vec![b, s, d], Precision::F16);
        graph.add_op(
            OpKind::LayerNorm { epsilon: 1e-5 },
            vec![x, bias, bias],
            vec![b, s, d],
            Precision::F16,
        );
        graph.add_op(
            OpKind::Attention {
                causal: rng.random_bool(0.5),
                scale: None,
            },
            vec![x, x, x],
            vec![b, s, d],
            Precision::F16,
        );
        graph.add_op(
            OpKind::Cast { scale: 0 },
            vec![x],
            vec![b, s, d],
            Precision::F32,
        );
        graph.add_op(
            OpKind::Rearrange {
                permutation: Some(vec![0, 2, 1]),
            },
            vec![x],
            vec![b, d, s],
            Precision::F16,
        );
        let tiles = [4u32, 16, 64][rng.random_range(0..3)];
        for index in 0..graph.ops.len() {
            let result = &graph.values[graph.ops[index].results[0]];
            let total: u64 = result.shape.iter().product();
            for candidate in candidates::candidates(&graph, index, &options(tiles), &target) {
                let output = &candidate.output.shards;
                let mut seen = std::collections::BTreeSet::new();
                let mut covered = 0u64;
                for (block, owners) in output.owners.iter().enumerate() {
                    assert_eq!(owners.len(), 1, "{}", candidate.plan);
                    assert!(
                        seen.insert(owners[0]),
                        "two blocks share tile {} in {}",
                        owners[0],
                        candidate.plan
                    );
                    let ranges = output.block_ranges(block);
                    assert!(
                        ranges.iter().all(|(lo, hi)| lo < hi),
                        "empty block in {}",
                        candidate.plan
                    );
                    covered += ranges.iter().map(|(lo, hi)| hi - lo).product::<u64>();
                }
                assert_eq!(covered, total, "{}", candidate.plan);
                assert!(
                    candidate.kernels.iter().all(|spec| spec.validate().is_ok()),
                    "{}",
                    candidate.plan
                );
            }
        }
    }
}

/// Seeded robustness: random chains of ops with random shapes, tile counts, precisions and
/// budgets plan or fail with an error, never panic; successful plans recompute exactly.
#[test]
fn random_programs_plan_or_fail_cleanly() {
    let target = Target::c600();
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    for _ in 0..25 {
        let mut graph = Graph::default();
        let rows = rng.random_range(1..300u64);
        let mut width = rng.random_range(1..300u64);
        let mut current = graph.add_value(vec![rows, width], Precision::F16, Origin::Argument);
        for _ in 0..rng.random_range(1..5) {
            current = match rng.random_range(0..4) {
                0 => {
                    let next = rng.random_range(1..300u64);
                    let w = graph.add_value(vec![width, next], Precision::F16, Origin::Constant);
                    width = next;
                    graph.add_op(
                        OpKind::Matmul {
                            transpose_lhs: false,
                            transpose_rhs: false,
                        },
                        vec![current, w],
                        vec![rows, width],
                        Precision::F16,
                    )
                }
                1 => graph.add_op(
                    OpKind::Gelu { tanh: true },
                    vec![current],
                    vec![rows, width],
                    Precision::F16,
                ),
                2 => graph.add_op(
                    OpKind::Softmax,
                    vec![current],
                    vec![rows, width],
                    Precision::F16,
                ),
                _ => {
                    let bias = graph.add_value(vec![width], Precision::F16, Origin::Constant);
                    graph.add_op(
                        OpKind::Add,
                        vec![current, bias],
                        vec![rows, width],
                        Precision::F16,
                    )
                }
            };
        }
        graph.outputs.push(current);
        let mut options = options([1u32, 7, 16, 64, 1472][rng.random_range(0..5)]);
        options.precision = [
            PrecisionPolicy::F32,
            PrecisionPolicy::F16,
            PrecisionPolicy::Fp8,
        ][rng.random_range(0..3)];
        if rng.random_bool(0.3) {
            options.total_budget = rng.random_range(1_000..100_000);
        }
        if let Ok(planned) = plan(&graph, &options, &target) {
            let best = &planned.finalists[0];
            let chosen: Vec<(usize, Arc<Candidate>)> = best
                .choices
                .iter()
                .enumerate()
                .map(|(op, &c)| (c, planned.candidates[op][c].clone()))
                .collect();
            assert_eq!(
                evaluate(&graph, &chosen, &options, &target)
                    .expect("evaluates")
                    .estimate,
                best.estimate
            );
        }
    }
}

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

/// Attention whose whole score rows do not fit a tile streams the keys in blocks: the
/// candidate for one batch-head query block per tile is `attention_flash` with the lowering's
/// key block, priced by the lowering's own model (one exchange phase per key block).
#[test]
fn long_attention_is_planned_flash_style_with_the_lowerings_key_block() {
    let target = Target::c600();
    let mut graph = Graph::default();
    let shape = vec![2, 256, 64];
    let q = graph.add_value(shape.clone(), Precision::F32, Origin::Argument);
    let k = graph.add_value(shape.clone(), Precision::F32, Origin::Argument);
    let v = graph.add_value(shape.clone(), Precision::F32, Origin::Argument);
    let out = graph.add_op(
        OpKind::Attention {
            causal: true,
            scale: None,
        },
        vec![q, k, v],
        shape,
        Precision::F32,
    );
    graph.outputs.push(out);
    let mut options = options(64);
    options.precision = PrecisionPolicy::F32;
    let all = candidates::candidates(&graph, 0, &options, &target);
    let flash = all
        .iter()
        .find(|c| {
            matches!(&c.plan, OperatorPlan::Attention(plan)
                if matches!(plan.schedule, AttentionSchedule::Flash { .. }) && plan.grid == [2, 32])
        })
        .expect("a flash candidate with 8 query rows per tile");
    // 8 rows x 256 keys x 64 do not fit 96 KiB; the key block is 112 (blocks 112, 112, 32).
    assert!(matches!(
        &flash.plan,
        OperatorPlan::Attention(AttentionPlan {
            schedule: AttentionSchedule::Flash { key_block: 112 },
            ..
        })
    ));
    assert_eq!(flash.k_steps, 3);
    let modelled = crate::strategies::attention::StreamedTile {
        rows: 8,
        d: 64,
        keys: 256,
        width: 64,
        key_block: 112,
        precision: Precision::F32,
        causal: true,
    }
    .cycles(&target);
    assert_eq!(flash.compute_cycles, modelled);
    // 32 keys fit whole: no flash candidate.
    let mut short = Graph::default();
    let shape = vec![2, 32, 64];
    let q = short.add_value(shape.clone(), Precision::F32, Origin::Argument);
    let out = short.add_op(
        OpKind::Attention {
            causal: true,
            scale: None,
        },
        vec![q, q, q],
        shape,
        Precision::F32,
    );
    short.outputs.push(out);
    let all = candidates::candidates(&short, 0, &options, &target);
    assert!(all.iter().any(|c| c.plan.kind() == "attention_blocked"));
    assert!(!all.iter().any(|c| c.plan.kind() == "attention_flash"));
}

/// Seeded batched matmuls (transposed or not, host or device operands, f32/f16/FP8): every
/// `gemm_general` candidate covers the result once on `rows x cols` blocks, uses
/// batches x row blocks x column blocks tiles, is priced with the lowering's own model
/// (`general_matmul_cycles`), reads exactly the left rows and right columns its blocks need,
/// and every output-stationary candidate is a grid the GEMM lowering follows.
#[test]
fn general_matmul_plans_cover_the_result_and_price_the_lowering() {
    let target = Target::c600();
    let mut rng = ChaCha8Rng::seed_from_u64(0x6e4e);
    let mut generals = 0;
    for case in 0..24 {
        let (b, m, k, n) = (
            rng.random_range(1..4u64),
            rng.random_range(2..40u64),
            rng.random_range(8..80u64),
            rng.random_range(2..48u64),
        );
        let (transpose_lhs, transpose_rhs) = (rng.random_bool(0.3), rng.random_bool(0.5));
        let policy = [
            PrecisionPolicy::F32,
            PrecisionPolicy::F16,
            PrecisionPolicy::Fp8,
        ][case % 3];
        let host = if policy == PrecisionPolicy::F32 {
            Precision::F32
        } else {
            Precision::F16
        };
        let mut graph = Graph::default();
        let lhs_shape = if transpose_lhs {
            vec![b, k, m]
        } else {
            vec![b, m, k]
        };
        let rhs_shape = if transpose_rhs {
            vec![b, n, k]
        } else {
            vec![b, k, n]
        };
        let mut a = graph.add_value(lhs_shape.clone(), host, Origin::Argument);
        if rng.random_bool(0.5) {
            // A device-computed left operand.
            a = graph.add_op(OpKind::Gelu { tanh: true }, vec![a], lhs_shape, host);
        }
        let origin = if rng.random_bool(0.5) {
            Origin::Constant
        } else {
            Origin::Argument
        };
        let w = graph.add_value(rhs_shape, host, origin);
        let result = if policy == PrecisionPolicy::F32 {
            Precision::F32
        } else {
            Precision::F16
        };
        let index = graph.ops.len();
        graph.add_op(
            OpKind::Matmul {
                transpose_lhs,
                transpose_rhs,
            },
            vec![a, w],
            vec![b, m, n],
            result,
        );
        let tiles = [8u32, 32, 64][rng.random_range(0..3)];
        let mut opts = options(tiles);
        opts.precision = policy;
        for candidate in candidates::candidates(&graph, index, &opts, &target) {
            let plan = &candidate.plan;
            let OperatorPlan::GeneralMatmul(general_plan) = plan else {
                let dims = (
                    u32::try_from(b * m).unwrap(),
                    u32::try_from(k).unwrap(),
                    u32::try_from(n).unwrap(),
                );
                assert!(
                    crate::strategies::gemm::followed_grid(dims, plan, tiles).is_ok(),
                    "case {case}: {plan} is not a grid the GEMM lowering follows"
                );
                continue;
            };
            generals += 1;
            let (rows, cols) = (u64::from(general_plan.rows), u64::from(general_plan.cols));
            assert_eq!(m % rows, 0, "{plan}");
            assert_eq!(n % cols, 0, "{plan}");
            assert_eq!(
                u64::from(candidate.tiles),
                b * (m / rows) * (n / cols),
                "{plan}"
            );
            assert!(candidate.tiles <= tiles, "{plan}");
            // The result: one block per tile, covering [b, m, n] once.
            let output = &candidate.output.shards;
            let mut covered = 0u64;
            let mut owners = std::collections::BTreeSet::new();
            for (block, tiles) in output.owners.iter().enumerate() {
                assert_eq!(tiles.len(), 1, "{plan}");
                assert!(owners.insert(tiles[0]), "{plan}");
                covered += output
                    .block_ranges(block)
                    .iter()
                    .map(|(lo, hi)| hi - lo)
                    .product::<u64>();
            }
            assert_eq!(covered, b * m * n, "{plan}");
            // Each tile reads its rows of the left operand and its columns of the right one.
            let fetched = candidate.needs[0].format.precision;
            let bytes = u64::from(fetched.bytes());
            assert_eq!(
                candidate.needs[0].shards.max_tile_bytes(),
                rows * k * bytes,
                "{plan}"
            );
            assert_eq!(
                candidate.needs[1].shards.max_tile_bytes(),
                k * cols * bytes,
                "{plan}"
            );
            // Priced with the lowering's model.
            let input = crate::element::precision(general_plan.precision);
            let expected = crate::strategies::general_matmul::GeneralTile::new(
                (rows as u32, k as u32, cols as u32),
                (transpose_lhs, transpose_rhs),
                // The right operand is a host tensor (argument or constant) here.
                true,
                (fetched, input),
            )
            .cycles(&target);
            assert_eq!(candidate.compute_cycles, expected, "case {case}: {plan}");
        }
    }
    assert!(generals > 100, "only {generals} general candidates");
}

/// A long chain (a GEMM, then thousands of bias adds and GeLUs on its result, each in place)
/// plans on a thread with a small stack: nothing in planning recurses along the chain (the
/// split GEMM's "is this value ranged" questions, dropping a partial plan's records), and
/// every op gets its plan.
#[test]
fn long_chains_plan_without_recursing_along_them() {
    let planned = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(|| {
            let target = Target::c600();
            let mut graph = Graph::default();
            let x = graph.add_value(vec![32, 64], Precision::F16, Origin::Argument);
            let w = graph.add_value(vec![64, 64], Precision::F16, Origin::Argument);
            let b = graph.add_value(vec![64], Precision::F16, Origin::Argument);
            let mut current = graph.add_op(
                OpKind::Matmul {
                    transpose_lhs: false,
                    transpose_rhs: false,
                },
                vec![x, w],
                vec![32, 64],
                Precision::F16,
            );
            for i in 0..4000 {
                current = if i % 2 == 0 {
                    graph.add_op(OpKind::Add, vec![current, b], vec![32, 64], Precision::F16)
                } else {
                    graph.add_op(
                        OpKind::Gelu { tanh: true },
                        vec![current],
                        vec![32, 64],
                        Precision::F16,
                    )
                };
            }
            graph.outputs.push(current);
            let mut options = options(16);
            options.beam_width = 2;
            let planned = plan(&graph, &options, &target).expect("plans");
            (graph.ops.len(), planned.finalists[0].plans.len())
        })
        .expect("spawns")
        .join()
        .expect("plans without overflowing a 256 KiB stack");
    assert_eq!(planned.0, planned.1);
}
