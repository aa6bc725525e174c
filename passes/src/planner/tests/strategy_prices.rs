//! Candidates priced by their strategies' calls: flash attention, the general matmul.

use super::*;

/// A graph of one self-attention `softmax(x x^T) x` over `shape` (batch-heads, sequence, head
/// size) in f32.
fn self_attention(shape: Vec<u64>, causal: bool) -> Graph {
    let mut graph = Graph::default();
    let x = graph.add_value(shape.clone(), Precision::F32, Origin::Argument);
    let out = graph.add_op(
        OpKind::Attention {
            causal,
            scale: None,
        },
        vec![x, x, x],
        shape,
        Precision::F32,
    );
    graph.outputs.push(out);
    graph
}

/// The `attention_flash` candidate of `all` on `grid`.
fn flash_on<'a>(all: &'a [Candidate], grid: &[u32]) -> Option<&'a Candidate> {
    all.iter().find(|c| {
        matches!(&c.plan, OperatorPlan::Attention(plan)
            if matches!(plan.schedule, AttentionSchedule::Flash { .. }) && plan.grid == grid)
    })
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
    let flash = flash_on(&all, &[2, 32]).expect("a flash candidate with 8 query rows per tile");
    // 8 rows x 256 keys x 64 do not fit 96 KiB; the key block is 112 (blocks 112, 112, 32).
    assert!(matches!(
        &flash.plan,
        OperatorPlan::Attention(AttentionPlan {
            schedule: AttentionSchedule::Flash { key_block: 112 },
            ..
        })
    ));
    assert_eq!(flash.k_steps, 3);
    let streamed = crate::strategies::attention::StreamedTile {
        rows: 8,
        d: 64,
        keys: 256,
        width: 64,
        key_block: 112,
        precision: Precision::F32,
        causal: true,
        home_keys: None,
        columns: false,
        splits: 1,
    };
    // 8 keys per tile are not whole 16-key panels: the keys are packed once in panels on the
    // head's first 16 tiles, and every block arrives packed.
    let keys = crate::strategies::attention::DistributedKeys::of(2, 32, streamed)
        .expect("256 keys split over 32 tiles")
        .packed();
    assert!(keys.panels);
    assert_eq!(keys.tile.home_keys, Some(16));
    assert_eq!(flash.compute_cycles, keys.tile.cycles(&target));
    assert!(keys.tile.cycles(&target) < streamed.cycles(&target));
    // Keys homed over the head's tiles move there whole, before the key blocks; the queries
    // move with the first block. Keys that no tile count from half the head's query tiles up
    // divides (251 keys, prime, on a ragged grid of 32 query blocks per head) are not homed so
    // and move one key block per phase; 250 keys are homed over 25 tiles per head (10 each).
    assert_eq!(flash.step_slices, [None, None, None]);
    let homes = crate::strategies::attention::home_tiles;
    assert_eq!(
        (homes(250, 32), homes(251, 32), homes(256, 32)),
        (Some(25), None, Some(32))
    );
    let uneven = self_attention(vec![2, 251, 64], false);
    let all = candidates::candidates(&uneven, 0, &options, &target);
    let ragged = flash_on(&all, &[2, 32]).expect("a flash candidate on a ragged grid");
    let OperatorPlan::Attention(AttentionPlan {
        schedule: AttentionSchedule::Flash { key_block },
        ..
    }) = ragged.plan
    else {
        unreachable!()
    };
    let block = Some((1, u64::from(key_block)));
    assert_eq!(ragged.step_slices, [None, block, block]);
    assert_eq!(ragged.k_steps, 251u32.div_ceil(key_block));
    // 32 keys fit whole: no query-block grid streams them (the only flash plans split the
    // keys over tiles, two panels on two tiles per query block).
    let short = self_attention(vec![2, 32, 64], true);
    let all = candidates::candidates(&short, 0, &options, &target);
    assert!(all.iter().any(|c| c.plan.kind() == "attention_blocked"));
    let flash: Vec<&Candidate> = all
        .iter()
        .filter(|c| c.plan.kind() == "attention_flash")
        .collect();
    assert!(flash.iter().all(|c| matches!(&c.plan,
        OperatorPlan::Attention(plan) if plan.grid.len() == 3 && plan.grid[2] == 2)));
}

