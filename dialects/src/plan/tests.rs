use super::*;

fn gemm(k_split: u32, scales: Option<OperandScales>) -> OperatorPlan {
    OperatorPlan::Gemm(GemmPlan {
        grid: GemmTileGrid {
            batch: 1,
            rows: 8,
            cols: 26,
            k_split,
        },
        tiles: 8 * 26 * k_split,
        k_block: 256,
        c_block: 64,
        orientation: Orientation::Normal,
        weights: Memory::Interleaved,
        left: Memory::Standard,
        precision: ElementType::F16,
        k_steps: 3,
        weights_resident: true,
        host_order: k_split > 1,
        scales,
    })
}

/// One plan of every kind and placement.
fn every_kind() -> Vec<OperatorPlan> {
    let mut plans = vec![
        gemm(1, None),
        gemm(7, Some(OperandScales { lhs: -3, rhs: 5 })),
        OperatorPlan::GemmWaves(GemmWavesPlan {
            grid: [46, 64],
            tiles: 1472,
            k_block: 64,
            weights: Memory::Standard,
            left: Memory::Interleaved,
            precision: ElementType::F16,
            output_shift: 1,
            left_replicated: false,
            c_block: None,
        }),
        OperatorPlan::GemmWaves(GemmWavesPlan {
            grid: [81, 18],
            tiles: 1458,
            k_block: 64,
            weights: Memory::Interleaved,
            left: Memory::Standard,
            precision: ElementType::F16,
            output_shift: 1,
            left_replicated: true,
            c_block: Some(128),
        }),
        OperatorPlan::GemmActivationStationary(GemmActivationStationaryPlan {
            grid: [81, 18],
            tiles: 1458,
            c_block: 64,
            k_block: 128,
            round: 4,
            fan_in: 3,
            weights: Memory::Interleaved,
            precision: ElementType::F16,
        }),
        OperatorPlan::GeneralMatmul(GeneralMatmulPlan {
            grid: [6, 2, 1],
            rows: 16,
            cols: 32,
            tiles: 12,
            precision: ElementType::F8E4M3,
            batches_per_tile: 2,
            host_order: true,
            scales: Some(OperandScales { lhs: 0, rhs: -1 }),
        }),
        OperatorPlan::Rearrange(RearrangePlan {
            grid: [2, 1, 1],
            tiles: 2,
            transpose: true,
        }),
        OperatorPlan::Reshape(ReshapePlan {
            grid: [4, 1, 1],
            tiles: 4,
        }),
        OperatorPlan::Gather(GatherPlan {
            grid: [1, 6, 1],
            tiles: 6,
        }),
        OperatorPlan::Repeat(RepeatPlan {
            count: 12,
            body_choices: vec![0, 3, 1],
        }),
    ];
    for op in PointwiseOp::ALL {
        for placement in [
            PointwisePlacement::Grid {
                grid: [1, 4, 2],
                tiles: 8,
                order: Order::AmpOutput,
            },
            PointwisePlacement::InPlace,
            PointwisePlacement::Ranged,
        ] {
            plans.push(OperatorPlan::Pointwise(PointwisePlan {
                op,
                placement,
                precision: ElementType::F32,
            }));
        }
    }
    for op in RowOp::ALL {
        plans.push(OperatorPlan::Rows(RowsPlan {
            op,
            grid: [3, 5, 1],
            tiles: 15,
            precision: ElementType::F16,
        }));
    }
    for (schedule, grid) in [
        (AttentionSchedule::Materialized, vec![12, 2, 4]),
        (AttentionSchedule::Blocked, vec![12, 8]),
        (AttentionSchedule::Flash { key_block: 128 }, vec![12, 1]),
        (AttentionSchedule::Flash { key_block: 208 }, vec![16, 16, 5]),
        (AttentionSchedule::FlashRows { key_block: 96 }, vec![16, 86]),
    ] {
        let tiles = grid.iter().product();
        plans.push(OperatorPlan::Attention(AttentionPlan {
            schedule,
            grid,
            tiles,
            causal: true,
            precision: ElementType::F8E5M2,
        }));
    }
    plans
}

