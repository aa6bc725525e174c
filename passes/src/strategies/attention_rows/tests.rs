use super::*;

fn plan(grid: [u32; 2], key_block: u32, causal: bool) -> AttentionPlan {
    AttentionPlan {
        schedule: AttentionSchedule::FlashRows { key_block },
        grid: grid.to_vec(),
        tiles: grid[0] * grid[1],
        causal,
        precision: Precision::F16,
    }
}

/// The measured hidden-768 run (ANCHOR-PLANS.md section 3): 16 heads of 1,024 x 48, 86
/// query blocks of 12 rows (85 x 12 + 4) on 1,376 tiles, 8 key blocks of 128 homed on the
/// head's first 8 tiles, each multicast to the head's 85 other tiles, keys then values.
#[test]
fn the_measured_hidden_768_layout() {
    let grid = RowsGrid::planned(
        (16, 1024, 48, 1024, 48),
        (Precision::F16, false),
        &plan([16, 86], 128, false),
        1472,
    )
    .unwrap();
    assert_eq!((grid.rows, grid.tiles()), (12, 1376));
    assert_eq!(grid.row_counts(), vec![12, 4]);
    assert_eq!(grid.query_block(85), (1020, 4));
    assert_eq!(grid.key_blocks().len(), 8);
    assert_eq!(grid.home(3, 5), (3 * 86 + 5, 0));
    assert_eq!(grid.home_slots(), 1);
    assert_eq!(grid.slot_bytes(), [48 * 128 * 2, 128 * 48 * 2]);
    for phase in 0..grid.phases() {
        let mut moves = Vec::new();
        grid.for_each_move(phase, |from, to, bytes, moved| {
            moves.push((from, to.to_vec(), bytes, moved))
        });
        assert_eq!(
            moves.len(),
            32,
            "phase {phase}: keys and values of 16 heads"
        );
        for (n, (from, to, bytes, moved)) in moves.iter().enumerate() {
            let head = n as u32 / 2;
            assert_eq!(*from, head * 86 + phase);
            assert_eq!(to.len(), 85);
            assert!(!to.contains(from) && to.iter().all(|t| t / 86 == head));
            assert_eq!(*bytes, 12_288);
            let expected = if n % 2 == 0 {
                Moved::Keys { head, block: phase }
            } else {
                Moved::Values { head, block: phase }
            };
            assert_eq!(*moved, expected);
        }
    }
    // Two GEMMs (one key-block width), and per row count the softmax, the first, middle and
    // last blocks' merges and the conversion.
    assert_eq!(grid.kernels().len(), 2 + 2 * 5);
}

/// The batch-8 hidden-1152 run: 128 batch-heads, 11 blocks of 94 rows (10 x 94 + 84) on
/// 1,408 tiles, head dim 72 padded to 80, key blocks of 96 with a tail of 64.
#[test]
fn the_measured_batch_8_layout() {
    let grid = RowsGrid::planned(
        (128, 1024, 72, 1024, 72),
        (Precision::F16, false),
        &plan([128, 11], 96, false),
        1472,
    )
    .unwrap();
    assert_eq!((grid.rows, grid.tiles()), (94, 1408));
    assert_eq!(grid.row_counts(), vec![94, 84]);
    let blocks = grid.key_blocks();
    assert_eq!(blocks.len(), 11);
    assert_eq!(blocks[10], (960, 64));
    assert_eq!((grid.dp(), grid.ep()), (80, 80));
    let mut tail = Vec::new();
    grid.for_each_move(10, |_, _, bytes, _| tail.push(bytes));
    assert!(tail.iter().all(|&b| b == 80 * 64 * 2));
    // Every tile fits: the homes, the queries, the working buffers.
    assert!(grid.working().total() < 200_000, "{:?}", grid.working());
}

#[test]
fn more_key_blocks_than_query_blocks_take_several_home_slots() {
    let grid = RowsGrid::planned(
        (2, 40, 20, 200, 24),
        (Precision::F32, true),
        &AttentionPlan {
            precision: Precision::F32,
            ..plan([2, 3], 32, true)
        },
        8,
    )
    .unwrap();
    // 7 key blocks (6 x 32 + 8) over 3 tiles per head: up to 3 slots.
    assert_eq!(grid.key_blocks().len(), 7);
    assert_eq!(grid.home_slots(), 3);
    assert_eq!(grid.home(1, 6), (3, 2));
    assert_eq!(grid.row_counts(), vec![14, 12]);
    // The homes' shards: one owner per block, on the head's tiles.
    let [q, k, _, out] = grid.homes();
    assert_eq!(q.owners.len(), 6);
    assert_eq!(k.owners.len(), 14);
    assert!(k.owners[7..].iter().all(|o| (3..6).contains(&o[0])));
    assert_eq!(out.parts, [2, 3, 1]);
}