/// A key block a constraint pins (a replay's plan) is the flash plans' block on every
/// query-block grid, priced with it, even where whole score rows fit (the short attention
/// above has no flash plan of its own); a pin that is not whole 16-key panels within the keys
/// gives no flash plan, so the planner reports the constraint unmet.
#[test]
fn a_pinned_key_block_is_the_flash_plans_block() {
    let target = Target::c600();
    let graph = self_attention(vec![2, 256, 64], false);
    let mut options = options(64);
    options.precision = PrecisionPolicy::F32;
    let pin = |block: i64| {
        Constraints::parse(&format!(
            r#"{{"ops": [{{"op": 0, "kind": "attention_flash", "params": {{"key_block": {block}}}}}]}}"#
        ))
        .expect("parses")
    };
    options.constraints = pin(64);
    let all = candidates::candidates(&graph, 0, &options, &target);
    let flash: Vec<&Candidate> = all
        .iter()
        .filter(|c| c.plan.kind() == "attention_flash")
        .collect();
    assert!(flash.len() > 1, "{} flash candidates", flash.len());
    for candidate in &flash {
        let OperatorPlan::Attention(plan) = &candidate.plan else {
            unreachable!()
        };
        assert_eq!(plan.schedule, AttentionSchedule::Flash { key_block: 64 });
        // Query-block grids stream all 256 keys; a key split its first share's (the most).
        let keys = match plan.grid.as_slice() {
            &[_, _, splits] => 16 * 16u32.div_ceil(splits),
            _ => 256,
        };
        assert_eq!(candidate.k_steps, keys.div_ceil(64), "{}", candidate.plan);
    }
    assert!(flash.iter().any(|c| c.k_steps == 4) && flash.iter().any(|c| c.k_steps == 1));
    let on_32 = flash
        .iter()
        .find(|c| matches!(&c.plan, OperatorPlan::Attention(p) if p.grid == [2, 32]))
        .expect("grid [2, 32]");
    let keys = crate::strategies::attention::DistributedKeys::of(
        2,
        32,
        crate::strategies::attention::StreamedTile {
            rows: 8,
            d: 64,
            keys: 256,
            width: 64,
            key_block: 64,
            precision: Precision::F32,
            causal: false,
            home_keys: None,
            columns: false,
            splits: 1,
        },
    )
    .expect("256 keys split over 32 tiles")
    .packed();
    assert_eq!(on_32.compute_cycles, keys.tile.cycles(&target));
    let planned = plan(&graph, &options, &target).expect("plans with the pin");
    assert!(matches!(
        &planned.finalists[0].plans[0].plan,
        OperatorPlan::Attention(AttentionPlan {
            schedule: AttentionSchedule::Flash { key_block: 64 },
            ..
        })
    ));
    for bad in [0, 8, 40, 512] {
        options.constraints = pin(bad);
        let all = candidates::candidates(&graph, 0, &options, &target);
        assert!(
            !all.iter().any(|c| c.plan.kind() == "attention_flash"),
            "key block {bad}"
        );
        assert!(plan(&graph, &options, &target).is_err(), "key block {bad}");
    }
}

/// Seeded batched matmuls (transposed or not, host or device operands, f32/f16/FP8): every
/// `gemm_general` candidate covers the result once on `rows x cols` blocks, uses
/// batches x row blocks x column blocks tiles, is priced with the lowering's own model
/// (`general_matmul_cycles`), reads exactly the left rows and right columns its blocks need,
/// and every output-stationary candidate is a grid the GEMM lowering follows (or, streamed in
/// host order, a grid of the split GEMM, which takes the product).
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
                let split = matches!(plan, OperatorPlan::Gemm(gemm) if gemm.host_order);
                if split {
                    let input = plan.precision().unwrap();
                    let taken = crate::strategies::split_gemm::split_dims(&graph, index, input)
                        .or_else(|| {
                            crate::strategies::split_gemm::device_split_dims(&graph, index, input)
                        });
                    assert_eq!(
                        taken,
                        Some(dims),
                        "case {case}: {plan} is not the split GEMM's"
                    );
                } else {
                    assert!(
                        crate::strategies::gemm::followed_grid(dims, plan, tiles).is_ok(),
                        "case {case}: {plan} is not a grid the GEMM lowering follows"
                    );
                }
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
            let input = general_plan.precision;
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

/// The column formulation's larger key block is a candidate of its own beside the streamed
/// plan's own block on the same grid: fewer, larger blocks (fewer phases, the query weights fed
/// fewer times), priced from the same tile model, and cheaper to compute here.
#[test]
fn column_tiles_are_also_offered_their_larger_key_block() {
    let target = Target::c600();
    let graph = self_attention(vec![2, 1024, 64], false);
    let mut options = options(64);
    options.precision = PrecisionPolicy::F32;
    let all = candidates::candidates(&graph, 0, &options, &target);
    let blocks: Vec<(u32, u64)> = all
        .iter()
        .filter_map(|c| match &c.plan {
            OperatorPlan::Attention(AttentionPlan {
                schedule: AttentionSchedule::Flash { key_block },
                grid,
                ..
            }) if grid == &[2, 32] => Some((*key_block, c.compute_cycles)),
            _ => None,
        })
        .collect();
    assert_eq!(blocks.len(), 2, "{blocks:?}");
    let (own, wide) = (blocks[0], blocks[1]);
    assert_eq!(own.0, 64);
    let columns =
        crate::strategies::attention::columns_key_block((32, 64, 1024, 64), Precision::F32);
    assert_eq!(Some(wide.0), columns);
    assert!(wide.0 > own.0 && wide.1 < own.1, "{own:?} against {wide:?}");
}
