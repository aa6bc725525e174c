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

/// The host writes a replicated block once, one piece per reader, but a small row vector's
/// block in pieces of at least `MIN_HOST_PIECE_BYTES`, held by readers spread over its
/// readers.
#[test]
fn host_homes_cut_small_blocks_in_fewer_pieces() {
    use super::layout::{host_home, MIN_HOST_PIECE_BYTES};
    let replicated = |dims: [u64; 3], readers: u32| Shards {
        dims,
        parts: [1, 1, 1],
        element_bytes: 2,
        owners: vec![(0..readers).collect()].into(),
    };
    // A 3,072-element F16 vector read by 512 tiles: 6 KiB in 6 pieces on tiles 0, 85, ...
    let home = host_home(&replicated([1, 1, 3072], 512), 2);
    assert_eq!(home.parts, [1, 1, 6]);
    let holders: Vec<u32> = home.owners.iter().map(|o| o[0]).collect();
    assert_eq!(holders, [0, 85, 170, 256, 341, 426]);
    assert_eq!(home.padded_block_bytes(), MIN_HOST_PIECE_BYTES);
    // Under 1 KiB: one piece, on the first reader.
    let home = host_home(&replicated([1, 1, 256], 64), 2);
    assert_eq!(home.parts, [1, 1, 1]);
    assert_eq!(home.owners[0][0], 0);
    // A matrix block (small or large): one piece per reader, as before.
    let home = host_home(&replicated([1, 4, 64], 16), 2);
    assert_eq!(home.parts, [1, 1, 16]);
    let home = host_home(&replicated([1, 64, 1024], 16), 2);
    assert_eq!(home.parts, [1, 1, 16]);
    assert_eq!(
        home.owners.iter().map(|o| o[0]).collect::<Vec<_>>(),
        (0..16).collect::<Vec<_>>()
    );
}

/// A window along one axis moves only the part of the need inside it, from the homes that
/// hold that part.
#[test]
fn transfers_within_a_window_come_from_its_homes() {
    // 16 rows homed 4 per tile on tiles 0-3, needed whole by tile 5.
    let home = Shards::homed([1, 16, 8], [1, 4, 1], 2, 0);
    let need = Shards::homed([1, 16, 8], [1, 1, 1], 2, 5);
    let collect = |window| {
        let mut seen = Vec::new();
        super::layout::for_each_transfer_within(&home, &need, window, |from, to, bytes, count| {
            seen.push((from, to.to_vec(), bytes * count))
        });
        seen
    };
    assert_eq!(collect(None).len(), 4);
    // Rows 4..8: tile 1's block alone; rows 6..10: half of tile 1's and half of tile 2's.
    assert_eq!(collect(Some((1, 4, 8))), [(1, vec![5], 4 * 8 * 2)]);
    assert_eq!(
        collect(Some((1, 6, 10))),
        [(1, vec![5], 2 * 8 * 2), (2, vec![5], 2 * 8 * 2)]
    );
    // A window past the rows moves nothing.
    assert!(collect(Some((1, 16, 32))).is_empty());
}

#[test]
fn exchange_and_conversion_terms_are_the_table_formulas() {
    let target = Target::c600();
    let mut load = PhaseLoad::new(8);
    load.add_transfer(0, &[2, 4], 400);
    load.add_transfer(1, &[4], 100);
    // Tile 0 sends 400 bytes, its pair partner 1 100 (one bus of 500 only on a table whose
    // pairs share one); tile 4 receives 500 from two tiles: the fixed phase cost plus 500 / 4
    // plus one select latency.
    assert_eq!(load.max_bus_out(&target), 400);
    let mut shared = target.clone();
    shared.exchange.send_bus_tiles.value = 2;
    assert_eq!(load.max_bus_out(&shared), 500);
    assert_eq!(load.max_tile_in(), 500);
    let fixed = u64::from(target.exchange.phase_cycles.value);
    let latency = u64::from(target.exchange.latency_events.value);
    assert_eq!(load.cycles(&target), fixed + 125 + latency);
    // More from a tile it already receives from selects nothing new.
    load.add_transfer(0, &[4], 400);
    assert_eq!(load.tile_sources[4], [0, 1]);
    assert_eq!(load.cycles(&target), fixed + 225 + latency);
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
fn exchange_code_beyond_the_support_reservation_is_charged_to_the_total() {
    let mut target = Target::c600();
    let graph = mlp(128, 256, 512);
    let roomy = plan(&graph, &options(64), &target).expect("plans");
    let best = roomy.finalists[0].clone();
    assert!(best.estimate.exchange_row_bytes > 0);
    // A reservation with room for no exchange code: every row byte is charged, and a total
    // the roomy best plan's data fits but not with its code.
    target.memory.support_reservation.value = 0;
    let beyond = |rows: u64| crate::lower::place::support_beyond_reservation(rows, &target);
    let mut tight = options(64);
    tight.total_budget = best.estimate.peak_total + beyond(best.estimate.exchange_row_bytes) - 1;
    assert!(best.estimate.peak_total <= tight.total_budget);
    match plan(&graph, &tight, &target) {
        Ok(planned) => {
            for finalist in &planned.finalists {
                let estimate = &finalist.estimate;
                assert!(
                    estimate.peak_total + beyond(estimate.exchange_row_bytes) <= tight.total_budget,
                    "{estimate:?}"
                );
                assert_ne!(finalist.choices, best.choices);
            }
        }
        Err(PlannerError::OutOfMemory { short, .. }) => assert!(short > 0),
        Err(other) => panic!("expected a plan or out of memory, got {other}"),
    }
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
        let w = body.add_value(vec![64, 64], Precision::F16, Origin::Constant);
        let m = body.add_op(
            OpKind::Matmul {
                transpose_lhs: false,
                transpose_rhs: false,
            },
            vec![x, w],
            vec![64, 64],
            Precision::F16,
        );
        let y = body.add_op(OpKind::Add, vec![m, x], vec![64, 64], Precision::F16);
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
            iterated: Vec::new(),
        },
        vec![x],
        vec![64, 64],
        Precision::F16,
    );
    graph.outputs.push(y);
    let planned = plan(&graph, &options(16), &target).expect("plans");
    let best = &planned.finalists[0];
    let body_plan = best.bodies.get(&0).expect("body planned");
    assert_eq!(body_plan.plans.len(), 2);
    assert!(best.estimate.cycles >= 10 * body_plan.estimate.cycles);
    // The body re-derived from its choices is the body the repeat was priced with (no
    // stacks here): evaluated in a body, its arguments are device values. (Evaluated as an
    // entry function, the add's read of x, homed in the product's AMP order, was priced as a
    // host stream, and the expansion of the repeat counted the difference twice.)
    let priced = best.plans[0].body_cycles.expect("a repeat's body cycles");
    assert_eq!(
        (
            body_plan.estimate.cycles,
            body_plan.estimate.exchange_cycles
        ),
        priced
    );
    assert!(priced.1 > 0, "the body moves x: {priced:?}");
}