#[test]
fn plans_it_cannot_follow_are_refused_with_the_reason() {
    let sizes = (16, 1024, 48, 1024, 48);
    let refused = |sizes, precision, plan: AttentionPlan, tiles| {
        RowsGrid::planned(sizes, (precision, false), &plan, tiles).unwrap_err()
    };
    assert!(
        refused(sizes, Precision::F16, plan([8, 86], 128, false), 1472)
            .contains("does not have the op's 16 batch-heads")
    );
    assert!(
        refused(sizes, Precision::F16, plan([16, 86], 120, false), 1472)
            .contains("key_block = 120")
    );
    assert!(
        refused(sizes, Precision::F16, plan([16, 86], 128, false), 1024).contains("tiles = 1376")
    );
    // 9 queries in 4 blocks of 3 leave the last empty.
    assert!(refused(
        (1, 9, 16, 16, 16),
        Precision::F16,
        plan([1, 4], 16, false),
        8
    )
    .contains("leave the last of 9 queries empty"));
    assert!(refused(
        sizes,
        Precision::F8E4M3,
        AttentionPlan {
            precision: Precision::F8E4M3,
            ..plan([16, 86], 128, false)
        },
        1472
    )
    .contains("not lowered in the rows formulation"));
    assert!(
        refused(sizes, Precision::F32, plan([16, 86], 128, false), 1472)
            .contains("the plan computes in F16")
    );
    assert!(
        refused(sizes, Precision::F16, plan([16, 86], 128, true), 1472)
            .contains("the plan is causal, the op is not")
    );
    let mut flash = plan([16, 86], 128, false);
    flash.schedule = AttentionSchedule::Flash { key_block: 128 };
    assert!(
        refused(sizes, Precision::F16, flash, 1472).contains("not an attention_flash_rows plan")
    );
}

/// The busiest tile's cycles are, per key block, both GEMM calls (full rows), the softmax and
/// the merge (first, middle, last), and the conversion, as the cost model prices each.
#[test]
fn compute_cycles_add_up_the_busiest_tiles_calls() {
    let target = Target::c600();
    let grid = RowsGrid::planned(
        (16, 1024, 72, 1024, 72),
        (Precision::F16, false),
        &plan([16, 86], 96, false),
        1472,
    )
    .unwrap();
    let gemm = |spec: &KernelSpec| cost::kernel_call_cycles(spec, &[0, 0, 0, 0], &target).unwrap();
    let mut want = 0;
    for (block, keys) in [96; 10].into_iter().chain([64]).enumerate() {
        want += gemm(&grid.scores(keys))
            + cost::kernel_cycles(&grid.update(12, keys), &target)
            + gemm(&grid.products(keys))
            + cost::kernel_cycles(&grid.merge(12, block), &target);
    }
    // The first block's merge copies, the last divides.
    let merge = |block| cost::kernel_cycles(&grid.merge(12, block), &target);
    assert!(merge(0) < merge(1) && merge(1) < merge(10));
    want += cost::kernel_cycles(&grid.finish(12), &target);
    assert_eq!(grid.compute_cycles(&target), want);
    // The score GEMM of a full block: 6 column groups of the padded 80-long K.
    assert_eq!(
        grid.scores(96),
        KernelSpec::Gemm {
            input: Precision::F16,
            partials: Precision::F16,
            weights: MemoryClass::Standard,
            k: 80,
            c: 96,
            rows: vec![12, 4],
            accumulate: false
        }
    );
}

/// Unpinned, the planner is offered on each tile count the most query blocks of non-empty
/// rows (the measured batch-8 grid on 1,472 tiles) and the rows doubled, each with keys in
/// blocks of 64, 128 and 256; nothing when the batch-heads outnumber the tiles.
#[test]
fn offered_plans_are_the_widest_grids_and_three_key_blocks() {
    let plans = offered((128, 1024, 72, 1024, 72), (Precision::F16, false), &[1472]);
    let shapes: Vec<(Vec<u32>, u32)> = plans
        .iter()
        .map(|plan| match plan.schedule {
            AttentionSchedule::FlashRows { key_block } => (plan.grid.clone(), key_block),
            _ => unreachable!("only rows plans"),
        })
        .collect();
    let want: Vec<(Vec<u32>, u32)> = [11, 6]
        .into_iter()
        .flat_map(|blocks| [64, 128, 256].map(|kb| (vec![128, blocks], kb)))
        .collect();
    assert_eq!(shapes, want);
    assert!(plans
        .iter()
        .all(|plan| plan.tiles == plan.grid[0] * plan.grid[1]));
    // Every offered plan is one the strategy builds.
    for plan in &plans {
        RowsGrid::planned(
            (128, 1024, 72, 1024, 72),
            (Precision::F16, false),
            plan,
            1472,
        )
        .unwrap();
    }
    // Fewer keys than the smallest block: one block of them all, padded.
    let short = offered((2, 40, 16, 37, 16), (Precision::F32, true), &[8, 16]);
    assert!(short
        .iter()
        .all(|plan| plan.schedule == AttentionSchedule::FlashRows { key_block: 48 }));
    for plan in &short {
        let grid = RowsGrid::planned((2, 40, 16, 37, 16), (Precision::F32, true), plan, 16);
        assert_eq!(grid.unwrap().key_blocks(), vec![(0, 37)]);
    }
    assert!(offered((2000, 16, 16, 16, 16), (Precision::F16, false), &[1472]).is_empty());
}