#[test]
fn every_kind_round_trips_through_its_printed_attribute() {
    let plans = every_kind();
    let kinds: std::collections::BTreeSet<&str> = plans.iter().map(|p| p.kind()).collect();
    assert_eq!(kinds.len(), PLAN_KINDS.len(), "a kind without a case");
    for plan in plans {
        let text = plan.to_string();
        let decoded = OperatorPlan::parse(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(decoded, plan, "{text}");
        // The canonical text prints back byte for byte.
        assert_eq!(decoded.to_string(), text);
    }
}

/// The printed form is the attribute the planner has always written: lit tests and package
/// hashes depend on it.
#[test]
fn the_printed_form_is_the_attribute_syntax() {
    assert_eq!(
        gemm(1, None).to_string(),
        concat!(
            "#ipu.plan<\"gemm_output_stationary\", {c_block = 64 : i64, grid = [1, 8, 26, 1], ",
            "k_block = 256 : i64, k_steps = 3 : i64, left = \"standard\", orientation = \"normal\", ",
            "precision = \"f16\", tiles = 208 : i64, weights = \"interleaved\", weights_resident = true}>",
        )
    );
    let in_place = OperatorPlan::Pointwise(PointwisePlan {
        op: PointwiseOp::Add,
        placement: PointwisePlacement::InPlace,
        precision: ElementType::F8E4M3,
    });
    assert_eq!(
        in_place.to_string(),
        "#ipu.plan<\"pointwise_add\", {in_place = true, precision = \"f8\"}>"
    );
}

/// Each malformed plan is refused with a message naming the kind and the parameter.
#[test]
fn malformed_plans_name_the_kind_and_parameter() {
    let gemm = gemm(1, None).to_string();
    let waves = every_kind()
        .into_iter()
        .find(|plan| plan.kind() == "gemm_waves")
        .expect("a waves plan")
        .to_string();
    let cases: Vec<(String, &str)> = vec![
        (
            "#ipu.plan<\"gemm\", {}>".into(),
            "unknown plan kind \"gemm\"",
        ),
        (
            gemm.replace("c_block = 64 : i64, ", ""),
            "missing parameter 'c_block'",
        ),
        (
            gemm.replace("grid = [1, 8, 26, 1]", "grid = [8, 26, 1]"),
            "'grid' [8, 26, 1] must have 4 entries, not 3",
        ),
        (
            gemm.replace("grid = [1, 8, 26, 1]", "grid = [1, 0, 26, 1]")
                .replace("tiles = 208", "tiles = 0"),
            "'grid' = 0 is outside 1..2^32",
        ),
        (
            gemm.replace("grid = [1, 8, 26, 1]", "grid = [1, 4294967296, 26, 1]"),
            "'grid' = 4294967296 is outside 1..2^32",
        ),
        (
            gemm.replace("tiles = 208", "tiles = 64"),
            "tiles = 64 is not the grid's product 208",
        ),
        (
            gemm.replace("\"gemm_output_stationary\"", "\"gemm_k_split\""),
            "the kind is gemm_k_split exactly when the K split is above 1",
        ),
        (
            gemm.replace("\"normal\"", "\"sideways\""),
            "'orientation' = \"sideways\" is not one of normal, swapped",
        ),
        (
            gemm.replace("precision = \"f16\"", "precision = \"bf16\""),
            "'precision' = \"bf16\" is not one of f32, f16, f8, f8e5",
        ),
        (
            gemm.replace("k_steps = 3 : i64", "k_steps = \"3\""),
            "'k_steps' must be an integer, not \"3\"",
        ),
        (
            gemm.replace("weights_resident = true", "weights_resident = true, speed = 9 : i64"),
            "unknown parameter 'speed'",
        ),
        (
            gemm.replace("weights_resident = true", "lhs_scale = 2 : i64, weights_resident = true"),
            "lhs_scale and rhs_scale come together",
        ),
        (
            gemm.replace(
                "weights_resident = true",
                "lhs_scale = 99 : i64, rhs_scale = 0 : i64, weights_resident = true",
            ),
            "'lhs_scale' = 99 is outside -31..=31",
        ),
        (
            "#ipu.plan<\"pointwise_gelu\", {in_place = false, precision = \"f16\"}>".into(),
            "'in_place' must be true (or absent), not false",
        ),
        (
            "#ipu.plan<\"pointwise_gelu\", {in_place, ranged, precision = \"f16\"}>".into(),
            "in_place and ranged exclude each other",
        ),
        (
            "#ipu.plan<\"attention_flash\", {causal = false, grid = [4, 1], precision = \"f16\", tiles = 4 : i64}>".into(),
            "missing parameter 'key_block'",
        ),
        (
            "#ipu.plan<\"repeat_body_once\", {body_choices = [0, -1], count = 2 : i64}>".into(),
            "body_choices [0, -1] holds a value outside 0..2^32",
        ),
        ("#ipu.plan<\"rearrange\", {grid = [1, 1, 1]".into(), "expected"),
        (
            waves.replace("tiles = 1472", "tiles = 1400"),
            "tiles = 1400 is not a positive multiple of the 64 column blocks",
        ),
        (
            waves.replace("tiles = 1472", "tiles = 3008"),
            "tiles = 3008 is more than the grid's 2944 blocks",
        ),
        (
            waves.replace("output_shift = 1 : i64, ", ""),
            "missing parameter 'output_shift'",
        ),
    ];
    for (text, expected) in cases {
        let error = OperatorPlan::parse(&text).expect_err(&text).to_string();
        assert!(
            error.contains(expected),
            "{text}\n  gave: {error}\n  want: {expected}"
        );
    }
}

/// Seeded property: plans built from random parameters round-trip exactly (xorshift, fixed
/// seed, so a failure reproduces).
#[test]
fn random_plans_round_trip() {
    let mut state: u64 = 0x1f2e_3d4c_5b6a_7988;
    let mut next = |bound: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % bound
    };
    for _ in 0..2000 {
        let mut grid = || 1 + next(40) as u32;
        let grid4 = GemmTileGrid {
            batch: grid(),
            rows: grid(),
            cols: grid(),
            k_split: grid(),
        };
        let plan = match next(4) {
            0 => OperatorPlan::Gemm(GemmPlan {
                grid: grid4,
                tiles: grid4.tiles() as u32,
                k_block: 1 + next(4096) as u32,
                c_block: 1 + next(512) as u32,
                orientation: [Orientation::Normal, Orientation::Swapped][next(2) as usize],
                weights: [Memory::Standard, Memory::Interleaved][next(2) as usize],
                left: [Memory::Standard, Memory::Interleaved][next(2) as usize],
                precision: ElementType::ALL[next(4) as usize],
                k_steps: 1 + next(64) as u32,
                weights_resident: next(2) == 1,
                host_order: next(2) == 1,
                scales: (next(2) == 1).then(|| OperandScales {
                    lhs: next(63) as i32 - 31,
                    rhs: next(63) as i32 - 31,
                }),
            }),
            1 => {
                let g = [grid4.batch, grid4.rows, grid4.cols];
                OperatorPlan::GeneralMatmul(GeneralMatmulPlan {
                    grid: g,
                    rows: 1 + next(300) as u32,
                    cols: 1 + next(300) as u32,
                    tiles: g.iter().product(),
                    precision: ElementType::ALL[next(4) as usize],
                    batches_per_tile: 1 + next(3) as u32,
                    host_order: next(2) == 1,
                    scales: None,
                })
            }
            2 => {
                let g = vec![grid4.batch, grid4.rows];
                OperatorPlan::Attention(AttentionPlan {
                    schedule: AttentionSchedule::Flash {
                        key_block: 1 + next(1024) as u32,
                    },
                    tiles: g.iter().product(),
                    grid: g,
                    causal: next(2) == 1,
                    precision: ElementType::ALL[next(4) as usize],
                })
            }
            _ => OperatorPlan::Repeat(RepeatPlan {
                count: next(1 << 40),
                body_choices: (0..next(6)).map(|_| next(100) as u32).collect(),
            }),
        };
        let text = plan.to_string();
        assert_eq!(OperatorPlan::parse(&text).as_ref(), Ok(&plan), "{text}");
    }
}