#[test]
fn exchange_priced_without_transfers_is_modelled_and_scheduled_as_priced() {
    // A repeat's stacks and carry are priced, not expanded into transfers: the model and the
    // schedule add them to the phases they do expand.
    let target = Target::c600();
    let phase = expand::ExpandedPhase {
        op: 0,
        transfers: vec![crate::exchange::TransferRequest {
            source: 0,
            destinations: vec![1],
            bytes: 4096,
        }],
        runs: 2,
    };
    let alone = expand::ExpandedPlan {
        phases: vec![phase],
        compute_cycles: 10,
        priced_exchange_cycles: 0,
    };
    let priced = expand::ExpandedPlan {
        priced_exchange_cycles: 777,
        ..alone.clone()
    };
    let (total, exchange, pressure) = expand::model(&alone, &target);
    assert_eq!(
        expand::model(&priced, &target),
        (total + 777, exchange + 777, pressure)
    );
    let schedule = |plan| crate::select_finalist::scheduled_exchange_cycles(plan, &target);
    assert_eq!(
        schedule(&priced),
        Ok(schedule(&alone).expect("schedules") + 777)
    );
    assert_eq!(priced.remapped(&expand::Mapping::identity(2)), priced);
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

/// Three projections of one host argument (a layer's q, k and v): the host writes the argument
/// for each matmul in the order it reads it, as the lowering does.
fn projections(tokens: u64, hidden: u64) -> Graph {
    let mut graph = Graph::default();
    let x = graph.add_value(vec![tokens, hidden], Precision::F16, Origin::Argument);
    for _ in 0..3 {
        let w = graph.add_value(vec![hidden, hidden], Precision::F16, Origin::Argument);
        let y = graph.add_op(
            OpKind::Matmul {
                transpose_lhs: false,
                transpose_rhs: false,
            },
            vec![x, w],
            vec![tokens, hidden],
            Precision::F16,
        );
        graph.outputs.push(y);
    }
    graph
}

/// Under the grid order the expanded plan's physical model equals the planner's analytical
/// estimate (logical pairs 2k, 2k + 1 are physical pairs), and the physical schedule of every
/// phase is hazard-free and no shorter than its busiest endpoint.
#[test]
fn expansion_under_the_grid_order_reproduces_the_estimate() {
    let target = Target::c600();
    // (The projections: every finalist reads the host argument in an AMP order; expanded as a
    // move from one home to the others, their exchange was 3 phases over the estimate.)
    let graphs = [
        (64, mlp(128, 256, 512)),
        (16, mlp(64, 128, 256)),
        (64, projections(128, 256)),
    ];
    for (tiles, graph) in graphs {
        let planned = plan(&graph, &options(tiles), &target).expect("plans");
        for finalist in &planned.finalists {
            let expanded = expand::expand(&graph, finalist, &expand::Mapping::identity(tiles));
            // Every screened mapping's expansion is this one relabelled.
            let mut moved = 0;
            for mapping in expand::mappings(tiles, 64, 100) {
                let direct = expand::expand(&graph, finalist, &mapping);
                assert_eq!(expanded.remapped(&mapping), direct, "{}", mapping.name);
                moved += usize::from(direct != expanded);
            }
            assert!(moved > 0, "no mapping moved a transfer");
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

mod fp8_scales;
mod memo;
mod strategy_prices;
